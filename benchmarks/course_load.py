"""A course under load: grading 200 submissions, and 20 students logging in at once.

    python -m benchmarks.course_load [--submissions 200] [--jobs 1,2] [--logins 20]
                                     [--wave 20] [--lesson 01] [--skip-grading] [--skip-hub]

Two measurements, reported in one table; nothing is asserted about speed:

- **Grading.** A course with one lesson released; ``--submissions`` simulated
  students fetch it, answer it (``tapeschool.course.simulate``: student k gets the first
  k mod 7 of lesson 1's six exercises right) and submit through nbgrader's
  exchange. The teacher's steps then run as ``tapeschool-course`` runs them:
  collect, autograde (once per ``--jobs`` value, all submissions each time),
  generate_feedback, release_feedback. Reported: each step's wall time, the
  per-submission autograde time (median and slowest), and peak memory, sampled
  every 0.2 s with psutil: the largest resident set of the whole process tree
  (this process, nbgrader's workers and their kernels) and of the largest single
  process. Every score is checked against the answers first: a wrong grade is
  never reported as a fast one.
- **Logins.** ``tapeschool.course.localhub.LocalHub`` (JupyterHub, DummyAuthenticator,
  SimpleLocalProcessSpawner, configurable-http-proxy, all on 127.0.0.1) with
  ``--logins`` students, lesson 1 released. Each student is a Chromium of their
  own (``tapeschool.course.browser``: Debian's ``/usr/bin/chromium`` under Playwright, in a
  thread of its own): log in, wait for JupyterLab, open *Nbgrader > Assignment
  List*, *Fetch*, open the notebook, wait for its kernel, as tests/hub does.
  Time to first lesson is from pressing *Sign in* to that kernel being idle.
  Students start in waves of ``--wave`` at once (all of them by default); a
  smaller wave is the answer when a small machine cannot take them all at once.
  Peak memory is that of the hub, the proxy, the servers and their kernels.

Needs the ``hub`` extra, configurable-http-proxy (``npm ci --prefix tests/hub``)
and Chromium for the logins. A machine of 2 cores shared with other work gives
noisy figures: the table says what it ran on.
"""

import argparse
import concurrent.futures
import math
import os
import platform
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tapeschool.course.layout import init_course  # noqa: E402
from tapeschool.course.simulate import submit_class  # noqa: E402
from tapeschool.course.teacher import Teacher  # noqa: E402

MIB = 1024 * 1024


class MemoryPeak:
    """Samples resident memory every ``interval`` seconds in a thread: the sum over the
    processes ``select()`` returns, and the largest single one."""

    def __init__(self, select, interval=0.2):
        self.select, self.interval = select, interval
        self.total = self.single = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self):
        import psutil

        while not self._stop.is_set():
            sizes = []
            for process in self.select():
                try:
                    sizes.append(process.memory_info().rss)
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    pass
            self.total = max(self.total, sum(sizes))
            self.single = max(self.single, max(sizes, default=0))
            self._stop.wait(self.interval)


def this_tree():
    import psutil

    me = psutil.Process()
    return [me] + me.children(recursive=True)


def timed(rows, what, step):
    started = time.monotonic()
    result = step()
    rows.append((what, f"{time.monotonic() - started:.1f} s", ""))
    return result


