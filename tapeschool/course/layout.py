"""The course directory: nbgrader's folders, made from the lessons' teacher editions.

A course is the folder nbgrader's commands run in (nbgrader calls it the course
directory). ``init_course`` lays it out the way nbgrader expects, and nbgrader
fills in the rest as the steps run::

    tapeschool/                       the course directory (CourseDirectory.root)
      nbgrader_config.py              the course id, the exchange, the lessons' settings
      lessons_nbgrader_config.py      a copy of notebooks/nbgrader_config.py
      source/lesson01/01_gradients_and_tapes.ipynb    a teacher edition, as it is
      release/ submitted/ autograded/ feedback/ gradebook.db     (nbgrader's, later)

    /usr/local/share/nbgrader/exchange/    the exchange (Exchange.root), shared by
      tapeschool/outbound/ inbound/ feedback/    every user of the hub (nbgrader's)

or, on a hub whose servers all run as one OS user, no exchange folder at all: the
exchange is ngshare, a service of the hub (``ngshare.py``), and the course's
``nbgrader_config.py`` names its address (``init_course(..., ngshare_url=...)``).
Either way the course's exchange classes are those of ``exchange.py`` (or
``ngshare.py``), which refuse names that are not plain (``check_plain_name``).

An assignment is named after its lesson's number: ``lesson01`` for
``01_gradients_and_tapes.ipynb``. ``assignment_name`` accepts ``1``, ``01``,
``lesson01`` or the notebook's file name, so a teacher can type any of them.

What this module must not do: touch the lessons (it copies teacher editions,
never edits them) or decide anything nbgrader decides (which cells are graded,
how a copy is released): that is the lessons' ``nbgrader_config.py``.
"""

