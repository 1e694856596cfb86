"""Every ``>>>`` example in a docstring of autodiff/ or widgets/ runs and prints what it shows.

A student pastes these examples into a notebook, so each docstring is one test
case and starts from the same blank notebook: the globals ``ad`` (autodiff) and
``np`` (numpy) and nothing else, not even the module's own names. An example
builds everything it uses. Output is compared with ELLIPSIS and
NORMALIZE_WHITESPACE under NumPy's default print options (set here, so a test
that changed them cannot leak into the output); examples that draw random
numbers seed their own generator. Each case runs in an empty temporary folder,
so an example that saves a file leaves nothing behind, and with the tape's default
for keeping small values (conftest turns it off for the engine's own tests). Keras
names start over (``dense``, not ``dense_7``), and op types an example declares are
forgotten afterwards, as in a fresh kernel.

Each case runs on the ``numpy`` and the ``strict`` backend (the engine suite's
conftest parametrizes only tests/autodiff and tests/widgets, so the backends are
named here through the same ``engine_backend`` fixture): an example that works
only because NumPy converts implicitly would mislead a student on a GPU. The few
examples about NumPy's own arrays (``NUMPY_ONLY``, each with why) run on numpy only.

A module that cannot be imported because an optional extra is missing (numba,
h5py, ...) becomes one case that skips with the missing package's name, or fails
under ``CI=true`` where every extra is installed; so does an example that fails
only with ``ModuleNotFoundError`` for a package outside this project (``.keras``
files need h5py). A module of this project that fails to import for any other
reason fails its case.

``KNOWN_FAILING`` lists the docstrings whose examples are not fixed yet, each with
why; they run as strict xfails, so fixing one makes its case fail until it is
taken off the list.
"""

import doctest
import importlib
import pkgutil
import re

import numpy as np
import pytest

import autodiff
from autodiff import registry, tape, user_ops
from autodiff.models.layers import base as layer_base

PACKAGES = ("autodiff", "widgets")
BACKENDS = ("numpy", "strict")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# NumPy's defaults, written out so that the examples' output never depends on
# what ran before them.
PRINT_OPTIONS = dict(precision=8, threshold=1000, edgeitems=3, linewidth=75,
                     suppress=False, nanstr="nan", infstr="inf", sign="-",
                     floatmode="maxprec", legacy=False)

# What a notebook gets: conftest's session fixture later makes tapes keep even tiny
# values as placeholders, which changes what ``ad.debugging.tape_memory`` counts.
KEEP_VALUES_UP_TO_BYTES = tape.KEEP_VALUES_UP_TO_BYTES

# Examples about the NumPy backend's own arrays (views, ndarray reprs): they run on
# ``numpy`` only, and no strict case is made for them.
NUMPY_ONLY = {
    "autodiff.models.optimizers.flat_step": "shows ndarray views (.base) of one flat array",
    "autodiff.models.optimizers.step_scalars": "shows a host NumPy 0-d array",
}

# Docstrings whose examples still fail: name -> (the backends it fails on, why).
KNOWN_FAILING = {}


def _module_names():
    names = []
    for package in PACKAGES:
        names.append(package)
        path = importlib.import_module(package).__path__
        names.extend(info.name for info in pkgutil.walk_packages(path, package + "."))
    return names


def _own(name):
    return name.split(".")[0] in PACKAGES


def _collect():
    """(doctests with examples, {module: the missing optional package})."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests, missing = {}, {}
    for module_name in _module_names():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name is None or _own(error.name):
                raise
            missing[module_name] = error.name
            continue
        # The module's own name: widgets.derivative_plot is widgets.plots.derivative_plot.
        for test in finder.find(module, module.__name__, globs={}):
            if test.examples and test.name not in tests:
                tests[test.name] = test
    return tests, missing


DOCTESTS, MISSING_EXTRAS = _collect()


def _cases():
    for name in sorted(DOCTESTS):
        backends, why = KNOWN_FAILING.get(name, ((), ""))
        for backend in BACKENDS:
            if backend != "numpy" and name in NUMPY_ONLY:
                continue
            marks = pytest.mark.xfail(reason=why, strict=True) if backend in backends else ()
            yield pytest.param(name, backend, marks=marks, id=f"{name}-{backend}")


def test_the_examples_were_found():
    """A walk that found nothing would make every other case vacuous."""
    assert len(DOCTESTS) > 300
    assert {"autodiff.tape.GradientTape.jacobian", "widgets.player.replay.replay"} <= set(DOCTESTS)
    assert not set(KNOWN_FAILING) - set(DOCTESTS), "KNOWN_FAILING names a docstring that is gone"
    assert not set(NUMPY_ONLY) - set(DOCTESTS), "NUMPY_ONLY names a docstring that is gone"
    assert all(set(b) <= set(BACKENDS) for b, _ in KNOWN_FAILING.values())


@pytest.mark.parametrize("module_name", sorted(MISSING_EXTRAS) or ["-"])
def test_module_imports(module_name, prerequisite):
    if module_name == "-":
        return
    prerequisite(False, f"{module_name} needs the optional package "
                        f"{MISSING_EXTRAS[module_name]!r}, which is not installed; "
                        "its examples did not run")


@pytest.fixture
def forget_new_ops():
    """Examples that declare an op (``ad.primitive``, ``RegisterGradient``) run once per
    backend, and an op type can be declared once per process: forget what they added."""
    before = set(registry.REGISTRY) | set(user_ops._PENDING)
    yield
    for op_type in (set(registry.REGISTRY) | set(user_ops._PENDING)) - before:
        user_ops._forget(op_type)


@pytest.fixture
def fresh_layer_names():
    """Keras names are unique per program run (``dense``, ``dense_1``, ...); an example shows
    what a fresh notebook prints, so each starts its counters over, and the counters of
    the test session come back afterwards."""
    saved = dict(layer_base._name_counters)
    layer_base._name_counters.clear()
    yield
    layer_base._name_counters.clear()
    layer_base._name_counters.update(saved)


@pytest.mark.parametrize("name, engine_backend", list(_cases()), indirect=["engine_backend"])
def test_docstring_example(name, engine_backend, forget_new_ops, fresh_layer_names, tmp_path,
                           monkeypatch, prerequisite):
    monkeypatch.chdir(tmp_path)   # an example that saves a file writes it here
    monkeypatch.setattr(tape, "KEEP_VALUES_UP_TO_BYTES", KEEP_VALUES_UP_TO_BYTES)
    found = DOCTESTS[name]
    # A fresh copy: the runner clears a test's globals when it is done.
    test = doctest.DocTest(found.examples, {"ad": autodiff, "np": np}, found.name,
                           found.filename, found.lineno, found.docstring)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = []
    with np.printoptions(**PRINT_OPTIONS):
        result = runner.run(test, out=report.append)
    text = "".join(report)
    missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", text)
    if result.failed and missing and not _own(missing.group(1)):
        prerequisite(False, f"{name}'s example needs the optional package "
                            f"{missing.group(1)!r}, which is not installed")
    assert result.failed == 0, text
