"""A lesson on a real JupyterHub whose servers all run as one OS user: worked, graded, private.

The hub is JupyterHub itself on 127.0.0.1 (``tapeschool/course/localhub.py``) as Zero to
JupyterHub runs one: every user's server runs as the same unprivileged OS account, each in
a container of its own (``hubspawners.PodSpawner``: its own home, a read-only view of the
machine, the hub's folder hidden), and the exchange is the hub's ngshare service
(``tapeschool/course/ngshare.py``), as ``tapeschool-course hub-config`` writes it for a
course made with ``init --exchange ngshare``; the formgrader is a hub service open to the
group ``formgrade-tapeschool`` only; JupyterHub's test-only ``DummyAuthenticator`` and
configurable-http-proxy from npm.

1. The teacher releases lesson 1 (``Teacher.release``: nbgrader's generate_assignment,
   and ngshare-exchange's release as the instructor ines, by her hub token).
2. Three students log in through the hub's login page in Chromium, each in a
   browser context of their own; their servers start at once. Each opens
   *Nbgrader > Assignment List*, presses *Fetch*, opens the notebook, answers
   (ada types her first answer with the keyboard; the rest are written into the
   notebook's model, as typing does), runs all cells from the Run menu, saves, and
   presses *Submit*. Lesson 1 asks six questions: a prediction in section 3 and
   exercises 1 to 5. ada answers all six right, ben the prediction and
   exercises 1 and 2, cy only exercise 5. The DOM must show the lesson's tape player as a live widget
   (not the static fallback), **Correct!** under each right answer, **Not yet**
   under each wrong one, and no error; ``hub_<student>_lesson01.png`` is saved in
   the artifacts folder.
3. The teacher collects, autogrades, generates feedback and releases it
   (``Teacher``, nbgrader's API). Scores are exact: the prediction is worth
   nothing (its check is not an nbgrader test), each exercise one point: ada 5/5,
   ben 2/5, cy 1/5, each exercise's grade as answered.
4. Each student presses *Fetch Feedback* and opens the page through the hub:
   their own score is on it (``hub_<student>_feedback.png``).

What is proven about one student reaching another's work:

- By the hub: ada's browser session cannot open ben's running server (``/user/ben/lab``
  ends in the hub's 403), cannot call his server's API (his files, his feedback: 403),
  cannot read his account through the hub's API (404, "no access"), and cannot open the
  formgrader (403), which the instructor can. ada's own server will not serve a path
  outside her home (``..``: 404).
- On disk, from ada's kernel (started in her JupyterLab by the page): there is no exchange
  folder, and none of ben's home, the course directory, the hub's files or ngshare's
  storage is there to list; her process tree holds only her own server.
- Through the exchange service, from ada's kernel with her server's own token and from her
  browser with her hub session: every ngshare address of ben's submissions and feedback,
  and the class's list of submissions, answers with a refusal and no file; her own list of
  submissions she gets. The teacher still collects every submission, and each student's
  *Fetch Feedback* brings their own page only.
"""

import importlib.util
import json
import os
import re
import urllib.parse
from pathlib import Path
from types import SimpleNamespace

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LESSON, NOTEBOOK = "lesson01", "01_gradients_and_tapes.ipynb"
# Which exercises each student answers right (counting from 1); the others wrong.
STUDENTS = {"ada": {1, 2, 3, 4, 5, 6}, "ben": {1, 2, 3}, "cy": {6}}
INSTRUCTOR = "ines"
LAB_SETTINGS = {"@jupyterlab/apputils-extension:notification":
                {"fetchNews": "false", "checkForUpdates": False},
                # every cell in the DOM, so that the test can read and click any of them
                "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"}}
KERNEL_TIMEOUT = 90_000   # ms: a server and a kernel starting while two more do, on 2 cores

# Writes answers into the notebook's model, as typing into each cell does.
FILL_IN = """(answers) => {
  const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
  let filled = 0;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    const meta = cell.getMetadata("nbgrader");
    if (meta && meta.solution && answers[meta.grade_id] !== undefined) {
      const lines = cell.sharedModel.getSource().trimEnd().split("\\n");
      lines[lines.length - 1] = answers[meta.grade_id].trimEnd();   // the blank
      cell.sharedModel.setSource(lines.join("\\n"));
      filled++;
    }
  }
  return filled;
}"""
# Run All has finished: every code cell ran, or one failed and Run All stopped there.
ALL_RAN = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.content.model.cells;
  let pending = false, failed = false;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== "code") continue;
    if (cell.executionState === "running") return false;
    pending = pending || cell.executionCount === null;
    failed = failed || cell.outputs.toJSON().some(o => o.output_type === "error");
  }
  return panel.sessionContext.session.kernel.status === "idle" && (!pending || failed);
}"""
# Each code cell's nbgrader id (or null), its outputs' texts and whether one is an error.
OUTPUTS = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
  const found = [];
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== "code") continue;
    const meta = cell.getMetadata("nbgrader");
    const outputs = cell.outputs.toJSON();
    found.push({id: meta ? meta.grade_id : null, index: i,
                text: outputs.map(o => [].concat(o.text || "").join("")).join(""),
                error: outputs.some(o => o.output_type === "error")});
  }
  return found;
}"""
SAVED = "() => !window.jupyterapp.shell.currentWidget.context.model.dirty"