def grading(args, work, rows):
    course = init_course(work / "grader" / "tapeschool", exchange=work / "exchange",
                         assignments=[args.lesson], one_os_user=True)
    teacher = Teacher(course)
    assignment = teacher.release(args.lesson)
    n = args.submissions
    expected = timed(rows, f"{n} students fetch, answer and submit (nbgrader's exchange)",
                     lambda: submit_class(course, assignment, n, work / "home"))
    timed(rows, f"collect {n} submissions", lambda: teacher.collect(assignment))
    from tapeschool.course.answer_key import load_or_make_key
    from tapeschool.course.layout import notebook_name

    timed(rows, "the answer key: the teacher edition run once in the sandbox",
          lambda: load_or_make_key(course.root, assignment,
                                   notebook_name(assignment).removesuffix(".ipynb")))
    for jobs in args.jobs:
        with MemoryPeak(this_tree) as memory:
            started = time.monotonic()
            scores = teacher.autograde(assignment, force=True, jobs=jobs)
            wall = time.monotonic() - started
        wrong = {s: (scores.get(s), e) for s, e in expected.items() if scores.get(s) != e}
        if wrong:
            raise SystemExit(f"autograde gave scores the answers do not earn: {wrong}")
        each = sorted(teacher.last_progress.seconds.values())
        rows.append((f"autograde {n} submissions, {jobs} at a time, each in a sandbox",
                     f"{wall:.0f} s",
                     f"{wall / n:.2f} s per submission; each took {statistics.median(each):.1f} s "
                     f"(median), {each[-1]:.1f} s (slowest); peak memory "
                     f"{memory.total / MIB:.0f} MiB in all, {memory.single / MIB:.0f} MiB "
                     f"in one process"))
    if args.baseline:
        with MemoryPeak(this_tree) as memory:
            started = time.monotonic()
            each = unsandboxed_autograde(course, assignment, sorted(expected), max(args.jobs))
            wall = time.monotonic() - started
        rows.append((f"baseline: nbgrader's own autograde of the same {n}, {max(args.jobs)} at "
                     f"a time, in the grader's kernel (no sandbox; what grading was before)",
                     f"{wall:.0f} s",
                     f"each took {statistics.median(each):.1f} s (median), {max(each):.1f} s "
                     f"(slowest); peak memory {memory.total / MIB:.0f} MiB in all"))
    with MemoryPeak(this_tree) as memory:
        timed(rows, f"generate_feedback for {n}", lambda: teacher.generate_feedback(assignment))
    rows[-1] = rows[-1][:2] + (f"peak memory {memory.total / MIB:.0f} MiB",)
    timed(rows, f"release_feedback for {n}", lambda: teacher.return_feedback(assignment))


def _stock_autograde(course_root, assignment, student):
    """nbgrader's autograde as it comes (its Execute step, the kernel in this machine's
    environment): the baseline the sandbox is measured against. Never for real classes."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.converters import Autograde

    from tapeschool.course.layout import open_course

    config = open_course(course_root).config()
    config.Autograde.autograde_preprocessors = Autograde.class_traits()[
        "autograde_preprocessors"].default()
    started = time.monotonic()
    result = NbGraderAPI(config=config).autograde(assignment, student, force=True, create=True)
    if not result.get("success"):
        raise SystemExit(f"baseline autograde of {student} failed: {result.get('error')}")
    return time.monotonic() - started


def unsandboxed_autograde(course, assignment, students, jobs):
    """Seconds each submission took under nbgrader's own autograde, ``jobs`` at a time."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        return list(pool.map(_stock_autograde, [course.root] * len(students),
                             [assignment] * len(students), students))


def first_lesson(hub, name, assignment, notebook, timeout):
    """One student, in a Chromium of their own, from the login page to the lesson open with
    its kernel idle (students do not share a browser, and one browser pools its
    connections to a host).

    Returns:
        ``(seconds to JupyterLab, seconds to the lesson, reloads, None)``, or
        ``(None, None, 0, why)`` when the student did not get there in ``timeout`` seconds.
    """
    from tapeschool.course.browser import HubUser, chromium

    with chromium() as browser:
        student = HubUser(name, browser, hub, viewport=(1280, 900), timeout_ms=timeout * 1000)
        lab = None
        try:
            pressed = student.log_in()
            reloads = student.wait_for_lab(timeout=timeout)
            lab = time.monotonic() - pressed
            student.fetch_and_open(assignment, notebook, timeout_ms=timeout * 1000)
            return lab, time.monotonic() - pressed, reloads, None
        except Exception as error:  # noqa: BLE001 (reported in the table, with where it stood)
            stage = "at the lesson" if lab is not None else "before JupyterLab"
            try:
                text = student.page.locator("body").inner_text(timeout=5_000)[:200]
            except Exception:  # noqa: BLE001 (a page that cannot even say what it shows)
                text = "(no page text)"
            return (None, None, 0, f"{type(error).__name__} {stage}, at {student.page.url}: "
                                   f"{text.replace(chr(10), ' ')!r}")
        finally:
            student.close()


def logins_in_waves(hub, names, wave, assignment, notebook, timeout):
    """``wave`` students at once, each in a thread (Playwright's sync API is per thread)."""
    times = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=wave) as pool:
        for start in range(0, len(names), wave):
            batch = names[start:start + wave]
            futures = [pool.submit(first_lesson, hub, n, assignment, notebook, timeout)
                       for n in batch]
            times.update(zip(batch, (f.result() for f in futures)))
    return times


