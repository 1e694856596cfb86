"""The house keeps its plan: the engine at the front, subsystems in packages, imports one way.

``autodiff/__init__.py`` draws the map. These tests read every module's
imports (those inside functions too) from its source, so a new import that
breaks the plan fails here, whatever order the modules happen to load in.
"""

import ast
import importlib
import pathlib
import types

import pytest

import autodiff as ad

ROOT = pathlib.Path(ad.__file__).parent
SUBSYSTEMS = ("tracing", "compiler", "saved_model", "models")


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
    for path in (ROOT / "models").glob("*.py"):
        bad = {name for name in _imports(path)
               for sub in ("tracing", "compiler", "saved_model") if _reaches(name, f"autodiff.{sub}")}
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
