"""The course script (``tapeschool-course``) without a hub: names, files, and a whole cycle.

- ``assignment_name`` takes what a teacher types; a course directory holds the
  teacher editions unchanged and nbgrader reads its settings as the course's;
- the hub configuration turns the instructors' tools off for students and on for
  the formgrader service, names students by their hub account, and says what the
  Zero to JupyterHub values in binder/ say;
- progress lines count and estimate what is left;
- the commands a teacher runs take lesson 1 from release to returned feedback for
  three students who fetch and submit through nbgrader's exchange: scores exact
  (the prediction worth nothing, each exercise a point), each student's fetched
  feedback page carrying their own score; a command that
  cannot go on says why in one message and exits with status 2;
- on disk, a student who is another OS account (the hub's users are OS accounts
  with LocalProcessSpawner or SystemdSpawner) cannot list the exchange's
  submissions or released feedback, so cannot find another student's files,
  while the released lesson is open to them (run as ``nobody``: needs root or
  passwordless sudo, which .ci/run has);
- the course package never imports autodiff or widgets, and every module says what
  it owns; ``grade`` with nothing collected says so and exits non-zero.
"""

import io
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_assignment_name_takes_what_a_teacher_types():
    from tapeschool.course.layout import assignment_name, notebook_name

    assert {assignment_name(x) for x in (3, "3", "03", "lesson03", "lesson3",
                                         "03_why_a_gradient_is_none",
                                         "03_why_a_gradient_is_none.ipynb")} == {"lesson03"}
    assert notebook_name("14") == "14_debugging_real_models.ipynb"
    for wrong in ("99", "lesson", "0", "3a"):
        with pytest.raises(ValueError, match="no lesson"):
            assignment_name(wrong)


def test_init_course_copies_teacher_editions_and_nbgrader_reads_its_settings(
        tmp_path, nbgrader_installed):
    from tapeschool.course.layout import init_course, open_course

    init_course(tmp_path / "course", course_id="ad101", exchange=tmp_path / "exchange",
                assignments=["01", "3"])
    course = open_course(tmp_path / "course")
    assert (course.course_id, course.exchange) == ("ad101", tmp_path / "exchange")
    for name, lesson in (("lesson01", "01_gradients_and_tapes"),
                         ("lesson03", "03_why_a_gradient_is_none")):
        copy = course.root / "source" / name / f"{lesson}.ipynb"
        assert copy.read_bytes() == (ROOT / "notebooks" / f"{lesson}.ipynb").read_bytes()
    config = course.config()
    assert config.CourseDirectory.root == str(course.root)
    assert config.TagRemovePreprocessor.remove_cell_tags == ["teacher"]   # the lessons' own
    assert config.ClearSolutions.code_stub == {"python": ""}
    assert "check_owner" not in config.ExchangeCollect                    # a real hub's default
    assert oct(course.exchange.stat().st_mode & 0o7777) == oct(0o1777)
    with pytest.raises(FileNotFoundError, match="tapeschool-course init"):
        open_course(tmp_path)


def test_progress_lines_count_and_estimate_what_is_left():
    from tapeschool.course.progress import Progress

    ticks = iter([0.0, 0.0, 4.0, 4.0, 4.0, 6.0, 6.0, 6.0, 9.0, 9.0])
    out = io.StringIO()
    progress = Progress("autograde", 3, out=out, clock=lambda: next(ticks))
    with progress.item("ada") as line:
        line.note = "6/6 points"
    with pytest.raises(RuntimeError):
        with progress.item("ben"):
            raise RuntimeError("the kernel died")
    with progress.item("cy") as line:
        line.note = "1/6 points"
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["autograde", "[1/3]", "ada", "6/6", "points", "4.0", "s",
                                "about", "8", "s", "left"]
    assert lines[1].split() == ["autograde", "[2/3]", "ben", "failed:", "RuntimeError", "2.0",
                                "s", "about", "3", "s", "left"]
    assert lines[2].split() == ["autograde", "[3/3]", "cy", "1/6", "points", "3.0", "s",
                                "done", "in", "9", "s"]


