"""The JupyterHub and Jupyter settings of a course, written as files an administrator reads.

``write_hub_config(folder, plan)`` writes three things, following nbgrader's
documented setup for one course with several graders (its
``demo_one_class_multiple_graders``):

    folder/jupyterhub_config.py           the hub: who may log in, the groups
                                          formgrade-<course> (instructors) and
                                          nbgrader-<course> (students), the formgrader
                                          as a hub service named after the course, which
                                          only formgrade-<course> may open
    folder/student-config/                JUPYTER_CONFIG_PATH of every user's server:
      nbgrader_config.py                  the course id and the exchange (with the checks
                                          of exchange.py, or ngshare's, ngshare.py)
      jupyter_server_config.json          the formgrader and course list server
      labconfig/page_config.json          extensions, and the instructors' lab tools, off
    folder/grader-config/                 JUPYTER_CONFIG_PATH of the formgrader service:
      nbgrader_config.py                  loads the course directory's own settings
      jupyter_server_config.json, labconfig/page_config.json   the instructors' tools on

A course whose exchange is the hub's ngshare service (``tapeschool-course init
--exchange ngshare``) also gets that service in ``jupyterhub_config.py``, with the course's
roster enrolled (``ngshare.py``): the exchange for a hub whose servers all run as one
OS user, where a shared folder would be readable by every student.

A folder on ``JUPYTER_CONFIG_PATH`` outranks the environment's own settings
(``sys.prefix/etc/jupyter``), so one Python environment serves both roles.

With the folder exchange, students are named by their hub account
(``CourseDirectory.student_id = $JUPYTERHUB_USER``): nbgrader would otherwise take
the OS user's name, which on a hub whose servers all run as one OS user is the same
for everyone. On a hub whose users are OS accounts the two names agree, so the
setting does no harm. With ngshare the hub itself says who submits.

What it must not do: choose an authenticator or spawner for a real site (the
file says where they go), or start anything (``localhub.py`` does, on loopback).
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from .layout import ServiceExchange, check_plain_name

SERVICE_NAME = "ngshare"   # ngshare.SERVICE_NAME (not imported: ngshare may not be installed)

STUDENT_NBGRADER_CONFIG = '''\
"""nbgrader settings of every user's server for the course {course_id!r}
(written by `tapeschool-course hub-config`)."""
c = get_config()  # noqa: F821 (nbgrader defines it when it reads this file)
c.CourseDirectory.course_id = {course_id!r}
{exchange}'''

STUDENT_FOLDER_EXCHANGE = '''import os

c.Exchange.root = {root!r}
# A submission is refused unless its names are plain, and is readable by its student and
# the grader only (tapeschool/course/exchange.py).
c.ExchangeFactory.submit = "tapeschool.course.exchange.CheckedSubmit"
# A student is named by their hub account: where every server runs as one OS user, the
# OS user's name (nbgrader's default) would be the same for every student.
if os.environ.get("JUPYTERHUB_USER"):
    c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
'''

STUDENT_SERVICE_EXCHANGE = '''# The exchange is the hub's ngshare service, which knows each student by their hub token
# and gives them their own work only (tapeschool/course/ngshare.py).
from tapeschool.course.ngshare import use_ngshare
use_ngshare(c, {url!r})
'''

NGSHARE_SERVICE = '''
# The exchange: ngshare, a service of this hub (tapeschool/course/ngshare.py). It keeps
# submissions and feedback in {storage!r}, which only this hub's OS user reads, and gives
# each hub user what their token allows: students their own work, instructors the class's.
c.JupyterHub.services.append({{
    "name": "ngshare",
    "url": "http://{host}:{port}",
    "command": [sys.executable, "-m", "tapeschool.course.ngshare", "--course", COURSE,
                "--instructors", ",".join(INSTRUCTORS + [COURSE]),
                "--students", ",".join(STUDENTS), "--storage", {storage!r}],
}})
'''

GRADER_NBGRADER_CONFIG = '''\
"""nbgrader settings of the formgrader service for the course {course_id!r}
(written by `tapeschool-course hub-config`): the course directory's own."""
c = get_config()  # noqa: F821 (nbgrader defines it when it reads this file)
load_subconfig("nbgrader_config.py", path={course_root!r})  # noqa: F821
'''

# nbgrader's Jupyter server extensions and JupyterLab plugins for instructors only.
INSTRUCTOR_SERVER_EXTENSIONS = ("nbgrader.server_extensions.formgrader",
                                "nbgrader.server_extensions.course_list")
INSTRUCTOR_LAB_PLUGINS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                          "@jupyter/nbgrader:course-list")

HUB_CONFIG = '''\
"""JupyterHub for the course {course_id!r} with nbgrader (written by `tapeschool-course hub-config`).

nbgrader's setup for one course and several graders: the exchange is a folder every
user's server writes to; the formgrader runs as a hub service named after the course, and
only the group formgrade-{course_id} may open it; every user's server reads
student-config/ (instructors' tools off), the service reads grader-config/.
notebooks/README.md ("Teaching a course on JupyterHub") walks through it.
"""
import os
import sys