import contextlib
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Installed from a wheel, the teacher editions travel inside the package (setup.py puts
# them there); in a clone (and an editable install) they are the clone's notebooks/.
PACKAGED_LESSONS = Path(__file__).resolve().parent.parent / "lessons"


def _lessons_folder():
    chosen = os.environ.get("TAPESCHOOL_LESSONS")
    if chosen:
        return Path(chosen)
    if (ROOT / "notebooks" / "nbgrader_config.py").is_file():
        return ROOT / "notebooks"
    return PACKAGED_LESSONS


NOTEBOOKS = _lessons_folder()
LESSONS_CONFIG = NOTEBOOKS / "nbgrader_config.py"

DEFAULT_COURSE_ID = "tapeschool"
# nbgrader's own default for Exchange.root; a hub shares this folder with every user.
DEFAULT_EXCHANGE = Path("/usr/local/share/nbgrader/exchange")

COURSE_CONFIG = '''\
"""nbgrader settings of the course {course_id!r} (written by `tapeschool-course init`).

nbgrader reads this file when it runs in this folder (the course directory), and the
formgrader reads it through the grader's own nbgrader_config.py.
"""
import os

c = get_config()  # noqa: F821 (nbgrader defines it when it reads this file)
here = os.path.dirname(os.path.abspath(__file__))  # traitlets gives a config file its __file__

# How the lessons become assignments: a copy of notebooks/nbgrader_config.py.
load_subconfig("lessons_nbgrader_config.py", path=here)  # noqa: F821

# Autograding runs each submission in a sandbox and compares its answers with a key made
# from the teacher edition, outside the student's kernel (tapeschool.course.grading), also
# when nbgrader's own `nbgrader autograde` or the formgrader's button runs it.
from tapeschool.course.grading import grading_config  # noqa: E402
c.merge(grading_config(here))

c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.root = here  # this folder, wherever it is moved
{exchange}{extra}'''

# The folder exchange, through tapeschool's checks (tapeschool/course/exchange.py).
FOLDER_EXCHANGE = '''c.Exchange.root = {root!r}
# Names that are not plain are refused at submit and at collect; a submission is readable by
# its student and the grader only; a collected entry holding a link is refused.
c.ExchangeFactory.submit = "tapeschool.course.exchange.CheckedSubmit"
c.ExchangeFactory.collect = "tapeschool.course.exchange.CheckedCollect"
c.ExchangeFactory.release_assignment = "tapeschool.course.exchange.CheckedRelease"
'''

# ngshare, a service of the hub (tapeschool/course/ngshare.py): no folder is shared.
SERVICE_EXCHANGE = '''# The exchange is the hub's ngshare service: students reach only their own submissions
# and feedback through it (tapeschool/course/ngshare.py).
from tapeschool.course.ngshare import use_ngshare
use_ngshare(c, {url!r})
'''

# Where every user's server runs as one OS user (SimpleLocalProcessSpawner, a dry run),
# nbgrader's check that a submission's owner is the student it names can only warn.
ONE_OS_USER = '''
# Every user of this hub runs as the same OS user, so a submission's owner says nothing
# about its student: nbgrader's owner check would warn on every submission.
c.ExchangeCollect.check_owner = False
'''


# A plain name: a word character first, then word characters, dots, dashes or @ (an e-mail
# as a hub name), 100 at most. No '/', '+', '*', spaces or control characters, no leading
# dot: nbgrader makes folder names of student ids and lesson names, and parses '+' in them.
PLAIN_NAME = re.compile(r"\w[\w.@-]{0,99}")


def check_plain_name(value, what="name"):
    """Returns ``value`` if it is a plain name; raises ValueError saying why otherwise.

    Args:
        value: a student id, a lesson or assignment name, a course id.
        what: what it is, for the message (``"student id"``).

    >>> check_plain_name("ada"), check_plain_name("ada.lovelace@uni.edu")
    ('ada', 'ada.lovelace@uni.edu')
    >>> check_plain_name("../x", "student id")
    Traceback (most recent call last):
    ValueError: the student id '../x' is not a plain name: ...
    """
    if isinstance(value, str) and PLAIN_NAME.fullmatch(value):
        return value
    raise ValueError(f"the {what} {value!r} is not a plain name: use letters, digits, '_', "
                     f"'.', '-' and '@', starting with a letter, digit or '_' (at most 100)")


def lessons():
    """The teacher editions, by assignment name.

    Returns:
        ``{"lesson01": Path(".../notebooks/01_gradients_and_tapes.ipynb"), ...}``, in order.
    """
    found = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    return {f"lesson{path.name[:2]}": path for path in found}


def assignment_name(lesson):
    """The assignment name of a lesson, however the teacher writes it.

    Args:
        lesson: ``3``, ``"03"``, ``"lesson03"``, ``"03_why_a_gradient_is_none"`` (``.ipynb``
            allowed).

    Returns:
        ``"lesson03"``. Raises ValueError for a name that is not plain (``../x``) and for
        a lesson that does not exist.

    >>> assignment_name("3"), assignment_name("03_why_a_gradient_is_none.ipynb")
    ('lesson03', 'lesson03')
    """
    check_plain_name(str(lesson).strip(), "lesson")
    match = re.fullmatch(r"(?:lesson)?0*(\d{1,2})(?:_\w+)?(?:\.ipynb)?", str(lesson).strip())
    name = f"lesson{int(match.group(1)):02d}" if match else None
    if name not in lessons():
        raise ValueError(f"no lesson {lesson!r}: the lessons are {', '.join(lessons())}")
    return name


def notebook_name(assignment):
    """The notebook file of an assignment: ``"lesson01"`` -> ``"01_gradients_and_tapes.ipynb"``."""
    return lessons()[assignment_name(assignment)].name


@dataclass(frozen=True)
class Course:
    """A course directory and the exchange it releases to.

    Attributes:
        root: the course directory (nbgrader's ``CourseDirectory.root``).
        course_id: nbgrader's ``CourseDirectory.course_id``, also the name of the hub
            service that runs the formgrader and of the hub groups ``formgrade-<id>``
            (instructors) and ``nbgrader-<id>`` (students).
        exchange: nbgrader's ``Exchange.root`` (a ``Path``), or the ``ServiceExchange``
            of a course whose exchange is the hub's ngshare service.
    """

    root: Path
    course_id: str
    exchange: object

    @property
    def gradebook(self):
        """nbgrader's gradebook (its default ``CourseDirectory.db_url``)."""
        return self.root / "gradebook.db"

    def config(self):
        """The course's nbgrader configuration, loaded as nbgrader's own commands load it
        (the Jupyter config path, then ``nbgrader_config.py`` in the course directory)."""
        from nbgrader.apps import NbGrader

        app = NbGrader()
        with _working_directory(self.root):
            app.load_config_file()
        config = app.config
        config.CourseDirectory.root = str(self.root)
        return config


def init_course(root, course_id=DEFAULT_COURSE_ID, exchange=DEFAULT_EXCHANGE, assignments=None,
                one_os_user=False, ngshare_url=None):
    """Lays out a course directory from the teacher editions, and the exchange.

    Args:
        root: the course directory (created; an existing one keeps its submissions and
            gradebook, its sources and settings are written again).
        course_id: the course's name in nbgrader and on the hub (a plain name).
        exchange: nbgrader's exchange folder (created, writable by everyone, sticky).
        assignments: lessons to add (any form ``assignment_name`` takes); all by default.
        one_os_user: every user's server runs as the same OS user (a loopback hub, a
            dry run): turns off nbgrader's owner check, which can only warn there.
        ngshare_url: the address of the hub's ngshare service
            (``http://127.0.0.1:<port>/services/ngshare``): the course's exchange is that
            service, and no exchange folder is made.

    Returns:
        The ``Course``.

    >>> course = init_course(tmp / "tapeschool", exchange=tmp / "exchange",
    ...                      assignments=["01"])                         # doctest: +SKIP
    >>> sorted(p.name for p in (course.root / "source").iterdir())       # doctest: +SKIP
    ['lesson01']
    """
    check_plain_name(course_id, "course id")
    root = Path(root).resolve()
    names = [assignment_name(a) for a in (assignments or lessons())]
    for name in names:
        folder = root / "source" / name
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy2(lessons()[name], folder / lessons()[name].name)
    shutil.copy2(LESSONS_CONFIG, root / "lessons_nbgrader_config.py")
    if ngshare_url:
        exchange, settings = ServiceExchange(ngshare_url), SERVICE_EXCHANGE.format(url=ngshare_url)
    else:
        exchange = Path(exchange).resolve()
        settings = FOLDER_EXCHANGE.format(root=str(exchange))
        make_exchange(exchange)
    text = COURSE_CONFIG.format(course_id=course_id, exchange=settings,
                                extra=ONE_OS_USER if one_os_user and not ngshare_url else "")
    (root / "nbgrader_config.py").write_text(text, encoding="utf-8")
    return Course(root, course_id, exchange)


def open_course(root):
    """The ``Course`` in ``root``, as its ``nbgrader_config.py`` describes it."""
    root = Path(root).resolve()
    if not (root / "nbgrader_config.py").is_file():
        raise FileNotFoundError(f"{root} is not a course directory (no nbgrader_config.py); "
                                f"make one with: tapeschool-course init {root}")
    config = Course(root, "", Path()).config()
    course_id = config.CourseDirectory.get("course_id", "")
    if not course_id:
        raise ValueError(f"{root / 'nbgrader_config.py'} names no CourseDirectory.course_id")
    service = config.Exchange.get("_ngshare_url")
    if service:
        return Course(root, course_id, ServiceExchange(service))
    return Course(root, course_id, Path(config.Exchange.get("root", str(DEFAULT_EXCHANGE))))


@dataclass(frozen=True)
class ServiceExchange:
    """The hub's ngshare service as a course's exchange, standing where a folder would.

    Code written for the folder exchange keeps working with it: ``exchange / "tapeschool"
    / "inbound"`` is an address under the service (shown in messages) and ``is_dir()`` is
    true, since the service holds every course it was started with; a step on a lesson it
    does not hold fails with ngshare's own message.

    >>> str(ServiceExchange("http://127.0.0.1:8000/services/ngshare") / "tapeschool")
    'http://127.0.0.1:8000/services/ngshare/tapeschool'
    """

    url: str

    def __truediv__(self, part):
        return ServiceExchange(f"{self.url.rstrip('/')}/{part}")

    def is_dir(self):
        return True

    def __str__(self):
        return self.url


def make_exchange(path):
    """Creates nbgrader's exchange folder if needed: writable by every user (nbgrader's
    setup asks for that), with the sticky bit, so that no user can delete or rename what
    another made there (the instructor's course folder, say)."""
    path = Path(path)
    if not path.is_dir():
        path.mkdir(parents=True)
    if path.stat().st_uid == os.getuid():
        path.chmod(0o1777)


@contextlib.contextmanager
def _working_directory(path):
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)
