"""``tapeschool-course``: the teacher's commands, from a course directory made to a returned lesson.

Installed with tapeschool (``pip install -e ".[teacher]"`` in a clone of the repository,
or ``.[hub]`` on a hub's grader), it runs from any folder; the lessons are the
teacher editions in that clone's ``notebooks/``. ``python -m tapeschool.course`` is the
same command (it replaces the old ``python -m course``)::

    tapeschool-course init ~/tapeschool --exchange /usr/local/share/nbgrader/exchange
    tapeschool-course release 03 --course-dir ~/tapeschool
    #   ... students: Nbgrader > Assignment List > Fetch, work, Submit ...
    tapeschool-course collect 03 --course-dir ~/tapeschool
    tapeschool-course grade 03 --course-dir ~/tapeschool     # autograde + feedback, a line each
    tapeschool-course return 03 --course-dir ~/tapeschool    # students: Fetch Feedback
    tapeschool-course scores 03 --course-dir ~/tapeschool

    tapeschool-course hub-config /etc/jupyterhub/tapeschool --course-dir ~/tapeschool \\
        --students ada,ben --instructors ines               # jupyterhub_config.py and friends
    tapeschool-course init ~/tapeschool --exchange ngshare  # servers all one OS user (Z2JH)
    tapeschool-course dry-run 03 --students 5                # the whole cycle, simulated class
    tapeschool-course local-hub --students ada,ben --instructors ines   # a real hub on loopback

``--course-dir`` defaults to the current folder, as nbgrader's own commands do. A step that cannot go on (no such lesson, not a course directory,
nbgrader reporting a failure) prints why, and the command exits with status 2.
"""

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path

from .layout import DEFAULT_COURSE_ID, DEFAULT_EXCHANGE, init_course, open_course

DEFAULT_NGSHARE_URL = "http://127.0.0.1:9998/services/ngshare"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tapeschool-course",
                                     description=__doc__.split("\n")[0].replace("``", ""))
    commands = parser.add_subparsers(dest="command", required=True)

    init = commands.add_parser("init", help="a course directory from the teacher editions")
    init.add_argument("directory", type=Path)
    init.add_argument("--course-id", default=DEFAULT_COURSE_ID)
    init.add_argument("--exchange", default=str(DEFAULT_EXCHANGE),
                      help="nbgrader's exchange folder, or 'ngshare': the hub's ngshare "
                      "service, for hubs whose servers all run as one OS user")
    init.add_argument("--ngshare-url", default=DEFAULT_NGSHARE_URL,
                      help="where the servers reach the ngshare service (with --exchange ngshare)")
    init.add_argument("--lessons", nargs="*", help="lessons to add (default: all)")
    init.add_argument("--one-os-user", action="store_true",
                      help="every user's server runs as one OS user (a test hub)")

    for name, text in (("release", "generate_assignment + release_assignment"),
                       ("collect", "collect the latest submissions"),
                       ("grade", "autograde new submissions, then write their feedback"),
                       ("return", "release_feedback: students can fetch it"),
                       ("scores", "the gradebook's scores")):
        step = commands.add_parser(name, help=text)
        step.add_argument("lesson")
        step.add_argument("--course-dir", type=Path, default=Path.cwd())
        if name == "grade":
            step.add_argument("--force", action="store_true", help="grade everything again")
            step.add_argument("--jobs", type=int, default=1, help="submissions graded at once")
            step.add_argument("--time-limit", type=float, default=0,
                              help="seconds one submission may run, all its cells together "
                                   "(default: five times the teacher edition's, at least 120)")

    hub = commands.add_parser("hub-config", help="jupyterhub_config.py for the course")
    hub.add_argument("directory", type=Path)
    hub.add_argument("--course-dir", type=Path, default=Path.cwd())
    hub.add_argument("--students", required=True, help="hub user names, comma-separated")
    hub.add_argument("--instructors", required=True, help="hub user names, comma-separated")
    hub.add_argument("--grader-home", type=Path, help="the formgrader's folder "
                     "(default: the course directory's parent)")
    hub.add_argument("--grader-user", help="the OS account running the formgrader")
    hub.add_argument("--ngshare-storage", type=Path, default=Path("/srv/ngshare"),
                     help="where the ngshare service keeps the exchange (an ngshare course)")

    dry = commands.add_parser("dry-run", help="release -> submit -> grade -> feedback, "
                              "with a simulated class on a private exchange")
    dry.add_argument("lesson")
    dry.add_argument("--students", type=int, default=5)
    dry.add_argument("--workdir", type=Path, help="kept afterwards (default: a temporary one)")
    dry.add_argument("--jobs", type=int, default=1)

    local = commands.add_parser("local-hub", help="a real JupyterHub on 127.0.0.1 for the "
                                "course (test-only authenticator and spawner); Ctrl-C stops it")
    local.add_argument("--students", default="ada,ben")
    local.add_argument("--instructors", default="ines")
    local.add_argument("--lessons", nargs="*", default=["01"])
    local.add_argument("--workdir", type=Path, required=True)
    local.add_argument("--deployment", choices=("pods", "os-users", "shared"), default="pods",
                       help="pods: every server one OS account in a container of its own, the "
                       "exchange the ngshare service (Zero to JupyterHub); os-users: an OS "
                       "account per user, the exchange folder; shared: every server as you, "
                       "no privacy (no root needed)")

    args = parser.parse_args(argv)
    from .teacher import StepFailed

    try:
        return COMMANDS[args.command.replace("-", "_")](args)
    except (StepFailed, FileNotFoundError, PermissionError, ValueError) as error:
        print(f"tapeschool-course {args.command}: {error}", file=sys.stderr)
        return 2