c = get_config()  # noqa: F821 (JupyterHub defines it when it reads this file)
HERE = os.path.dirname(os.path.abspath(__file__))
COURSE = {course_id!r}
STUDENTS = {students!r}
INSTRUCTORS = {instructors!r}

# Your site's authenticator and spawner go here. {privacy}
c.Authenticator.allowed_users = set(STUDENTS + INSTRUCTORS)
c.JupyterHub.load_groups = {{
    f"formgrade-{{COURSE}}": {{"users": INSTRUCTORS}},
    f"nbgrader-{{COURSE}}": {{"users": STUDENTS}},
}}
c.JupyterHub.load_roles = [
    {{
        "name": f"formgrade-{{COURSE}}",
        "groups": [f"formgrade-{{COURSE}}"],
        "scopes": [f"access:services!service={{COURSE}}", "list:services",
                   f"read:services!service={{COURSE}}"],
    }},
]
c.JupyterHub.services = [
    {{
        "name": COURSE,
        "url": "http://127.0.0.1:{service_port}",
        "command": [sys.executable, "-m", "jupyterhub.singleuser"{service_args}],
        "cwd": {grader_home!r},  # the course directory lies inside it
        "oauth_no_confirm": True,  # the site's own service: no "authorize access" page
        "environment": {{"JUPYTER_CONFIG_PATH": os.path.join(HERE, "grader-config"),
                        "JUPYTERHUB_DEFAULT_URL": "/lab"}},{grader_user}
    }},
]
c.Spawner.default_url = "/lab"
c.Spawner.environment = {{"JUPYTER_CONFIG_PATH": os.path.join(HERE, "student-config")}}
{exchange_service}'''

FOLDER_PRIVACY = """The exchange is a folder: only where users are OS
# accounts (LocalProcessSpawner, SystemdSpawner) do its permissions keep each student's
# submission and feedback from the others. Where every server runs as one OS user (Zero to
# JupyterHub), make the course with `tapeschool-course init --exchange ngshare` instead."""
SERVICE_PRIVACY = """The exchange is the ngshare service below: each
# student reaches their own submissions and feedback only, whatever OS user their server
# runs as, as long as no server can read the service's storage (notebooks/README.md)."""


@dataclass
class HubPlan:
    """What a course's hub needs to know.

    Attributes:
        course: the ``layout.Course`` (its id, directory and exchange).
        students, instructors: hub user names; instructors may open the formgrader.
        grader_home: the formgrader service's working folder; the course directory must lie
            inside it (nbgrader's formgrader refuses a course outside its server's root).
        grader_user: the OS account that runs the formgrader (nbgrader's docs:
            ``grader-<course>``); None runs it as the hub's own user.
        service_port: the loopback port of the formgrader service.
        service_args: extra command-line arguments of the service's server.
        ngshare_storage: where the ngshare service keeps the exchange (a course whose
            exchange is ngshare only).
    """

    course: object
    students: list
    instructors: list
    grader_home: Path = None
    grader_user: str = None
    service_port: int = 9999
    service_args: list = field(default_factory=list)
    ngshare_storage: Path = Path("/srv/ngshare")

    def __post_init__(self):
        for name in list(self.students) + list(self.instructors):
            check_plain_name(name, "hub user name")
            if name in (self.course.course_id, SERVICE_NAME):
                raise ValueError(f"no hub user may be named {name!r}: that is the name of a "
                                 f"service of the course's hub")
        self.grader_home = Path(self.grader_home or self.course.root.parent)
        if not Path(self.course.root).resolve().is_relative_to(self.grader_home.resolve()):
            raise ValueError(f"the course directory {self.course.root} must lie inside the "
                             f"formgrader's folder {self.grader_home}")


def write_hub_config(folder, plan):
    """Writes ``jupyterhub_config.py``, ``student-config/`` and ``grader-config/``.

    Args:
        folder: where to write (created).
        plan: a ``HubPlan``.

    Returns:
        The path of ``jupyterhub_config.py`` (start the hub with ``jupyterhub -f`` it).
    """
    folder = Path(folder)
    course = plan.course
    student, grader = folder / "student-config", folder / "grader-config"
    (student / "labconfig").mkdir(parents=True, exist_ok=True)
    (grader / "labconfig").mkdir(parents=True, exist_ok=True)
    (student / "nbgrader_config.py").write_text(student_nbgrader_config(course), encoding="utf-8")
    (grader / "nbgrader_config.py").write_text(
        GRADER_NBGRADER_CONFIG.format(course_id=course.course_id, course_root=str(course.root)),
        encoding="utf-8")
    for where, on in ((student, False), (grader, True)):
        _write_json(where / "jupyter_server_config.json", {"ServerApp": {"jpserver_extensions": {
            name: on for name in INSTRUCTOR_SERVER_EXTENSIONS}}})
        _write_json(where / "labconfig" / "page_config.json", {"disabledExtensions": {
            name: not on for name in INSTRUCTOR_LAB_PLUGINS}})
    args = "".join(f", {arg!r}" for arg in plan.service_args)
    user = f"\n        \"user\": {plan.grader_user!r}," if plan.grader_user else ""
    service = ""
    if isinstance(course.exchange, ServiceExchange):
        address = ngshare_address(course.exchange)
        service = NGSHARE_SERVICE.format(host=address.hostname, port=address.port,
                                         storage=str(plan.ngshare_storage))
    path = folder / "jupyterhub_config.py"
    path.write_text(HUB_CONFIG.format(
        course_id=course.course_id, students=list(plan.students),
        instructors=list(plan.instructors), service_port=plan.service_port,
        service_args=args, grader_home=str(plan.grader_home), grader_user=user,
        privacy=SERVICE_PRIVACY if service else FOLDER_PRIVACY, exchange_service=service),
        encoding="utf-8")
    return path


def student_nbgrader_config(course):
    """The ``nbgrader_config.py`` of every user's server (also what an image's
    ``/etc/jupyter/nbgrader_config.py`` should say)."""
    if isinstance(course.exchange, ServiceExchange):
        exchange = STUDENT_SERVICE_EXCHANGE.format(url=course.exchange.url)
    else:
        exchange = STUDENT_FOLDER_EXCHANGE.format(root=str(course.exchange))
    return STUDENT_NBGRADER_CONFIG.format(course_id=course.course_id, exchange=exchange)


def ngshare_address(exchange):
    """The ``urlparse`` of a ``ServiceExchange``'s address, which must be the service's own
    (``http://<host>:<port>/services/ngshare``): the hub starts ngshare there."""
    address = urlparse(exchange.url.rstrip("/"))
    if address.path != f"/services/{SERVICE_NAME}" or not address.port:
        raise ValueError(f"the ngshare address {exchange.url!r} must be "
                         f"http://<host>:<port>/services/{SERVICE_NAME}")
    return address


def _write_json(path, data):
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