def logins(args, work, rows):
    from tapeschool.course.layout import notebook_name
    from tapeschool.course.localhub import LocalHub
    from tapeschool.course.simulate import student_names

    course = init_course(work / "grader" / "tapeschool", exchange=work / "exchange",
                         assignments=[args.lesson], one_os_user=True)
    assignment = Teacher(course).release(args.lesson)
    names = student_names(args.logins)
    with LocalHub(work, course, names, ["ines"], spawn_timeout=args.timeout) as hub:
        with MemoryPeak(hub.processes) as memory:
            started = time.monotonic()
            times = logins_in_waves(hub, names, args.wave, assignment,
                                    notebook_name(assignment), args.timeout)
            wall = time.monotonic() - started
        started_in = sorted(float(seconds) for seconds in re.findall(
            r"User \S+ took ([\d.]+) seconds to start", hub.log_path.read_text(errors="replace")))
        failed = {n: t[3] for n, t in times.items() if t[3]}
        if failed:
            print(f"{len(failed)} student(s) did not reach the lesson:", file=sys.stderr)
            for name, why in failed.items():
                print(f"  {name}: {why}", file=sys.stderr)
            kept = ROOT / "benchmarks" / "results" / "course_load_hub.log"
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_bytes(hub.log_path.read_bytes())
            print(f"the hub's log is kept in {kept}", file=sys.stderr)
    lab = sorted(t[0] for t in times.values() if t[0] is not None)
    ready = sorted(t[1] for t in times.values() if t[1] is not None)
    reloaded = sum(1 for t in times.values() if t[2])
    waves = "all at once" if args.wave >= args.logins else f"in waves of {args.wave}"
    what = f"{args.logins} students log in {waves}"
    if started_in:
        rows.append((f"{what}: their servers started (the hub's own figure)",
                     f"{statistics.median(started_in):.0f} s",
                     f"median; slowest {started_in[-1]:.0f} s"))
    if lab:
        rows.append((f"{what}: JupyterLab loaded", f"{statistics.median(lab):.0f} s",
                     f"median; slowest {lab[-1]:.0f} s; {reloaded} of {args.logins} had to "
                     f"reload the hub's spawn-pending page (its scripts timed out)"))
    notes = (f"median; 90th percentile {ready[math.ceil(0.9 * len(ready)) - 1]:.0f} s, slowest "
             f"{ready[-1]:.0f} s; " if ready else "")
    rows.append((f"{what}: time to first lesson",
                 f"{statistics.median(ready):.0f} s" if ready else "-",
                 f"{notes}{len(ready)} of {args.logins} reached it in {wall:.0f} s "
                 f"(limit {args.timeout} s each); peak memory of the hub, proxy, servers and "
                 f"kernels {memory.total / MIB:.0f} MiB"))


def print_table(args, rows, part=""):
    print(f"\nCourse load{part}, lesson {args.lesson}: {platform.python_implementation()} "
          f"{platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}")
    print("| what | time | notes |\n|---|---|---|")
    for what, figure, notes in rows:
        print(f"| {what} | {figure} | {notes} |")
    sys.stdout.flush()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--jobs", default="1,2", help="autograde runs, comma-separated")
    parser.add_argument("--logins", type=int, default=20)
    parser.add_argument("--wave", type=int, default=0, help="logins at once (default: all)")
    parser.add_argument("--lesson", default="01")
    parser.add_argument("--timeout", type=int, default=600,
                        help="seconds a student may take to reach the lesson")
    parser.add_argument("--skip-grading", action="store_true")
    parser.add_argument("--skip-hub", action="store_true")
    parser.add_argument("--baseline", action="store_true",
                        help="also grade the same submissions with nbgrader's own autograde "
                             "(no sandbox), for the ratio")
    args = parser.parse_args(argv)
    args.jobs = [int(j) for j in args.jobs.split(",")]
    args.wave = args.wave or args.logins
    rows = []
    with tempfile.TemporaryDirectory(prefix="course-load-") as scratch:
        if not args.skip_grading:
            grading(args, Path(scratch) / "grading", rows)
            print_table(args, rows, " (grading)")   # kept, whatever the logins do
        if not args.skip_hub:
            logins(args, Path(scratch) / "hub", rows)
            print_table(args, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
