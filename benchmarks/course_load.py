"""A course under load: grading 200 submissions, and 20 students logging in at once.

    python -m benchmarks.course_load [--submissions 200] [--jobs 1,2] [--logins 20]
                                     [--wave 20] [--lesson 01] [--skip-grading] [--skip-hub]

Two measurements, reported in one table; nothing is asserted about speed:

- **Grading.** A course with one lesson released; ``--submissions`` simulated
  students fetch it, answer it (``course.simulate``: student k gets the first
  k mod 7 of lesson 1's six exercises right) and submit through nbgrader's
  exchange. The teacher's steps then run as ``python -m course`` runs them:
  collect, autograde (once per ``--jobs`` value, all submissions each time),
  generate_feedback, release_feedback. Reported: each step's wall time, the
  per-submission autograde time (median and slowest), and peak memory, sampled
  every 0.2 s with psutil: the largest resident set of the whole process tree
  (this process, nbgrader's workers and their kernels) and of the largest single
  process. Every score is checked against the answers first: a wrong grade is
  never reported as a fast one.
- **Logins.** ``course.localhub.LocalHub`` (JupyterHub, DummyAuthenticator,
  SimpleLocalProcessSpawner, configurable-http-proxy, all on 127.0.0.1) with
  ``--logins`` students, lesson 1 released. Each student is a Chromium context
  (Playwright, Debian's ``/usr/bin/chromium``): log in, wait for JupyterLab,
  open *Nbgrader > Assignment List*, *Fetch*, open the notebook, wait for its
  kernel. Time to first lesson is from pressing *Sign in* to that kernel being
  idle. Students start in waves of ``--wave`` at once (all of them by default);
  a smaller wave is the answer when a small machine cannot take them all at once.
  Peak memory is that of the hub, the proxy, the servers and their kernels.

Needs the ``hub`` extra, configurable-http-proxy (``npm ci --prefix tests/hub``)
and Chromium for the logins. A machine of 2 cores shared with other work gives
noisy figures: the table says what it ran on.
"""

import argparse
import asyncio
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

from course.layout import init_course  # noqa: E402
from course.simulate import submit_class  # noqa: E402
from course.teacher import Teacher  # noqa: E402

CHROMIUM = os.environ.get("TAPESCHOOL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]
NOTEBOOK_READY = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session &&
                 panel.sessionContext.session.kernel;
  return !!panel && !!panel.content && !!panel.content.widgets &&
         panel.content.widgets.length > 0 && !!kernel &&
         kernel.connectionStatus === "connected" && kernel.status === "idle";
}"""
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


def under(folder):
    """Every process whose working folder is ``folder`` or inside it, with its children."""
    import psutil

    def select():
        found = {}
        for process in psutil.process_iter(["cwd"]):
            cwd = process.info.get("cwd") or ""
            if (cwd + os.sep).startswith(str(folder) + os.sep):
                found[process.pid] = process
                try:
                    found.update((c.pid, c) for c in process.children(recursive=True))
                except psutil.NoSuchProcess:
                    pass
        return list(found.values())
    return select


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
    for jobs in args.jobs:
        with MemoryPeak(this_tree) as memory:
            started = time.monotonic()
            scores = teacher.autograde(assignment, force=True, jobs=jobs)
            wall = time.monotonic() - started
        wrong = {s: (scores.get(s), e) for s, e in expected.items() if scores.get(s) != e}
        if wrong:
            raise SystemExit(f"autograde gave scores the answers do not earn: {wrong}")
        each = sorted(teacher.last_progress.seconds.values())
        rows.append((f"autograde {n} submissions, {jobs} at a time", f"{wall:.0f} s",
                     f"{wall / n:.2f} s per submission; each took {statistics.median(each):.1f} s "
                     f"(median), {each[-1]:.1f} s (slowest); peak memory "
                     f"{memory.total / MIB:.0f} MiB in all, {memory.single / MIB:.0f} MiB "
                     f"in one process"))
    with MemoryPeak(this_tree) as memory:
        timed(rows, f"generate_feedback for {n}", lambda: teacher.generate_feedback(assignment))
    rows[-1] = rows[-1][:2] + (f"peak memory {memory.total / MIB:.0f} MiB",)
    timed(rows, f"release_feedback for {n}", lambda: teacher.return_feedback(assignment))


async def first_lesson(browser, hub, name, assignment, notebook, timeout_ms):
    """One student's way from the login page to the lesson open with its kernel idle."""
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    page.set_default_timeout(timeout_ms)
    try:
        await page.goto(f"{hub.url}/hub/login")
        await page.fill("#username_input", name)
        await page.fill("#password_input", hub.password)
        started = time.monotonic()
        await page.click("#login_submit")
        await page.wait_for_url(re.compile(rf".*/user/{name}/lab.*"))
        await page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").first.wait_for()
        lab = time.monotonic() - started
        await page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").first.click()
        await page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
        panel = page.locator("#nbgrader-assignment-list")
        await panel.locator("#released_assignments_list .list_item", has_text=assignment).locator(
            "button", has_text="Fetch").click()
        fetched = panel.locator("#fetched_assignments_list > .list_item", has_text=assignment)
        await fetched.locator("a.assignment-notebooks-link").click()
        await fetched.locator(".nested_list_item a", has_text=notebook[:-6]).click()
        await page.wait_for_function(NOTEBOOK_READY)
        return lab, time.monotonic() - started
    finally:
        await context.close()