def test_hub_config_gives_students_the_assignment_list_and_the_formgrader_to_instructors(
        tmp_path, monkeypatch):
    from traitlets.config.loader import PyFileConfigLoader

    from tapeschool.course.hub_config import HubPlan, student_nbgrader_config, write_hub_config
    from tapeschool.course.layout import Course, DEFAULT_EXCHANGE, ServiceExchange

    course = Course(tmp_path / "grader" / "tapeschool", "tapeschool", DEFAULT_EXCHANGE)
    with pytest.raises(ValueError, match="must lie inside"):
        HubPlan(course, ["ada"], ["ines"], grader_home=tmp_path / "elsewhere")
    path = write_hub_config(tmp_path / "hub", HubPlan(course, ["ada", "ben"], ["ines"],
                                                      grader_user="grader-tapeschool"))
    hub = PyFileConfigLoader(path.name, str(path.parent)).load_config()
    assert hub.Authenticator.allowed_users == {"ada", "ben", "ines"}
    assert hub.JupyterHub.load_groups == {"formgrade-tapeschool": {"users": ["ines"]},
                                          "nbgrader-tapeschool": {"users": ["ada", "ben"]}}
    [role] = hub.JupyterHub.load_roles
    assert role["groups"] == ["formgrade-tapeschool"]
    assert "access:services!service=tapeschool" in role["scopes"]
    [service] = hub.JupyterHub.services
    assert (service["name"], service["user"], service["cwd"]) == (
        "tapeschool", "grader-tapeschool", str(tmp_path / "grader"))
    assert service["environment"]["JUPYTER_CONFIG_PATH"] == str(tmp_path / "hub" / "grader-config")
    assert hub.Spawner.environment == {"JUPYTER_CONFIG_PATH": str(tmp_path / "hub" /
                                                                  "student-config")}

    def settings(role_dir):
        folder = tmp_path / "hub" / role_dir
        server = json.loads((folder / "jupyter_server_config.json").read_text())
        lab = json.loads((folder / "labconfig" / "page_config.json").read_text())
        return server["ServerApp"]["jpserver_extensions"], lab["disabledExtensions"]

    extensions, disabled = settings("student-config")
    assert extensions == {"nbgrader.server_extensions.formgrader": False,
                          "nbgrader.server_extensions.course_list": False}
    assert disabled["@jupyter/nbgrader:formgrader"] is True
    assert "@jupyter/nbgrader:assignment-list" not in disabled          # students keep it
    extensions, disabled = settings("grader-config")
    assert all(extensions.values()) and not any(disabled.values())

    monkeypatch.setenv("JUPYTERHUB_USER", "ada")
    student_dir = tmp_path / "hub" / "student-config"
    student = PyFileConfigLoader("nbgrader_config.py", str(student_dir)).load_config()
    assert (student.CourseDirectory.student_id, student.CourseDirectory.course_id,
            student.Exchange.root) == ("ada", "tapeschool", str(DEFAULT_EXCHANGE))

    assert student.ExchangeFactory.submit == "tapeschool.course.exchange.CheckedSubmit"

    # binder/z2jh-config.yaml mounts the file of an ngshare course as
    # /etc/jupyter/nbgrader_config.py, and no exchange folder: every pod is one OS user
    values = yaml.safe_load((ROOT / "binder" / "z2jh-config.yaml").read_text())
    mounted = values["singleuser"]["extraFiles"]["nbgrader-config"]
    assert mounted["mountPath"] == "/etc/jupyter/nbgrader_config.py"
    service = Course(course.root, "tapeschool", ServiceExchange("http://proxy-public/services/ngshare"))
    assert mounted["stringData"] == student_nbgrader_config(service)
    assert "storage" not in values["singleuser"]


