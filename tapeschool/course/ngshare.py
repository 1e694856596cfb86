"""The exchange of a hub whose servers all run as one OS user: ngshare, a service of the hub.

Where every user's server runs as the same OS user (Zero to JupyterHub's pods are all
``jovyan``), a shared exchange folder keeps nothing private: each server may read all of
it. ngshare (PyPI ``ngshare``) keeps the exchange in storage of its own, which no user's
server mounts, and answers each request as the hub user whose token comes with it: a
student fetches released lessons, submits, lists and fetches their own submissions and
feedback; only the course's instructors list or download submissions and upload feedback.
nbgrader talks to it through ngshare-exchange (PyPI ``ngshare-exchange``), set with
nbgrader's plug points (``c.ExchangeFactory``)::

    use_ngshare(c, url)   nbgrader settings of a course and of the students' servers:
                          ngshare-exchange's classes, with NgshareSubmit and NgshareCollect
                          refusing names that are not plain (exchange.py's checks)
    python -m tapeschool.course.ngshare --course tapeschool --instructors ines,tapeschool \\
        --students ada,ben --storage /srv/ngshare
                          the hub service (hub_config.py writes it): enrolls the roster,
                          then runs ngshare on JupyterHub's service address (only on
                          loopback when that address is a loopback one)

Versions: ngshare 0.6.0 with ngshare-exchange 0.5.2, nbgrader 0.9.6, JupyterHub 6.1.1 and
SQLAlchemy 2.1 (tests/hub). Two things stand in the way, and are handled here:

- ngshare 0.6.0 was written for SQLAlchemy 1, which saved an object attached to a saved
  one through a back reference; SQLAlchemy 2 does not. Unpatched, ngshare answers
  "success" to a release or a submission and stores nothing (``Assignment(id, course)``,
  ``Submission(student, assignment)``; SQLAlchemy warns "not in session, add operation
  ... will not proceed"). ``save_through_backrefs`` puts the old rule back for ngshare's
  models, in the service's own process.
- ngshare-exchange 0.5.3 requires ``jupyter-core<4.11.2``, which no jupyter_server 2 or
  jupyter_client 8 installs beside; 0.5.2 has the same code without that pin.

What it must not do: give a hub user another identity than the hub's (ngshare asks the hub
who each token belongs to), or put the exchange where a user's server can read it.
"""

import argparse
import getpass
import os
import sys
from collections import namedtuple
from pathlib import Path
from urllib.parse import urlparse

from .exchange import check_names, report_refused
from .layout import check_plain_name

# ngshare-exchange reads the user's name from the environment when it is imported.
if not os.environ.get("JUPYTERHUB_USER") and not os.environ.get("USER"):
    os.environ["USER"] = getpass.getuser()

import ngshare_exchange  # noqa: E402 (needs the name above)

SERVICE_NAME = "ngshare"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def use_ngshare(c, url):
    """Makes nbgrader's exchange the ngshare service at ``url`` (in an nbgrader_config.py).

    Args:
        c: the configuration being loaded (``get_config()``).
        url: the service's address as the servers reach it
            (``http://127.0.0.1:<port>/services/ngshare``).
    """
    ngshare_exchange.configureExchange(c)
    c.ExchangeFactory.submit = "tapeschool.course.ngshare.NgshareSubmit"
    c.ExchangeFactory.collect = "tapeschool.course.ngshare.NgshareCollect"
    c.Exchange._ngshare_url = url


class NgshareSubmit(ngshare_exchange.ExchangeSubmit):
    """ngshare-exchange's submit, refusing a lesson or course id that is not a plain name
    (the student is the hub account ngshare sees: there is no id to give)."""

    def init_dest(self):
        check_names(self)
        super().init_dest()


class NgshareCollect(ngshare_exchange.ExchangeCollect):
    """ngshare-exchange's collect: a submission whose hub user name is not a plain name is
    refused (one line) and skipped; the others are collected."""

    def init_src(self):
        check_names(self)
        super().init_src()
        kept = []
        for record in self.src_records:
            try:
                check_plain_name(record["student_id"], "student id")
            except ValueError as refused:
                entry = f"{record['student_id']}+{self.coursedir.assignment_id} on {SERVICE_NAME}"
                report_refused(self, entry, str(refused))
                continue
            kept.append(record)
        self.src_records = kept


