"""Privacy on a hub whose users are OS accounts: nbgrader's exchange folder, its modes checked.

The hub is JupyterHub on 127.0.0.1 (``tapeschool/course/localhub.py``) as on a machine
where each student is an OS account (JupyterHub's LocalProcessSpawner, The Littlest
JupyterHub): ada and ben are OS accounts made for this test, their servers run as them
(``hubspawners.OSUserSpawner``), the exchange is nbgrader's folder with the course's
exchange classes (``tapeschool/course/exchange.py``), and the teacher is this process.

1. The teacher releases lesson 1. Each student, with their own hub token, calls their own
   server's nbgrader endpoints (what the Assignments panel's buttons call): fetch, write
   answers into the notebook (the contents API), submit. ada marks her answers
   ``written by ada``; ben his.
2. The teacher collects (both, each entry owned by its student), autogrades, writes and
   returns feedback (``Teacher``'s steps); each student fetches feedback through their
   server and gets one page: their own (it carries their mark, not the other's).
3. ben's kernel, started in his JupyterLab by the page in Chromium, tries to reach ada's
   work: list the exchange's inbound and feedback folders, read ada's submission and its
   secret by their exact paths (which the test tells him), list ada's home and read her
   fetched feedback, read the course directory (gradebook, sources). The OS refuses every
   one (PermissionError); he still reads his own submission's cache. ben's browser gets
   403 from the hub for ada's server, files and feedback.
4. The modes behind it: inbound is set-group-id, sticky and write-only for students
   (``-wx``), a submission ``rwxrwx---``/``rw-r-----`` with the grader's group, feedback
   not listable, homes ``rwx------``.
"""

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LESSON, NOTEBOOK = "lesson01", "01_gradients_and_tapes.ipynb"
STUDENTS = {"ada": {1, 2, 3, 4, 5, 6}, "ben": {1, 3}}   # which answers each gets right

# Run in ben's kernel: each attempt on another's work, and what it got.
PROBE = """
import json, os
def attempt(how, path):
    try:
        got = sorted(os.listdir(path)) if how == "list" else open(path, "rb").read()[:200].decode("latin-1")
        return {"got": got}
    except OSError as error:
        return {"error": type(error).__name__}
print(json.dumps({name: attempt(how, path) for name, (how, path) in json.loads(%r).items()}))
"""


@pytest.fixture(scope="module")
def hub(hub_prerequisites, chromium):
    """A hub of OS accounts with lesson 1 released; yields ``(hub, teacher)``."""
    from tapeschool.course.layout import init_course
    from tapeschool.course.localhub import LocalHub
    from tapeschool.course.teacher import Teacher

    hub_prerequisites("os-users")
    work = Path(tempfile.mkdtemp(prefix="hub-os-users-"))
    work.chmod(0o755)     # the students' accounts reach their homes and the exchange through it
    course = init_course(work / "grader" / "tapeschool", exchange=work / "exchange",
                         assignments=[LESSON])
    teacher = Teacher(course)
    try:
        with LocalHub(work, course, list(STUDENTS), ["ines"], deployment="os-users") as running:
            teacher.release(LESSON)
            yield running, teacher
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _server(hub, name, token):
    """Starts ``name``'s server; returns a function calling it with their token."""
    import time

    import requests

    hub.api("POST", f"/users/{name}/server")
    for _ in range(120):
        user = hub.api("GET", f"/users/{name}")[1]
        if user["server"] and not user["pending"]:
            break
        time.sleep(1)
    session = requests.Session()
    session.headers["Authorization"] = f"token {token}"
    session.trust_env = False

    def call(method, path, **kwargs):
        response = session.request(method, f"{hub.url}/user/{name}{path}", timeout=120, **kwargs)
        assert response.status_code == 200, (name, path, response.status_code, response.text[:300])
        return response.json()
    return call


@pytest.fixture(scope="module")
def returned(hub):
    """Both students submit through their servers; the teacher grades and returns feedback;
    each student fetches it. Yields ``{name: their server's caller}``."""
    import nbformat

    from tapeschool.course.student import answers_for, fill_answers

    running, teacher = hub
    servers = {name: _server(running, name, running.token(name)) for name in STUDENTS}
    form = {"course_id": teacher.course.course_id, "assignment_id": LESSON}
    for name, call in servers.items():
        assert call("POST", "/assignments/fetch", data=form)["success"]
        path = f"/api/contents/{LESSON}/{NOTEBOOK}"
        notebook = nbformat.from_dict(call("GET", path)["content"])
        answers = answers_for(LESSON, STUDENTS[name])
        first = next(iter(answers))
        answers[first] = answers[first].rstrip() + f"  # written by {name}"
        fill_answers(notebook, answers)
        call("PUT", path, json={"type": "notebook", "content": notebook})
        assert call("POST", "/assignments/submit", data=form)["success"]
    assert teacher.collect(LESSON) == sorted(STUDENTS)
    assert sorted(teacher.autograde(LESSON)) == sorted(STUDENTS)
    teacher.generate_feedback(LESSON)
    assert teacher.return_feedback(LESSON) == len(STUDENTS)
    for call in servers.values():
        assert call("POST", "/assignments/fetch_feedback", data=form)["success"]
    return servers