def _init(args):
    service = args.ngshare_url if args.exchange == "ngshare" else None
    course = init_course(args.directory, args.course_id, Path(args.exchange), args.lessons,
                         one_os_user=args.one_os_user, ngshare_url=service)
    lessons = sorted(p.name for p in (course.root / "source").iterdir())
    print(f"course {course.course_id!r} in {course.root}: {', '.join(lessons)}; "
          f"exchange {course.exchange}")


def _teacher(args):
    from .teacher import Teacher

    return Teacher(open_course(args.course_dir))


def _release(args):
    _teacher(args).release(args.lesson)


def _collect(args):
    _teacher(args).collect(args.lesson)


def _grade(args):
    from .teacher import Teacher

    teacher = Teacher(open_course(args.course_dir), time_limit=args.time_limit)
    teacher.autograde(args.lesson, force=args.force, jobs=args.jobs)
    teacher.generate_feedback(args.lesson)
    if teacher.not_graded:       # everyone else is graded and has feedback: now say so
        print(f"tapeschool-course grade: {len(teacher.not_graded)} submission(s) not graded; "
              f"see `tapeschool-course scores {args.lesson}`", file=sys.stderr)
        return 1
    return 0


def _return(args):
    _teacher(args).return_feedback(args.lesson)


def _scores(args):
    results = _teacher(args).results(args.lesson)
    print(f"{'student':<16} score")
    for student, result in sorted(results.items()):
        shown = f"{result[0]:g}/{result[1]:g}" if isinstance(result, tuple) else result
        print(f"{student:<16} {shown}")
    not_graded = sum(not isinstance(r, tuple) for r in results.values())
    print(f"{len(results)} submission(s)" + (f", {not_graded} not graded" if not_graded else ""))


def _hub_config(args):
    from .hub_config import HubPlan, write_hub_config

    plan = HubPlan(open_course(args.course_dir), args.students.split(","),
                   args.instructors.split(","), grader_home=args.grader_home,
                   grader_user=args.grader_user, ngshare_storage=args.ngshare_storage)
    path = write_hub_config(args.directory, plan)
    print(f"wrote {path} (start the hub with: jupyterhub -f {path}); the exchange: "
          f"{plan.course.exchange}")


def _dry_run(args):
    from .simulate import submit_class
    from .student import Student
    from .teacher import Teacher

    with tempfile.TemporaryDirectory(prefix="course-dry-run-") as scratch:
        work = args.workdir or Path(scratch)
        course = init_course(work / "tapeschool", exchange=work / "exchange",
                             assignments=[args.lesson], one_os_user=True)
        teacher = Teacher(course)
        started = time.monotonic()
        assignment = teacher.release(args.lesson)
        expected = submit_class(course, assignment, args.students, work / "home")
        teacher.collect(assignment)
        scores = teacher.autograde(assignment, jobs=args.jobs)
        teacher.generate_feedback(assignment)
        teacher.return_feedback(assignment)
        fetched = {name: Student(name, work / "home" / name, course.course_id,
                                 course.exchange).fetch_feedback(assignment)
                   for name in expected}
        wrong = {s: (scores.get(s), e) for s, e in expected.items() if scores.get(s) != e}
        missing = [s for s, pages in fetched.items() if len(pages) != 1]
        print(f"dry run of {assignment}: {len(scores)} graded, {len(fetched) - len(missing)} "
              f"feedback pages fetched, in {time.monotonic() - started:.0f} s")
        if wrong or missing:
            print(f"FAILED: scores not as answered {wrong}; no feedback for {missing}")
            return 1
        print("every score is what its answers earn, and every student has their feedback")
    return 0


def _local_hub(args):
    import os

    from .localhub import LocalHub, ngshare_url
    from .teacher import Teacher

    pods = args.deployment == "pods"
    course = init_course(args.workdir / "grader" / DEFAULT_COURSE_ID,
                         exchange=args.workdir / "exchange", assignments=args.lessons,
                         one_os_user=args.deployment == "shared",
                         ngshare_url=ngshare_url() if pods else None)
    teacher = Teacher(course)
    signal.signal(signal.SIGTERM, _interrupt)   # `timeout`, a service manager: as Ctrl-C
    instructors = args.instructors.split(",")
    with LocalHub(args.workdir, course, args.students.split(","), instructors,
                  deployment=args.deployment) as hub:
        if pods:   # ngshare knows the teacher by a hub token of an instructor
            os.environ["JUPYTERHUB_API_TOKEN"] = hub.token(instructors[0], seconds=86400)
        for lesson in args.lessons:
            teacher.release(lesson)
        print(f"JupyterHub on {hub.url}/hub/login, password {hub.password!r}; formgrader "
              f"{hub.url}/services/{course.course_id}/formgrader; Ctrl-C stops it")
        if pods:
            print(f"the exchange is ngshare: run the teacher's commands with "
                  f"JUPYTERHUB_API_TOKEN={os.environ['JUPYTERHUB_API_TOKEN']} (as "
                  f"{instructors[0]}) and --course-dir {course.root}")
        try:
            while hub.process.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
    return 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


COMMANDS = {"init": _init, "release": _release, "collect": _collect, "grade": _grade,
            "return": _return, "scores": _scores, "hub_config": _hub_config,
            "dry_run": _dry_run, "local_hub": _local_hub}

if __name__ == "__main__":
    sys.exit(main())