def test_hub_config_of_an_ngshare_course_runs_the_service_with_the_roster(tmp_path, monkeypatch):
    from traitlets.config.loader import PyFileConfigLoader

    from tapeschool.course.hub_config import HubPlan, write_hub_config
    from tapeschool.course.layout import Course, ServiceExchange

    url = "http://127.0.0.1:9998/services/ngshare"
    course = Course(tmp_path / "grader" / "tapeschool", "tapeschool", ServiceExchange(url))
    for wrong in (["tapeschool"], ["ngshare"], ["../x"], [".ada"]):
        with pytest.raises(ValueError, match="no hub user may be named|not a plain name"):
            HubPlan(course, wrong, ["ines"])
    path = write_hub_config(tmp_path / "hub", HubPlan(course, ["ada", "ben"], ["ines"],
                                                      ngshare_storage=tmp_path / "ngshare"))
    hub = PyFileConfigLoader(path.name, str(path.parent)).load_config()
    [formgrader, ngshare] = hub.JupyterHub.services
    assert (ngshare["name"], ngshare["url"]) == ("ngshare", "http://127.0.0.1:9998")
    command = ngshare["command"]
    assert command[1:3] == ["-m", "tapeschool.course.ngshare"]
    options = dict(zip(command[3::2], command[4::2]))
    assert options == {"--course": "tapeschool", "--instructors": "ines,tapeschool",
                       "--students": "ada,ben", "--storage": str(tmp_path / "ngshare")}
    monkeypatch.setenv("JUPYTERHUB_USER", "ada")
    student = PyFileConfigLoader("nbgrader_config.py",
                                 str(tmp_path / "hub" / "student-config")).load_config()
    assert student.Exchange._ngshare_url == url
    assert student.ExchangeFactory.submit == "tapeschool.course.ngshare.NgshareSubmit"
    assert "student_id" not in student.CourseDirectory       # the hub says who submits
    with pytest.raises(ValueError, match="must be http://<host>:<port>/services/ngshare"):
        write_hub_config(tmp_path / "other", HubPlan(
            Course(course.root, "tapeschool", ServiceExchange("http://ngshare:8080/")), [], []))