@pytest.fixture(scope="module")
def hub(tmp_path_factory, hub_prerequisites, chromium):
    """The course's hub on loopback, with lesson 1 released; yields ``(hub, teacher)``.
    (``chromium`` first: a missing browser stops the test before a hub starts.) The
    teacher's steps reach ngshare as the instructor, by her token."""
    from tapeschool.course.layout import init_course
    from tapeschool.course.localhub import LocalHub, ngshare_url
    from tapeschool.course.teacher import Teacher

    hub_prerequisites("pods", ngshare=True)
    work = tmp_path_factory.mktemp("hub")
    course = init_course(work / "grader" / "tapeschool", assignments=[LESSON],
                         ngshare_url=ngshare_url())
    teacher = Teacher(course)
    with LocalHub(work, course, list(STUDENTS), [INSTRUCTOR], spawn_timeout=180,
                  lab_settings=LAB_SETTINGS, deployment="pods") as running:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("JUPYTERHUB_API_TOKEN", running.token(INSTRUCTOR))
            teacher.release(LESSON)
            yield running, teacher


def _work_the_lesson(student, answers, artifacts_dir):
    """Fetch, answer, run all, save, submit: as a student does it in JupyterLab.

    Returns:
        What the student saw: ``outputs`` (``OUTPUTS``), ``player_frame`` (the live tape
        player's frame) and ``static_players`` (players left in their static form).
    """
    page = student.page
    student.wait_for_lab()
    student.fetch_and_open(LESSON, NOTEBOOK, timeout_ms=KERNEL_TIMEOUT)

    notebook = page.locator(".jp-NotebookPanel:visible")
    if student.name == "ada":   # her first answer with the keyboard, as a student types it
        first = next(iter(answers))
        index = [c["index"] for c in page.evaluate(OUTPUTS) if c["id"] == first][0]
        cell = notebook.locator(".jp-Cell").nth(index)
        cell.locator(".cm-content").click()
        page.keyboard.press("Control+End")
        page.keyboard.press("Shift+Home")
        page.keyboard.type(answers.pop(first).strip())
        page.keyboard.press("Escape")
        assert cell.locator(".cm-content").inner_text().rstrip().endswith("my_prediction = None")
    assert page.evaluate(FILL_IN, answers) == len(answers)

    student.menu("Run", "Run All Cells")
    page.wait_for_function(ALL_RAN, timeout=KERNEL_TIMEOUT * 2)
    outputs = page.evaluate(OUTPUTS)
    errors = [c for c in outputs if c["error"]]
    assert not errors, f"a cell of the lesson raised in {student.name}'s kernel: {errors}"
    player = notebook.locator(".jp-OutputArea-output .tp-root:not(.tp-static .tp-root)").first
    player.wait_for(timeout=30_000)
    seen = SimpleNamespace(outputs=outputs, player_frame=player.get_attribute("data-frame"),
                           static_players=notebook.locator(".tp-static").count())
    page.keyboard.press("Control+s")
    page.wait_for_function(SAVED, timeout=30_000)
    player.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / f"hub_{student.name}_{LESSON}.png"))

    panel = student.assignments_panel()
    panel.locator("#fetched_assignments_list > .list_item", has_text=LESSON).locator(
        "button", has_text="Submit").click()
    panel.locator("#submitted_assignments_list .nested_list_item",   # its time, as listed
                  has_text=re.compile(r"\d{4}-\d\d-\d\d \d\d:")).first.wait_for(timeout=30_000)
    return seen


@pytest.fixture(scope="module")
def classroom(hub, chromium, artifacts_dir):
    """Every student logged in, their lesson worked and submitted; yields ``{name: HubUser}``
    and ``{name: what they saw}`` (``_work_the_lesson``)."""
    from tapeschool.course.browser import HubUser
    from tapeschool.course.student import answers_for

    running, _ = hub
    students = {name: HubUser(name, chromium, running) for name in STUDENTS}
    seen = {}
    try:
        for student in students.values():      # their servers start side by side
            student.log_in()
        for name, student in students.items():
            try:
                seen[name] = _work_the_lesson(student, answers_for(LESSON, STUDENTS[name]),
                                              artifacts_dir)
            except Exception:
                student.page.screenshot(path=str(artifacts_dir / f"hub_{name}_failed.png"),
                                        full_page=True)
                log = running.log_path.read_text(errors="replace")[-3000:]
                raise AssertionError(f"{name}'s work in JupyterLab failed; hub log:\n{log}")
        yield students, seen
    finally:
        for student in students.values():
            student.close()