def enroll(database_url, storage, course_id, instructors, students):
    """Puts the course and its roster in ngshare's database (created or upgraded first, as
    ngshare does). Adds, never removes: a student dropped from the roster keeps their
    submissions until an instructor removes them with ngshare-exchange's
    ``ngshare-course-management``.

    Args:
        database_url: ngshare's database (``sqlite:////srv/ngshare/ngshare.db``).
        storage: the folder of ngshare's files (its migrations read it).
        course_id: the nbgrader course.
        instructors: hub names that may release, collect and return feedback (the course's
            formgrader service, named like the course, among them).
        students: hub names that may fetch and submit.
    """
    from ngshare import dbutil
    from ngshare.database import Course, User
    from sqlalchemy import create_engine
    from sqlalchemy.orm import sessionmaker

    options = namedtuple("CmdOpts", ["x"])(["data=true", f"storage={storage}"])
    dbutil.upgrade(database_url, cmd_opts=options)
    engine = create_engine(database_url)
    with sessionmaker(bind=engine)() as db:
        def user(name):
            found = db.query(User).filter(User.id == check_plain_name(name, "hub user")).one_or_none()
            if found is None:
                found = User(name)
                db.add(found)
            return found

        course = db.query(Course).filter(Course.id == course_id).one_or_none()
        if course is None:
            course = Course(course_id, [])
            db.add(course)
        for teacher in map(user, instructors):
            if teacher not in course.instructors:
                course.instructors.append(teacher)
        for student in map(user, students):
            if student not in course.students and student not in course.instructors:
                course.students.append(student)
        db.commit()
    engine.dispose()


def save_through_backrefs():
    """Makes SQLAlchemy save an ngshare object attached to a saved one, as SQLAlchemy 1 did
    through back references (``cascade_backrefs``, gone in SQLAlchemy 2)."""
    from ngshare.database import Base
    from sqlalchemy import event
    from sqlalchemy.orm import object_session

    def adopt(owner, value):
        session = object_session(owner)
        if session is not None and value is not None and object_session(value) is None:
            session.add(value)

    for mapper in Base.registry.mappers:
        for relationship in mapper.relationships:
            attribute = getattr(mapper.class_, relationship.key)
            if relationship.uselist:    # course.assignments.append(assignment)
                event.listen(attribute, "append",
                             lambda owner, value, initiator: adopt(owner, value))
            else:                       # assignment.course = course
                event.listen(attribute, "set",
                             lambda owner, value, old, initiator: adopt(value, owner))


def main(argv=None):
    """The hub service: ``--storage`` (made private to this service's OS user) holds
    ngshare's database and files; the roster is enrolled, then ngshare runs."""
    parser = argparse.ArgumentParser(prog="python -m tapeschool.course.ngshare",
                                     description="ngshare for one nbgrader course")
    parser.add_argument("--course", required=True)
    parser.add_argument("--instructors", required=True, help="hub names, comma-separated")
    parser.add_argument("--students", default="", help="hub names, comma-separated")
    parser.add_argument("--storage", type=Path, required=True)
    args, ngshare_args = parser.parse_known_args(argv)
    args.storage.mkdir(parents=True, exist_ok=True)
    args.storage.chmod(0o700)
    database = f"sqlite:///{args.storage.resolve() / 'ngshare.db'}"
    files = args.storage.resolve() / "files"
    enroll(database, files, check_plain_name(args.course, "course id"),
           [n for n in args.instructors.split(",") if n], [n for n in args.students.split(",") if n])

    from ngshare import ngshare as service

    save_through_backrefs()
    address = urlparse(os.environ.get("JUPYTERHUB_SERVICE_URL", "")).hostname
    if address in LOOPBACK:   # ngshare binds every interface, which a loopback hub must not
        class LoopbackServer(service.HTTPServer):
            def listen(self, port, address_ignored="", **kwargs):
                super().listen(port, address, **kwargs)

        service.HTTPServer = LoopbackServer
    service.main(["--database", database, "--storage", str(files),
                  "--no-upgrade-db", *ngshare_args])


if __name__ == "__main__":
    sys.exit(main())
