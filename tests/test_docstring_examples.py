"""Every ``>>>`` example in a docstring of autodiff/ or widgets/ runs and prints what it shows.

A student pastes these examples into a notebook, so each docstring is one test
case and starts from the same blank notebook: the globals ``ad`` (autodiff) and
``np`` (numpy) and nothing else, not even the module's own names. An example
builds everything it uses. Output is compared with ELLIPSIS and
NORMALIZE_WHITESPACE under NumPy's default print options (set here, so a test
that changed them cannot leak into the output); examples that draw random
numbers seed their own generator. Each case runs in an empty temporary folder,
so an example that saves a file leaves nothing behind, and with the tape's default
for keeping small values (conftest turns it off for the engine's own tests).

Each case runs on the ``numpy`` and the ``strict`` backend (the engine suite's
conftest parametrizes only tests/autodiff and tests/widgets, so the backends are
named here through the same ``engine_backend`` fixture): an example that works
only because NumPy converts implicitly would mislead a student on a GPU.

A module that cannot be imported because an optional extra is missing (numba,
h5py, ...) becomes one case that skips with the missing package's name, or fails
under ``CI=true`` where every extra is installed. A module of this project that
fails to import for any other reason fails its case.

``KNOWN_FAILING`` lists the docstrings whose examples are not fixed yet, each with
why; they run as strict xfails, so fixing one makes its case fail until it is
taken off the list.
"""

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import autodiff
from autodiff import registry, tape, user_ops

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

# Docstrings whose examples still fail: name -> (the backends it fails on, why).
KNOWN_FAILING = {
    'autodiff.models.activations.relu': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.callbacks.monitoring': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.initializers': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.initializers.Orthogonal': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.layers': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.layers.activation': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.layers.base.refuse': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.losses.classes.BinaryCrossentropy': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.losses.classes.CategoricalCrossentropy': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.losses.classes.Huber': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.losses.classes.Loss': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.losses.classes.MeanAbsoluteError': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.losses.classes.MeanSquaredError': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.losses.classes.SparseCategoricalCrossentropy': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.model': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.model.Model': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.ops': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.adam.Adam': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.adam.AdamW': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.adam.Lion': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.atomic': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.base': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.flat_step': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.gradient_descent.Adagrad': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.gradient_descent.RMSprop': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.gradient_descent.SGD': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.schedules': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.schedules.InverseTimeDecay': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.schedules.raw_rate': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.sparse': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.optimizers.step_scalars': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.regularizers.L1L2': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.saving.atomic': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.saving.legacy_h5': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.models.saving.model_io': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.saved_model': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.saved_model.checked_json': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.saved_model.safe_files': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.saved_model.save': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.saved_model.save.current_version': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.saved_model.upgrade.to_current': (('numpy', 'strict'), 'example not fixed yet'),
    'autodiff.tracing.signature': (('numpy', 'strict'), 'autodiff/tracing/ is being split by someone else; fix after'),
    'widgets': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.derivative_plot.DerivativeExplorer': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.derivative_plot.derivatives': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.derivative_plot.plot_derivatives': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.explain.history': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.explain.history.record_history': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.explain.none_gradient': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.explain.none_gradient.explain_each': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.explain.none_gradient.explain_none_gradient': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.explain.tape_sweeps': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.health.fit_callback': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.health.outliers': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.health.plot.plot_recorder': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.health.recorder': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.health.recorder.TrainingRecorder': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.health.recorder.TrainingRecorder.callback': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.health.recorder.TrainingRecorder.plot': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.health.recorder.TrainingRecorder.record': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.health.recorder.TrainingRecorder.series': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.health.rows': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.health.rows.group_health': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.health.triage': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.data.frame_rows': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.data.frames.grads_at': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.data.looks': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.data.looks.float_previews': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.data.nodes': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.data.scopes': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.data.scopes.debug_marks': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.data.sentences.rule_text': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.data.statistics': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.data.statistics.histogram': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.data.statistics.many_stats': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.data.statistics.value_stats': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.drawing.png': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.drawing.svg': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.layout.bands': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.layout.graph_layout': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.layout.graph_layout.graph_layout': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.layout.layers.layer_order': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.layout.layers.layered_layout': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.layout.placement': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.layout.scope_tree': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.layout.scope_tree.reps': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.page.html_export': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.page.html_export.describe': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.page.html_export.export_html': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.page.html_export.page_model': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.page.tape_player': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.replay': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.player.replay.replay': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.plots.derivative_plot.DerivativeExplorer': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.plots.derivative_plot.derivatives': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.plots.derivative_plot.plot_derivatives': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.plots.jacobian_view.batch_jacobian_patches': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.plots.jacobian_view.flatten_jacobian': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.plots.jacobian_view.hessian_image': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.plots.jacobian_view.jacobian_image': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.tape_names': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.tape_names._shown': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.tape_names.expand_names': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.tape_names.module_paths': (('numpy', 'strict'), 'example not fixed yet'),
    'widgets.tape_player': (('numpy', 'strict'), 'example not fixed yet'),
}


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
        for test in finder.find(module, module_name, globs={}):
            if test.examples and test.name not in tests:
                tests[test.name] = test
    return tests, missing


DOCTESTS, MISSING_EXTRAS = _collect()


def _cases():
    for name in sorted(DOCTESTS):
        backends, why = KNOWN_FAILING.get(name, ((), ""))
        for backend in BACKENDS:
            marks = pytest.mark.xfail(reason=why, strict=True) if backend in backends else ()
            yield pytest.param(name, backend, marks=marks, id=f"{name}-{backend}")


def test_the_examples_were_found():
    """A walk that found nothing would make every other case vacuous."""
    assert len(DOCTESTS) > 300
    assert {"autodiff.tape.GradientTape.jacobian", "widgets.player.replay.replay"} <= set(DOCTESTS)
    assert not set(KNOWN_FAILING) - set(DOCTESTS), "KNOWN_FAILING names a docstring that is gone"
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


@pytest.mark.parametrize("name, engine_backend", list(_cases()), indirect=["engine_backend"])
def test_docstring_example(name, engine_backend, forget_new_ops, tmp_path, monkeypatch):
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
    assert result.failed == 0, "".join(report)