@pytest.fixture(scope="module")
def graded(hub, classroom):
    """The teacher's side: collect, autograde, feedback, release it; yields the scores."""
    _, teacher = hub
    assert teacher.collect(LESSON) == sorted(STUDENTS)
    scores = teacher.autograde(LESSON)
    teacher.generate_feedback(LESSON)
    assert teacher.return_feedback(LESSON) == len(STUDENTS)
    return scores


def test_students_work_the_lesson_in_jupyterlab_with_the_player_and_checks(classroom):
    from tapeschool.course.student import scoring

    students, seen = classroom
    for name, student in students.items():
        assert seen[name].player_frame == "0" and seen[name].static_players == 0, name
        assert not [c for c in seen[name].outputs if c["error"]], name
        check_ids = [check for check, _ in scoring(LESSON).values()]
        checks = [c for c in seen[name].outputs if c["id"] in check_ids]
        assert [c["id"] for c in checks] == check_ids and len(checks) == 6
        for number, check in enumerate(checks, start=1):
            expected = "Correct!" if number in STUDENTS[name] else "Not yet: "
            assert check["text"].startswith(expected), (name, number, check["text"])
        assert student.outside == [], f"{name}'s page tried to leave loopback: {student.outside}"


def test_autograde_scores_the_exercises_and_never_the_prediction(hub, graded):
    from nbgrader.api import Gradebook

    from tapeschool.course.student import scoring

    _, teacher = hub
    assert graded == {"ada": (5.0, 5.0), "ben": (2.0, 5.0), "cy": (1.0, 5.0)}
    worth = list(scoring(LESSON).values())          # (check id, points), answer by answer
    assert worth[0] == (f"{LESSON}-predict-1", 0.0)
    with Gradebook(f"sqlite:///{teacher.course.gradebook}") as gradebook:
        for name, right in STUDENTS.items():
            notebook = gradebook.find_submission(LESSON, name).notebooks[0]
            grades = {g.name: g.score for g in notebook.grades}
            assert grades == {check: points if k in right else 0.0
                              for k, (check, points) in enumerate(worth, start=1)
                              if points}, name


def test_each_student_fetches_their_own_feedback_through_the_hub(classroom, graded,
                                                                 artifacts_dir):
    for name, student in classroom[0].items():
        panel = student.assignments_panel()
        panel.locator("#refresh_assignments_list").click()
        submitted = panel.locator("#submitted_assignments_list > .list_item", has_text=LESSON)
        submitted.locator("button", has_text="Fetch Feedback").click()
        folder = f"/user/{name}/api/contents/{LESSON}/feedback"
        for _ in range(60):                      # nbgrader copies it into her home
            if student.get(folder)[0] == 200:
                break
            student.page.wait_for_timeout(500)
        listing = student.page.request.get(student.hub.url + folder).json()["content"]
        assert len(listing) == 1, listing                # one submission, one timestamp
        page_path = f"{listing[0]['path']}/{NOTEBOOK[:-6]}.html"
        feedback = student.context.new_page()
        feedback.goto(f"{student.hub.url}/user/{name}/files/{urllib.parse.quote(page_path)}")
        score, most = graded[name]
        heading = feedback.locator("h4", has_text="Score:").first.inner_text()
        assert heading == f"{NOTEBOOK[:-6]} (Score: {score:.1f} / {most:.1f})", heading
        feedback.screenshot(path=str(artifacts_dir / f"hub_{name}_feedback.png"))
        feedback.close()


def test_a_student_cannot_reach_another_students_server_or_the_formgrader(hub, classroom,
                                                                        graded):
    running, teacher = hub
    ada, ben = classroom[0]["ada"], classroom[0]["ben"]
    assert running.api("GET", "/users/ben")[1]["server"]         # ben's server is running
    status, url = ada.get("/user/ben/lab")
    assert status == 403 and "/hub/" in url, (status, url)          # the hub's refusal page
    assert ada.get(f"/user/ben/api/contents/{LESSON}")[0] == 403
    assert ada.get(f"/user/ben/api/contents/{LESSON}/feedback")[0] == 403
    assert ada.get(f"/user/ben/files/{LESSON}/{NOTEBOOK}")[0] == 403
    assert ada.get("/hub/api/users/ben")[0] == 404                  # "no access", as unknown
    assert ada.get("/hub/api/user")[0] == 200                       # her own account: yes
    assert ada.get("/user/ada/api/contents/..%2Fben")[0] == 404    # outside her home
    assert ada.get(f"/services/{teacher.course.course_id}/formgrader")[0] == 403
    assert ben.get(f"/user/ben/api/contents/{LESSON}")[0] == 200    # ben himself: yes

    # each submission was filed under its hub user name, which ngshare took from the hub
    submitted = sorted(p.name for p in (teacher.course.root / "submitted").iterdir())
    assert submitted == sorted(STUDENTS)


