"""The environment a hub builds from binder/ is the one CI tests, and holds what a course needs.

repo2docker (and so BinderHub, and a Zero to JupyterHub image built with it)
reads ``binder/runtime.txt``, ``binder/requirements.txt`` and runs
``binder/postBuild``; an existing hub's environment takes the same two steps
(notebooks/README.md). ``.ci/run`` installs ``binder/requirements.txt`` before the
test suite, so under ``CI=true`` every pin must be the installed version (on a
laptop a different version only skips that check). The pins must cover the
``lessons`` and ``teacher`` extras within their ranges, plus JupyterHub; the
Python of ``runtime.txt`` must be one ``requires-python`` admits; ``postBuild``
must parse, install tapeschool, trust both editions of every lesson and turn off
exactly the instructors' tools that the hub configuration turns back on for the
formgrader (each one a plugin or module nbgrader really has).
"""

import importlib.util
import re
import shlex
import subprocess
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"


def _pins():
    pins = {}
    for line in (BINDER / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, pinned = line.partition("==")
            assert pinned, f"binder/requirements.txt: {line!r} is not pinned with =="
            pins[_normal(name)] = pinned
    return pins


def _normal(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _extra(name, extras):
    """The requirements of an extra, its own references to tapeschool[...] followed."""
    found = []
    for requirement in extras[name]:
        inner = re.fullmatch(r"tapeschool\[(\w+)\]", requirement)
        found += _extra(inner.group(1), extras) if inner else [requirement]
    return found


def test_every_pin_is_the_version_installed_here(prerequisite):
    pins = _pins()
    differ = {}
    for name, pinned in pins.items():
        try:
            installed = version(name)
        except PackageNotFoundError:
            installed = None
        if installed != pinned:
            differ[name] = (pinned, installed)
    prerequisite(not differ, f"installed versions differ from binder/requirements.txt "
                             f"(pinned, installed): {differ}; .ci/run installs the pins")
    assert len(pins) >= 15


def test_the_pins_cover_the_lessons_and_the_course_within_their_ranges():
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    pins = _pins()
    needed = [Requirement(r) for r in project["dependencies"] + _extra("teacher", extras)
              + _extra("hub", extras)]
    for requirement in needed:
        if requirement.name == "psutil":            # the hub test's, not the servers'
            continue
        pinned = pins.get(_normal(requirement.name))
        assert pinned, f"binder/requirements.txt does not pin {requirement.name}"
        assert requirement.specifier.contains(pinned), (requirement, pinned)
    assert "jupyterhub" in pins and "ipykernel" in pins

    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.\d+", runtime), runtime
    from packaging.specifiers import SpecifierSet
    assert SpecifierSet(project["requires-python"]).contains(runtime.removeprefix("python-") + ".0")


def test_ci_runs_the_python_of_runtime_txt(prerequisite):
    runtime = (BINDER / "runtime.txt").read_text().strip().removeprefix("python-")
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    prerequisite(here == runtime, f"this is Python {here}, binder/runtime.txt says {runtime}")


def test_post_build_installs_tapeschool_trusts_the_lessons_and_hides_instructor_tools(
        nbgrader_installed):
    from tapeschool.course.hub_config import INSTRUCTOR_LAB_PLUGINS, INSTRUCTOR_SERVER_EXTENSIONS

    script = BINDER / "postBuild"
    assert script.stat().st_mode & 0o111, "postBuild must be executable (repo2docker runs it)"
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    text = script.read_text().replace("\\\n", " ")
    commands = [shlex.split(line) for line in text.splitlines()
                if line.strip() and not line.lstrip().startswith("#")][1:]   # after `set`
    assert ["python", "-m", "pip", "install", "--no-deps", "--no-cache-dir", "."] in commands

    trust = next(c for c in commands if c[:4] == ["python", "-m", "jupyter", "trust"])
    trusted = sorted(p for pattern in trust[4:] for p in ROOT.glob(pattern))
    lessons = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert trusted == sorted(lessons + [ROOT / "notebooks" / "student" / p.name for p in lessons])

    lab = next(c for c in commands if c[3:5] == ["labextension", "disable"])
    assert "--level=sys_prefix" in lab
    plugins = [arg for arg in lab[5:] if not arg.startswith("--")]
    assert sorted(plugins) == sorted(INSTRUCTOR_LAB_PLUGINS)
    nbgrader_lab = Path(sys.prefix, "share", "jupyter", "labextensions", "@jupyter", "nbgrader")
    bundle = "".join(p.read_text(errors="replace") for p in nbgrader_lab.glob("static/*.js"))
    for plugin in plugins:                                # plugins nbgrader's bundle defines
        assert f'"{plugin}"' in bundle, plugin

    server = next(c for c in commands if c[3:6] == ["server", "extension", "disable"])
    modules = [arg for arg in server[6:] if not arg.startswith("--")]
    assert "--sys-prefix" in server and sorted(modules) == sorted(INSTRUCTOR_SERVER_EXTENSIONS)
    assert all(importlib.util.find_spec(m) for m in modules)
    assert "nbgrader.server_extensions.assignment_list" not in modules


def test_the_readme_gives_the_install_line_for_an_existing_hub():
    guide = (ROOT / "notebooks" / "README.md").read_text()
    section = guide.split("## Teaching a course on JupyterHub")[1]
    assert "python -m pip install -r binder/requirements.txt && bash binder/postBuild" in section
    assert "tapeschool-course init" in section and "tapeschool-course hub-config" in section


def test_lesson_16s_option_pins_the_versions_its_printouts_come_from():
    # Issue 36: a hub option whose PyTorch and JAX run lesson 16's code, CPU builds, at the
    # versions tests/compare checks the lesson against (the compare extra) and the lesson's
    # own `lesson16` extra names.
    lines = [line.split("#")[0].strip()
             for line in (BINDER / "requirements-lesson16.txt").read_text().splitlines()]
    lines = [line for line in lines if line]
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines
    pins = dict(line.split("==") for line in lines if "==" in line)
    assert pins["torch"] == "2.13.0+cpu" and pins["jax[cpu]"] == pins["jaxlib"] == "0.10.2"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for extra in ("compare", "lesson16"):
        assert "torch==2.13.0" in extras[extra] and "jax[cpu]==0.10.2" in extras[extra]
    assert "tapeschool[lessons]" in extras["lesson16"]
    lesson = (ROOT / "notebooks" / "src" / "16_pytorch_and_jax.py").read_text()
    assert "PyTorch 2.13" in lesson and "JAX 0.10" in lesson
