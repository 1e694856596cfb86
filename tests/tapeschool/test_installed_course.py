"""``tapeschool-course`` installed from a wheel works from any folder, and its lessons stay hidden.

A teacher who runs ``pip install "tapeschool[teacher]"`` has no clone: the wheel
carries the teacher editions in ``tapeschool/lessons/`` (setup.py), the
command finds them there, and the grading sandbox lays an empty folder over
them (they hold the solutions; the whole Python installation is visible, read-only,
inside the sandbox).
"""

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(tmp / "dist"), str(ROOT)],
                   check=True, capture_output=True)
    [wheel] = (tmp / "dist").glob("tapeschool-*.whl")
    env_dir = tmp / "env"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", str(wheel)], check=True, capture_output=True)
    return env_dir, tmp


def _run(env_dir, *args, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TAPESCHOOL_LESSONS")}
    return subprocess.run([str(env_dir / "bin" / args[0]), *args[1:]], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_the_installed_command_makes_a_course_from_any_folder(installed):
    env_dir, tmp = installed
    elsewhere = tmp / "somewhere"
    elsewhere.mkdir()
    where = _run(env_dir, "python", "-c", "import tapeschool.course.layout as l; "
                 "print(l.NOTEBOOKS); print(l.__file__)", cwd=elsewhere)
    notebooks, module = where.stdout.split()
    assert notebooks.endswith("tapeschool/lessons") and str(env_dir) in module, where
    done = _run(env_dir, "tapeschool-course", "init", "course", "--lessons", "01",
                "--exchange", str(tmp / "exchange"), "--one-os-user", cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert (elsewhere / "course" / "source" / "lesson01" / "01_gradients_and_tapes.ipynb").is_file()
    assert "tapeschool-course" in _run(env_dir, "tapeschool-course", "--help", cwd=elsewhere).stdout


@pytest.mark.slow
def test_the_sandbox_hides_the_lessons_a_wheel_carries(installed, sandbox_machine):
    env_dir, tmp = installed
    probe = ("from tapeschool.course.sandbox import Sandbox, Limits\n"
             "import subprocess, tapeschool.course.layout as l\n"
             "with Sandbox(0, Limits()) as box:\n"
             "    box.give_to_sandbox()\n"
             "    code = 'import os, sys; print(sorted(os.listdir(sys.argv[1])))'\n"
             "    done = subprocess.run(box.command(['-c', code, str(l.PACKAGED_LESSONS)]),\n"
             "                          capture_output=True, text=True)\n"
             "    print(len(list(l.PACKAGED_LESSONS.glob('*.ipynb'))), done.stdout.strip())\n")
    shown = _run(env_dir, "python", "-c", probe, cwd=tmp)
    outside, inside = shown.stdout.split(maxsplit=1)
    assert int(outside) == 16 and inside.strip() == "[]", shown