# Run in ada's kernel: the folders a shared exchange, ben or the hub would leave on disk, her
# process tree, and ngshare's addresses of ben's work with her own server's token.
PROBE = """
import json, os, urllib.error, urllib.parse, urllib.request
places, service = json.loads(%r)
found = {}
for name, path in places.items():
    try:
        found[name] = sorted(os.listdir(path))
    except OSError as error:
        found[name] = type(error).__name__
def command(pid):
    try:
        return open(f"/proc/{pid}/cmdline").read().split("\\0")[0].rsplit("/", 1)[-1]
    except OSError as error:
        return type(error).__name__
found["processes"] = sorted(command(p) for p in os.listdir("/proc") if p.isdigit())
found["service"] = {}
for path in ("/submissions/tapeschool/lesson01/ben", "/submission/tapeschool/lesson01/ben",
             "/feedback/tapeschool/lesson01/ben?timestamp=" + urllib.parse.quote(json.loads(%r)),
             "/submissions/tapeschool/lesson01", "/submissions/tapeschool/lesson01/ada"):
    request = urllib.request.Request(service + path, headers={
        "Authorization": "token " + os.environ["JUPYTERHUB_API_TOKEN"]})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            found["service"][path] = [response.status, response.read().decode()[:300]]
    except urllib.error.HTTPError as error:
        found["service"][path] = [error.code, error.read().decode()[:300]]
    except OSError as error:
        found["service"][path] = [None, repr(error)]
print(json.dumps(found))
"""


def test_a_students_kernel_and_browser_get_nothing_of_another_students_work(
        hub, classroom, graded):
    running, teacher = hub
    ada = classroom[0]["ada"]
    service = teacher.course.exchange.url
    [ben_time] = os.listdir(running.home("ben") / LESSON / "feedback")
    places = {"the default exchange": "/usr/local/share/nbgrader/exchange",
              "the hub's folder": str(running.workdir),
              "ben's home": str(running.home("ben")),
              "the course": str(teacher.course.root),
              "ngshare's storage": str(running.workdir / "ngshare")}
    missing = [name for name, path in places.items() if not Path(path).is_dir()]
    assert missing == ["the default exchange"], missing       # the others are there, outside
    printed = ada.run_in_kernel(PROBE % (json.dumps([places, service]), json.dumps(ben_time)))
    assert printed.startswith("{"), printed
    found = json.loads(printed)
    assert found["the default exchange"] == "FileNotFoundError"
    assert found["the hub's folder"] == ["home", "student-config"]     # hers and the settings
    for place in ("ben's home", "the course", "ngshare's storage"):
        assert found[place] == "FileNotFoundError", (place, found[place])
    assert "chromium" not in found["processes"] and "node" not in found["processes"]
    assert len(found["processes"]) <= 4, found["processes"]          # her server and kernels
    answers = found["service"]
    own = answers.pop("/submissions/tapeschool/lesson01/ada")
    assert own[0] == 200 and json.loads(own[1])["submissions"][0]["student_id"] == "ada"
    for path, (status, body) in answers.items():
        assert status == 403 and json.loads(body)["success"] is False, (path, status, body)
        assert "files" not in body and "content" not in body
    for path in answers:   # the same addresses from her browser, with her hub session
        response = ada.page.request.get(f"{running.url}/services/ngshare{path}")
        assert response.status != 200 or "files" not in response.text(), (path, response.status)
        assert "\"content\"" not in response.text()


def test_the_formgrader_service_opens_for_the_instructor(hub, chromium, graded):
    from tapeschool.course.browser import HubUser

    running, teacher = hub
    instructor = HubUser(INSTRUCTOR, chromium, running)
    try:
        formgrader = f"/services/{teacher.course.course_id}/formgrader"
        instructor.log_in(next_url=formgrader)
        instructor.page.wait_for_url(re.compile(rf".*{formgrader}.*"), timeout=60_000)
        assert instructor.get(formgrader)[0] == 200
        response = instructor.page.request.get(f"{running.url}{formgrader}/api/assignments")
        assert response.status == 200
        assignments = {a["name"]: a for a in response.json()}
        assert assignments[LESSON]["num_submissions"] == len(STUDENTS)
        assert running.api("GET", f"/users/{INSTRUCTOR}")[1]["server"] is None  # none spawned
    finally:
        instructor.close()