async def logins_in_waves(hub, names, wave, assignment, notebook):
    from playwright.async_api import async_playwright

    times = {}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for start in range(0, len(names), wave):
                batch = names[start:start + wave]
                results = await asyncio.gather(*(
                    first_lesson(browser, hub, n, assignment, notebook, 600_000) for n in batch))
                times.update(zip(batch, results))
        finally:
            await browser.close()
    return times


def logins(args, work, rows):
    from course.layout import notebook_name
    from course.localhub import LocalHub
    from course.simulate import student_names

    course = init_course(work / "grader" / "tapeschool", exchange=work / "exchange",
                         assignments=[args.lesson], one_os_user=True)
    assignment = Teacher(course).release(args.lesson)
    names = student_names(args.logins)
    with LocalHub(work, course, names, ["ines"], spawn_timeout=600) as hub:
        with MemoryPeak(under(work)) as memory:
            started = time.monotonic()
            times = asyncio.run(logins_in_waves(hub, names, args.wave, assignment,
                                                notebook_name(assignment)))
            wall = time.monotonic() - started
    lab = sorted(t[0] for t in times.values())
    ready = sorted(t[1] for t in times.values())
    waves = "all at once" if args.wave >= args.logins else f"in waves of {args.wave}"
    rows.append((f"{args.logins} students log in {waves}: JupyterLab loaded",
                 f"{statistics.median(lab):.0f} s", f"median; slowest {lab[-1]:.0f} s"))
    rows.append((f"{args.logins} students log in {waves}: time to first lesson",
                 f"{statistics.median(ready):.0f} s",
                 f"median; 90th percentile {ready[int(0.9 * (len(ready) - 1))]:.0f} s, slowest "
                 f"{ready[-1]:.0f} s; all {args.logins} in {wall:.0f} s; peak memory of the hub, "
                 f"proxy, servers and kernels {memory.total / MIB:.0f} MiB"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--jobs", default="1,2", help="autograde runs, comma-separated")
    parser.add_argument("--logins", type=int, default=20)
    parser.add_argument("--wave", type=int, default=0, help="logins at once (default: all)")
    parser.add_argument("--lesson", default="01")
    parser.add_argument("--skip-grading", action="store_true")
    parser.add_argument("--skip-hub", action="store_true")
    args = parser.parse_args(argv)
    args.jobs = [int(j) for j in args.jobs.split(",")]
    args.wave = args.wave or args.logins
    rows = []
    with tempfile.TemporaryDirectory(prefix="course-load-") as scratch:
        if not args.skip_grading:
            grading(args, Path(scratch) / "grading", rows)
        if not args.skip_hub:
            logins(args, Path(scratch) / "hub", rows)
    cores = os.cpu_count()
    print(f"\nCourse load, lesson {args.lesson}: {platform.python_implementation()} "
          f"{platform.python_version()}, {cores} cores, {platform.machine()}")
    print("| what | time | notes |\n|---|---|---|")
    for what, figure, notes in rows:
        print(f"| {what} | {figure} | {notes} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
