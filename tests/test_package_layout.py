"""The house keeps its plan: the engine at the front, subsystems in packages, imports one way.

``autodiff/__init__.py`` and ``widgets/__init__.py`` draw the maps. These tests
read every module's imports (those inside functions too) from its source, so a
new import that breaks the plan fails here, whatever order the modules happen
to load in.
"""

import ast
import importlib
import pathlib
import subprocess
import sys
import types

import pytest

import autodiff as ad

ROOT = pathlib.Path(ad.__file__).parent
SUBSYSTEMS = ("tracing", "control_flow", "autograph", "compiler", "saved_model", "models")


def _module_name(path):
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path):
    """Every module ``path`` imports, as absolute names (``from . import x`` gives ``pkg.x``)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _engine_files():
    """The engine: the modules at the front of ``autodiff/`` (not its ``__init__``) and ``ops/``."""
    front = [p for p in ROOT.glob("*.py") if p.name != "__init__.py"]
    return sorted(front + list((ROOT / "ops").glob("*.py")))


def _reaches(imported, package):
    return imported == package or imported.startswith(package + ".")


@pytest.mark.parametrize("path", _engine_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_an_engine_module_imports_no_subsystem(path):
    bad = sorted(name for name in _imports(path)
                 for sub in SUBSYSTEMS if _reaches(name, f"autodiff.{sub}"))
    assert not bad, f"{path.relative_to(ROOT)} (engine) imports the subsystem module(s) {bad}"


def test_the_layout_check_reads_relative_and_late_imports(tmp_path):
    # The check above must see `from ..tracing import graph` two levels down and an
    # import inside a function; a fake module placed in the tree shows it does.
    fake = ROOT / "ops" / "_layout_probe.py"
    fake.write_text("def f():\n    from ..tracing import graph\n    from ..models.module import Module\n")
    try:
        found = _imports(fake)
    finally:
        fake.unlink()
    assert {"autodiff.tracing", "autodiff.tracing.graph", "autodiff.models.module"} <= found


@pytest.mark.parametrize("path", sorted(ROOT.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_autodiff_module_imports_widgets_or_a_test_oracle(path):
    bad = sorted(name for name in _imports(path)
                 if name.split(".")[0] in ("widgets", "tensorflow", "keras", "torch", "jax"))
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_the_compiler_never_imports_the_traced_functions_that_call_it():
    # It reads the graph it compiles (tracing/graph.py), nothing else of tracing/.
    for path in (ROOT / "compiler").glob("*.py"):
        bad = {name for name in _imports(path) if _reaches(name, "autodiff.tracing")
               and name != "autodiff.tracing" and not _reaches(name, "autodiff.tracing.graph")}
        assert not bad, (path.name, bad)


def test_models_import_the_engine_only():
    # training/ alone may run a step through ad.function (fit's compiled step)
    for path in (ROOT / "models").rglob("*.py"):
        allowed = ("tracing",) if path.parent.name == "training" else ()
        bad = {name for name in _imports(path)
               for sub in ("tracing", "compiler", "saved_model") if sub not in allowed
               and _reaches(name, f"autodiff.{sub}")}
        assert not bad, (path.name, bad)


@pytest.mark.parametrize("package", SUBSYSTEMS)
def test_each_subsystem_says_what_it_owns_and_what_it_may_import(package):
    doc = importlib.import_module(f"autodiff.{package}").__doc__
    assert doc and "May import" in doc, f"autodiff/{package}/__init__.py needs a docstring saying so"
    for path in (ROOT / package).glob("*.py"):
        if path.name != "__init__.py":
            assert path.name in doc, f"autodiff/{package}/__init__.py does not name {path.name}"


def test_the_front_door_lists_every_package_and_the_main_engine_files():
    doc = ad.__doc__
    for name in ("tape.py", "backward.py", "registry.py", "ops/", *(f"{s}/" for s in SUBSYSTEMS)):
        assert name in doc, name
    folders = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").exists())
    assert folders == sorted(["ops", *SUBSYSTEMS])


NAMESPACES = [ad, ad.autodiff, ad.debugging, ad.errors, ad.functional, ad.layers, ad.linalg, ad.math, ad.nest,
              ad.nn, ad.optimizers, ad.optimizers.schedules, ad.random, ad.saved_model, ad.testing,
              ad.keras, ad.losses, ad.metrics]


@pytest.mark.parametrize("namespace", NAMESPACES, ids=lambda m: m.__name__)
def test_a_public_namespace_shows_its_public_names_only(namespace):
    shown = [name for name in dir(namespace) if not name.startswith("_")]
    assert shown == sorted(namespace.__all__)
    for name in namespace.__all__:
        value = getattr(namespace, name)
        if isinstance(value, types.ModuleType):   # only a public namespace (ad.optimizers.schedules)
            assert value.__name__.startswith("autodiff.") and hasattr(value, "__all__"), name


def test_dir_of_layers_lists_the_layers_not_the_imports():
    assert {"Dense", "BatchNormalization", "Conv2D"} <= set(dir(ad.layers))
    assert not {"itertools", "inspect", "creation", "elementwise"} & set(dir(ad.layers))


def test_the_top_level_lists_namespaces_but_not_engine_modules():
    assert {"layers", "optimizers", "saved_model", "nn", "math"} <= set(ad.__all__)
    assert not {"tape", "backward", "ops", "tracing", "compiler", "models"} & set(ad.__all__)
    assert ad.tape.GradientTape is ad.GradientTape        # still there for readers of the source


def test_public_paths_still_resolve():
    import autodiff.layers
    import autodiff.optimizers
    from autodiff.layers import Dense
    from autodiff.optimizers import Adam
    from autodiff.saved_model import SaveOptions, load, save

    assert autodiff.layers is ad.layers and Dense is ad.layers.Dense
    assert autodiff.optimizers is ad.optimizers and Adam is ad.optimizers.Adam
    assert (save, load, SaveOptions) == (ad.saved_model.save, ad.saved_model.load,
                                         ad.saved_model.SaveOptions)
    assert callable(ad.function) and ad.function.__module__ == "autodiff.tracing.function"
    assert ad.Module is ad.models.Module and ad.TensorSpec is ad.tracing.TensorSpec
    from autodiff.keras import Sequential
    from autodiff.keras.layers import Dense as KerasDense
    assert Sequential is ad.keras.Sequential and KerasDense is Dense
    layer = autodiff.layers.Dense(2)
    assert isinstance(layer, ad.Module) and layer(ad.ones([1, 3])).shape == (1, 2)



def _library_modules():
    import pkgutil
    for package in ("autodiff", "widgets"):
        root = importlib.import_module(package)
        yield package
        yield from (m.name for m in pkgutil.walk_packages(root.__path__, package + "."))


@pytest.mark.parametrize("module", sorted(_library_modules()))
def test_every_name_a_module_exports_exists(module):
    """``from module import *`` reads ``__all__``: a listed name that is not there (one left
    behind when its code moved) makes that import fail with an AttributeError."""
    loaded = importlib.import_module(module)
    missing = [name for name in getattr(loaded, "__all__", ()) if not hasattr(loaded, name)]
    assert not missing, f"{module}.__all__ lists names it does not define: {missing}"


# ---- widgets/: one package per view, imports one way -----------------------------------

WIDGETS = ROOT.parent / "widgets"
# A package -> the sibling packages it may import. Every one may import the modules
# at the front of widgets/ (tape_names.py); none imports widgets/__init__'s map.
WIDGET_PACKAGES = {"player": {"health", "explain"}, "health": set(), "explain": set(),
                   "plots": set()}
# The player's parts in reading order; each imports only the parts before it.
PLAYER_PARTS = ("data", "layout", "replay", "drawing", "page")


def _widget_files():
    return sorted(WIDGETS.rglob("*.py"))


def _widget_id(path):
    return str(path.relative_to(WIDGETS))


def _view_package(path):
    """``player``, ``health``... for a file in a package; None at the front of widgets/."""
    parts = path.relative_to(WIDGETS).parts
    return parts[0] if len(parts) > 1 else None


def _player_part(path):
    return path.relative_to(WIDGETS / "player").parts[0].removesuffix(".py")


@pytest.mark.parametrize("path", [p for p in _widget_files() if _view_package(p)], ids=_widget_id)
def test_a_widgets_package_imports_only_the_siblings_it_may(path):
    package = _view_package(path)
    barred = set(WIDGET_PACKAGES) - {package} - WIDGET_PACKAGES[package]
    bad = sorted(name for name in _imports(path) for other in barred
                 if _reaches(name, f"widgets.{other}"))
    assert not bad, f"widgets/{_widget_id(path)} ({package}/) imports {bad}"


@pytest.mark.parametrize("path", [p for p in (WIDGETS / "player").rglob("*.py")
                                  if _player_part(p) in PLAYER_PARTS], ids=_widget_id)
def test_a_player_part_imports_only_the_parts_before_it(path):
    # data/ imports no layout, drawing or page code; drawing/ no page; ...
    part = _player_part(path)
    later = PLAYER_PARTS[PLAYER_PARTS.index(part) + 1:]
    bad = sorted(name for name in _imports(path) for other in later
                 if _reaches(name, f"widgets.player.{other}"))
    assert not bad, f"widgets/{_widget_id(path)} ({part}) imports {bad}, which come after it"


def test_the_players_layout_knows_nothing_of_tapes_or_other_views():
    for path in (WIDGETS / "player" / "layout").glob("*.py"):
        bad = {name for name in _imports(path) if name.split(".")[0] in ("autodiff", "widgets")
               and not _reaches(name, "widgets.player.layout")}
        assert not bad, (path.name, bad)


@pytest.mark.parametrize("path", _widget_files(), ids=_widget_id)
def test_no_widgets_module_imports_the_course_a_test_oracle_or_an_old_path(path):
    # An old path (``widgets.svg``) names a moved module; used inside widgets/ it
    # would hide which package a module really reaches into.
    import widgets
    old_paths = {*widgets._MOVED, "tape_player", "derivative_plot"}
    names = _imports(path)
    bad = sorted(name for name in names
                 if name.split(".")[0] in ("course", "tensorflow", "keras", "torch", "jax")
                 or _reaches(name, "tapeschool.course")
                 or (name.split(".")[0] == "widgets" and len(name.split(".")) > 1
                     and name.split(".")[1] in old_paths))
    assert not bad, f"widgets/{_widget_id(path)} imports {bad}"


def _packages_under(folder):
    return sorted(p.parent for p in folder.rglob("__init__.py") if p.parent != folder)


@pytest.mark.parametrize("package", _packages_under(WIDGETS), ids=_widget_id)
def test_each_widgets_package_names_its_files_and_what_it_may_import(package):
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    where = f"widgets/{_widget_id(package)}/__init__.py"
    assert any(line.startswith("May import") for line in doc.splitlines()), \
        f"{where} needs a line saying what it may import"
    for child in package.iterdir():
        if child.suffix == ".py" and child.name != "__init__.py":
            assert child.name in doc, f"{where} does not name {child.name}"
        elif child.is_dir() and child.name != "__pycache__":
            assert f"{child.name}/" in doc, f"{where} does not name {child.name}/"


def test_the_widgets_map_names_every_package_and_few_modules_stay_at_the_front():
    import widgets

    folders = sorted(p.name for p in WIDGETS.iterdir() if (p / "__init__.py").exists())
    assert folders == sorted(WIDGET_PACKAGES)
    front = sorted(p.name for p in WIDGETS.glob("*.py"))
    assert len(front) <= 12, front
    for name in [f"{f}/" for f in folders] + [n for n in front if n != "__init__.py"]:
        assert name in widgets.__doc__, name


def test_old_widget_paths_name_the_moved_modules():
    import widgets

    for old, new in widgets._MOVED.items():
        module = importlib.import_module(f"widgets.{new}")
        assert importlib.import_module(f"widgets.{old}") is module
        if old != "replay":   # ``widgets.replay`` is the function
            assert getattr(widgets, old) is module, old
    assert callable(widgets.replay) and widgets.replay.__module__ == "widgets.player.replay"
    from widgets.explain import REASONS, Explanation, explain_none_gradient, record_history
    from widgets.explain_history import record_history as recorder_too
    from widgets.health import group_health
    from widgets.replay import Replay, gc_paused, replay

    assert recorder_too is record_history and (replay, Replay) == (widgets.replay, widgets.Replay)
    assert explain_none_gradient is widgets.explain_none_gradient
    assert group_health is widgets.group_health and gc_paused.__module__ == "widgets.player.replay"
    assert Explanation.__module__ == "widgets.explain.explanation" and "stop_gradient" in REASONS


@pytest.mark.parametrize("old, new, needs", [
    ("tape_player", "widgets.player.page.tape_player", "anywidget"),
    ("derivative_plot", "widgets.plots.derivative_plot", "ipywidgets")])
def test_the_old_paths_of_the_views_that_need_a_front_end_name_their_modules(old, new, needs):
    pytest.importorskip(needs)
    assert importlib.import_module(f"widgets.{old}") is importlib.import_module(new)


def test_import_widgets_needs_no_front_end_and_no_matplotlib():
    code = ("import sys\n"
            "blocked = ('ipywidgets', 'anywidget', 'traitlets', 'matplotlib')\n"
            "sys.modules.update(dict.fromkeys(blocked))\n"
            "import widgets\n"
            "from widgets.svg import replay_svg\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in blocked"
            " and sys.modules[m] is not None))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT.parent, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