def test_each_student_fetches_only_their_own_feedback(hub, returned):
    running, _ = hub
    for name, call in returned.items():
        folder = call("GET", f"/api/contents/{LESSON}/feedback")["content"]
        assert len(folder) == 1, folder                          # one submission, one page
        page = call("GET", f"/api/contents/{folder[0]['path']}/{NOTEBOOK[:-6]}.html")["content"]
        other = next(n for n in STUDENTS if n != name)
        assert f"written by {name}" in page and f"written by {other}" not in page


def test_the_exchange_and_homes_have_the_modes_that_keep_students_apart(hub, returned):
    import grp

    running, teacher = hub
    exchange = teacher.course.exchange / teacher.course.course_id
    inbound = exchange / "inbound"
    assert stat.S_IMODE(inbound.stat().st_mode) == 0o3733          # setgid, sticky, -wx for all
    assert stat.S_IMODE((exchange / "feedback").stat().st_mode) & 0o077 == 0o011
    grader_group = grp.getgrgid(inbound.stat().st_gid).gr_name
    for entry in inbound.iterdir():
        owner = entry.owner()
        assert entry.name.startswith(f"{owner}+{LESSON}+") and owner in STUDENTS
        assert stat.S_IMODE(entry.stat().st_mode) == 0o770 and entry.group() == grader_group
        for file in entry.iterdir():
            assert stat.S_IMODE(file.stat().st_mode) == 0o640, file
            assert file.group() == grader_group, file
    for name in STUDENTS:
        assert stat.S_IMODE(running.home(name).stat().st_mode) == 0o700
        assert running.home(name).owner() == name
    assert stat.S_IMODE(running.grader_home.stat().st_mode) == 0o700


def test_a_students_kernel_and_browser_get_nothing_of_another_students_work(
        hub, returned, chromium):
    from tapeschool.course.browser import HubUser

    running, teacher = hub
    exchange = teacher.course.exchange / teacher.course.course_id
    [ada_entry] = [p for p in (exchange / "inbound").iterdir() if p.name.startswith("ada+")]
    [ada_page] = (running.home("ada") / LESSON / "feedback").glob("*/*.html")
    [ben_cache] = (running.home("ben") / ".local/share/jupyter/nbgrader_cache/tapeschool").iterdir()
    attempts = {
        "list inbound": ("list", exchange / "inbound"),
        "list feedback": ("list", exchange / "feedback"),
        "ada's submission": ("read", ada_entry / NOTEBOOK),
        "ada's submission secret": ("read", ada_entry / "submission_secret.txt"),
        "list ada's submission": ("list", ada_entry),
        "list ada's home": ("list", running.home("ada")),
        "ada's fetched feedback": ("read", ada_page),
        "the gradebook": ("read", teacher.course.gradebook),
        "the course's sources": ("list", teacher.course.root / "source"),
        "ben's own cache": ("read", ben_cache / "submission_secret.txt"),
    }
    ben = HubUser("ben", chromium, running)
    try:
        ben.log_in()
        ben.wait_for_lab()
        code = PROBE % json.dumps({k: [how, str(path)] for k, (how, path) in attempts.items()})
        got = json.loads(ben.run_in_kernel(code).strip().splitlines()[-1])
        for what in attempts:
            expected = "got" if what.startswith("ben's own") else "error"
            assert list(got[what]) == [expected], (what, got[what])
        assert {got[w]["error"] for w in attempts if "error" in got[w]} == {"PermissionError"}
        assert ben.get("/user/ada/lab")[0] == 403
        assert ben.get(f"/user/ada/api/contents/{LESSON}/feedback")[0] == 403
        assert ben.get(f"/user/ada/files/{LESSON}/{NOTEBOOK}")[0] == 403
        assert ben.get(f"/user/ben/api/contents/{LESSON}")[0] == 200       # his own: yes
    finally:
        ben.close()
