"""Names are checked at submit and at collect; nothing is written outside the course's folders.

nbgrader makes folder names of a student id and a lesson name
(``inbound/{student}+{lesson}+{time}+{random}``, ``submitted/{student}/{lesson}``) and
copies a collected entry through any link in it. With the course's exchange classes
(``tapeschool/course/exchange.py``, set in its ``nbgrader_config.py``):

- a name that is not plain (``..``, ``/``, control characters, empty, a leading dot,
  ``+``) is refused by ``check_plain_name``, by ``assignment_name`` and by the simulated
  ``Student``;
- submit refuses such a student id or lesson before writing anything: the exchange and
  everything around it are unchanged;
- collect refuses each bad inbound entry (not a plain student id, not this lesson, a time
  that does not parse, a link, a folder holding a link, another OS user's entry under a
  student's name), reports it in one line saying which and why, skips it, and collects
  every other student; nothing lands outside ``submitted/``, and no file a link points to
  is read.
"""

import os
import subprocess
from pathlib import Path

import pytest

LESSON, NOTEBOOK = "lesson01", "01_gradients_and_tapes.ipynb"
TIME = "2026-01-05 10:00:00.000000 UTC"
NOT_PLAIN = ["", ".", "..", "../x", "a/b", ".hidden", "-rf", "a+b", "a b", "a*", "tab\tname",
             "new\nline", "nul\x00", "bell\x07", "x" * 101]


def test_a_name_that_is_not_plain_is_refused_with_a_clear_message():
    from tapeschool.course.layout import assignment_name, check_plain_name
    from tapeschool.course.student import Student

    for name in ("ada", "ben_2", "ada.lovelace@uni.edu", "zoë", "sends_garbage", "x" * 100):
        assert check_plain_name(name, "student id") == name
    for name in NOT_PLAIN + [None, 3]:
        with pytest.raises(ValueError, match="is not a plain name"):
            check_plain_name(name, "student id")
    for name in ("../x", "lesson01/..", ".lesson01", "lesson\x0001"):
        with pytest.raises(ValueError, match="the lesson .* is not a plain name"):
            assignment_name(name)
    with pytest.raises(ValueError, match="the student id '../x' is not a plain name"):
        Student("../x", Path("/nonexistent"), "tapeschool", Path("/nonexistent"))


@pytest.fixture(scope="module")
def released(tmp_path_factory, nbgrader_installed):
    """A course with lesson 1 released to a folder exchange, and ada and ben's submissions."""
    from tapeschool.course.layout import init_course
    from tapeschool.course.student import Student
    from tapeschool.course.teacher import Teacher

    work = tmp_path_factory.mktemp("names")
    course = init_course(work / "course", exchange=work / "exchange", assignments=[LESSON],
                         one_os_user=True)
    Teacher(course).release(LESSON)
    for name in ("ada", "ben"):
        student = Student(name, work / "home" / name, course.course_id, course.exchange)
        student.fetch(LESSON)
        student.submit(LESSON)
    return work, course


def _tree(folder):
    return sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*"))