def _course(*args, cwd, status=0):
    done = subprocess.run([sys.executable, "-m", "tapeschool.course", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == status, done.stdout + done.stderr
    return done.stdout if status == 0 else done.stderr


def _as_another_os_user(*command):
    """Runs ``command`` as the OS account ``nobody``: a student who is not the one who made
    the files (as root, or through passwordless sudo)."""
    nobody = pwd.getpwnam("nobody")
    if os.geteuid() == 0:
        return subprocess.run(command, user=nobody.pw_uid, group=nobody.pw_gid, extra_groups=[],
                              capture_output=True, text=True, timeout=60)
    return subprocess.run(["sudo", "-n", "-u", "nobody", *command], capture_output=True,
                          text=True, timeout=60)


def _can_switch_user():
    if os.geteuid() == 0:
        return True
    return shutil.which("sudo") is not None and subprocess.run(
        ["sudo", "-n", "true"], capture_output=True).returncode == 0


@pytest.fixture
def open_tmp():
    """A temporary folder every OS account may enter (pytest's own is its owner's only)."""
    path = Path(tempfile.mkdtemp(prefix="course-workflow-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow
def test_the_course_commands_take_a_lesson_from_release_to_returned_feedback(
        open_tmp, nbgrader_installed, prerequisite):
    from tapeschool.course.student import Student, answers_for, fill_in

    tmp_path = open_tmp
    course_dir, exchange = tmp_path / "tapeschool", tmp_path / "exchange"
    _course("init", str(course_dir), "--exchange", str(exchange), "--lessons", "01",
            "--one-os-user", cwd=ROOT)
    assert "released lesson01" in _course("release", "1", cwd=course_dir)
    # Lesson 1's answers: 1 is section 3's prediction (worth nothing), 2 to 6 exercises 1 to 5
    # (a point each). ben gets the prediction and exercise 2 right, cy every exercise.
    right = {"ada": {1, 2, 3, 4, 5, 6}, "ben": {1, 3}, "cy": {2, 3, 4, 5, 6}}
    score = {"ada": 5.0, "ben": 1.0, "cy": 5.0}
    students = {name: Student(name, tmp_path / "home" / name, "tapeschool", exchange)
                for name in right}
    for name, student in students.items():
        notebook = student.fetch("lesson01") / "01_gradients_and_tapes.ipynb"
        fill_in(notebook, answers_for("lesson01", right[name]))
        student.submit("lesson01")

    assert "collected lesson01: 3 submission(s)" in _course("collect", "01", cwd=course_dir)
    graded = _course("grade", "lesson01", "--course-dir", str(course_dir), cwd=tmp_path)
    lines = [line.split() for line in graded.splitlines()]
    assert [line[:4] for line in lines if line[0] == "autograde"] == [
        ["autograde", "[1/3]", "ada", "5/5"], ["autograde", "[2/3]", "ben", "1/5"],
        ["autograde", "[3/3]", "cy", "5/5"]]
    assert [line[:3] for line in lines if line[0] == "feedback"][-1] == ["feedback", "[3/3]", "cy"]
    assert "returned feedback on lesson01: 3 page(s)" in _course("return", "01", cwd=course_dir)
    assert _course("scores", "01", cwd=course_dir).split() == [
        "student", "score", "ada", "5/5", "ben", "1/5", "cy", "5/5", "3", "submission(s)"]

    for name, student in students.items():
        [page] = student.fetch_feedback("lesson01")
        assert f"(Score: {score[name]:.1f} / 5.0)" in page.read_text(encoding="utf-8")
    # a late resubmission is collected and graded again; the others are not
    fill_in(students["cy"].home / "lesson01" / "01_gradients_and_tapes.ipynb",
            answers_for("lesson01", {1, 2}))
    students["cy"].submit("lesson01")
    _course("collect", "01", cwd=course_dir)
    regraded = _course("grade", "01", cwd=course_dir)
    assert [line.split()[:4] for line in regraded.splitlines() if line.startswith("autograde")] == [
        ["autograde", "[1/1]", "cy", "1/5"]]

    # Another OS account finds nothing of the others' work in the exchange: the inbound
    # (submissions) and feedback folders cannot be listed, and every name in them holds a
    # random part or a hash of the submission's secret; the released lesson it may read.
    prerequisite(_can_switch_user(), "running a command as another OS account needs root or "
                                     "passwordless sudo")
    course = exchange / "tapeschool"
    for private in ("inbound", "feedback"):
        assert len(os.listdir(course / private)) >= 3          # the teacher's side sees them
        listing = _as_another_os_user("ls", str(course / private))
        assert listing.returncode != 0 and "Permission denied" in listing.stderr, listing
    released = _as_another_os_user("ls", str(course / "outbound" / "lesson01"))
    assert released.returncode == 0 and "01_gradients_and_tapes.ipynb" in released.stdout


def test_a_command_that_cannot_go_on_says_why_and_exits_2(tmp_path, nbgrader_installed):
    course_dir = tmp_path / "tapeschool"
    err = _course("scores", "01", cwd=tmp_path, status=2)
    assert err.startswith("tapeschool-course scores: ") and "tapeschool-course init" in err
    assert "Traceback" not in err
    _course("init", str(course_dir), "--exchange", str(tmp_path / "exchange"), "--lessons", "01",
            cwd=ROOT)
    err = _course("release", "03", cwd=course_dir, status=2)
    assert "lesson03 is not in the course" in err and "--lessons lesson03" in err
    err = _course("collect", "01", cwd=course_dir, status=2)
    assert "release it first: tapeschool-course release lesson01" in err
    assert "no lesson '99'" in _course("release", "99", cwd=course_dir, status=2)

    # grading with nothing collected says so, and exits non-zero
    err = _course("grade", "01", cwd=course_dir, status=2)
    assert "nothing to grade: no submission of lesson01 was collected" in err


def test_the_course_package_never_imports_the_engine_or_the_widgets():
    """tapeschool/course/ drives nbgrader and a hub; the lessons' kernels import autodiff and widgets."""
    import ast

    for path in sorted((ROOT / "tapeschool" / "course").glob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names.add(node.module.split(".")[0])
        assert not names & {"autodiff", "widgets"}, (path.name, names & {"autodiff", "widgets"})
        assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), path.name