def _submit_as(course, home, student_id, assignment=LESSON):
    """nbgrader's submit through the course's exchange classes, as a student's server runs
    it, with any student id and lesson."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange import ExchangeFactory

    config = course.config()
    config.CourseDirectory.student_id, config.CourseDirectory.assignment_id = student_id, assignment
    config.Exchange.assignment_dir = str(home)
    config.Exchange.cache = str(home / "cache")
    submit = ExchangeFactory(config=config).Submit(
        coursedir=CourseDirectory(config=config), authenticator=Authenticator(config=config),
        config=config)
    submit.start()


def test_submit_refuses_a_name_that_is_not_plain_and_writes_nothing(released):
    from nbgrader.exchange import ExchangeError

    work, course = released
    home = work / "home" / "ada"
    before = _tree(work)
    for student_id in ("../x", "..", "a/b", ".ada", "bell\x07"):
        with pytest.raises(ExchangeError, match="student id .* is not a plain name"):
            _submit_as(course, home, student_id)
    (home / "..lesson").mkdir()
    with pytest.raises(ExchangeError, match="lesson '..lesson' is not a plain name"):
        _submit_as(course, home, "ada", assignment="..lesson")
    (home / "..lesson").rmdir()
    assert _tree(work) == before       # nothing written, inside the exchange or beside it


def _entry(inbound, name, notebook_from=None, link=None):
    entry = inbound / name
    if link is not None:
        entry.symlink_to(link)
        return entry
    entry.mkdir()
    (entry / "timestamp.txt").write_text(TIME)
    (entry / NOTEBOOK).write_bytes(Path(notebook_from).read_bytes() if notebook_from else b"{}")
    return entry


def test_collect_refuses_each_bad_entry_in_one_line_and_collects_the_others(released, capsys):
    from tapeschool.course.teacher import Teacher

    work, course = released
    inbound = course.exchange / course.course_id / "inbound"
    answer_key = course.root / "source" / LESSON / NOTEBOOK
    bad = {
        f"..+{LESSON}+{TIME}+r1": "student id '..' is not a plain name",
        f".ada+{LESSON}+{TIME}+r2": "student id '.ada' is not a plain name",
        f"bell\x07+{LESSON}+{TIME}+r3": "is not a plain name",
        f"cy+{LESSON}+yesterday+r4": "its time 'yesterday' does not parse",
        f"dan+{LESSON}+{TIME}+r5": "not a folder",                       # a link to source/
        f"eve+{LESSON}+{TIME}+r6": f"holds '{NOTEBOOK}', which is a link",
        f"fay+lesson01x+{TIME}+r7": None,                               # another lesson: not listed
    }
    _entry(inbound, f"..+{LESSON}+{TIME}+r1")
    _entry(inbound, f".ada+{LESSON}+{TIME}+r2")
    _entry(inbound, f"bell\x07+{LESSON}+{TIME}+r3")
    _entry(inbound, f"cy+{LESSON}+yesterday+r4")
    _entry(inbound, f"dan+{LESSON}+{TIME}+r5", link=course.root / "source" / LESSON)
    eve = _entry(inbound, f"eve+{LESSON}+{TIME}+r6")
    (eve / NOTEBOOK).unlink()
    (eve / NOTEBOOK).symlink_to(answer_key)                 # the teacher edition, by a link
    _entry(inbound, f"fay+lesson01x+{TIME}+r7")
    outside = sorted(p.name for p in course.root.parent.iterdir())

    collected = Teacher(course).collect(LESSON)

    assert collected == ["ada", "ben"]
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("collect:")]
    for entry, why in bad.items():
        mine = [line for line in lines if repr(entry) in line]
        assert len(mine) == (1 if why else 0), (entry, lines)
        assert why is None or why in mine[0], (why, mine)
    assert len(lines) == 6
    assert sorted(p.name for p in (course.root / "submitted").iterdir()) == ["ada", "ben"]
    assert sorted(p.name for p in course.root.parent.iterdir()) == outside
    assert not (course.root / LESSON).exists() and not (course.root.parent / LESSON).exists()
    for name in ("ada", "ben"):
        copy = course.root / "submitted" / name / LESSON / NOTEBOOK
        assert copy.read_bytes() != answer_key.read_bytes()            # the student's, not the key


def test_collect_refuses_an_entry_another_os_user_made_under_a_students_name(
        tmp_path, nbgrader_installed, prerequisite):
    """With nbgrader's owner check on (a hub whose users are OS accounts), an entry named
    for ada but made by another account is refused, not merely warned about."""
    import pwd

    from tapeschool.course.layout import init_course
    from tapeschool.course.teacher import Teacher

    prerequisite(os.geteuid() == 0, "giving a file to another OS account needs root")
    course = init_course(tmp_path / "course", exchange=tmp_path / "exchange", assignments=[LESSON])
    Teacher(course).release(LESSON)
    inbound = course.exchange / course.course_id / "inbound"
    nobody = pwd.getpwnam("nobody")
    for name in ("ada", "nobody"):
        entry = _entry(inbound, f"{name}+{LESSON}+{TIME}+r")
        subprocess.run(["chown", "-R", f"{nobody.pw_uid}:{nobody.pw_gid}", str(entry)], check=True)
    assert Teacher(course).collect(LESSON) == ["nobody"]
