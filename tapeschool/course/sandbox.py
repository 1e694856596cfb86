"""A sandbox for one student's notebook: bubblewrap, an unprivileged user, limits, no network.

Grading runs student code, and student code is hostile. Each submission runs as::

    bwrap (as root: new mount, pid, network, ipc and uts namespaces; dies with us)
      -> setpriv (an unprivileged uid of its own, no groups, no capabilities at all)
        -> python -m tapeschool.course.run_notebook /grading/notebook.ipynb /grading/out ...

What the sandbox sees: the Python installation and the system's libraries
read-only, the three packages the lessons import (``autodiff``, ``widgets``,
``tapeschool``) read-only, and ``/grading``: a folder holding this submission's
notebook and an empty ``out/``. Where the teacher editions lie inside what it sees
(the lessons a wheel carries in ``tapeschool/lessons/``), an empty folder covers them. Nothing else of the machine: not the course
directory (``source/`` with the solutions, the gradebook, the key, other
submissions), not the exchange, not the teacher's home, not the repository's
teacher editions. Its environment is built from nothing (no tokens, no
``PYTHONPATH``), its network is a loopback of its own.

Limits (``Limits``): CPU seconds and address space per process, processes per
sandbox (each job slot has its own uid, so the count is this submission's),
bytes per file written, and wall time for the whole notebook: at the deadline
the sandbox is killed, and with it every process the student started (the pid
namespace ends with its first process). Where the machine lets us (a writable
cgroup v1 ``memory`` hierarchy, or cgroup v2), memory is also capped for the whole
submission; ``Sandbox.memory_capped`` says whether it was.

Reading back: once every process of the sandbox is gone, ``read_output`` opens a
file under ``out/`` without following links, only if it is a plain file, and
only up to a size; a student's symlink to the key reads as nothing.

What it must not do: run anything of the student's as root, or give the
sandbox a path the teacher did not list here.
"""

import contextlib
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("autodiff", "widgets", "tapeschool")
# the system's read-only parts a Python kernel needs (what exists of them)
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc/alternatives",
          "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/fonts",
          "/etc/localtime", "/etc/mime.types", "/etc/ssl")
FIRST_UID = 61000            # job slot k runs as uid/gid FIRST_UID + k
SANDBOX_HOME = "/grading"


class SandboxUnavailable(RuntimeError):
    """bubblewrap (or setpriv) is missing, or cannot make a sandbox on this machine."""


@dataclass(frozen=True)
class Limits:
    """What one submission may use. Wall time is for the whole notebook."""
    wall_seconds: float = 600
    cpu_seconds: int = 600
    memory_bytes: int = 4 << 30          # per process (address space), and per sandbox
    processes: int = 256                 # threads count too (a kernel runs about 10)
    file_bytes: int = 64 << 20           # any one file written
    output_bytes: int = 2 << 20          # the executed notebook's outputs, all cells together
    cell_output_bytes: int = 100_000     # one cell's outputs


@dataclass
class SandboxResult:
    returncode: int
    timed_out: bool
    seconds: float
    stderr: str


def bwrap_available():
    """``None`` when sandboxes can be made here, else why not (one line)."""
    for tool in ("bwrap", "setpriv"):
        if shutil.which(tool) is None:
            return (f"{tool} is not installed (Debian: apt-get install "
                    f"{'bubblewrap' if tool == 'bwrap' else 'util-linux'})")
    if os.geteuid() != 0:
        return "grading in a sandbox needs root, to run each submission as a user of its own"
    return None


class Sandbox:
    """One submission's folder and the command that runs it.

    Args:
        slot: the job slot (0, 1, ...): which uid the sandbox runs as.
        limits: a ``Limits``.
        scratch: where the sandbox's folder is made (default: the system's temp dir).

    Example:
        >>> with Sandbox(0, Limits(wall_seconds=60)) as box:
        ...     shutil.copy(notebook, box.folder / "notebook.ipynb")
        ...     result = box.run(["-m", "tapeschool.course.run_notebook", ...])
        ...     executed = box.read_output("executed.ipynb", 10 << 20)
    """

    def __init__(self, slot, limits, scratch=None):
        why = bwrap_available()
        if why:
            raise SandboxUnavailable(why)
        self.uid = FIRST_UID + slot
        self.limits = limits
        self.parent = Path(tempfile.mkdtemp(prefix="tapeschool-grade-", dir=scratch))
        os.chmod(self.parent, 0o711)      # the sandbox's uid may pass, nobody may list
        self.folder = self.parent / "grading"
        (self.folder / "out").mkdir(parents=True)
        _copy_font_cache(self.folder / ".matplotlib")
        self.memory_capped = False
        self._cgroups = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for group in self._cgroups:
            with contextlib.suppress(OSError):
                group.rmdir()
        shutil.rmtree(self.parent, ignore_errors=True)   # never follows a student's link

    def give_to_sandbox(self):
        """The folder and what is in it now belong to the sandbox's uid."""
        for path in [self.folder, *self.folder.rglob("*")]:
            os.lchown(path, self.uid, self.uid)

    def command(self, python_args):
        """The whole command line: bwrap, then setpriv, then the sandbox's Python."""
        uid = str(self.uid)
        python = _python_executable()
        binds, made = ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"], {"/tmp"}
        for path in [p for p in SYSTEM if os.path.exists(p)] + _python_roots() + _package_roots():
            for parent in reversed(Path(path).parents[:-1]):   # /root, /root/.pyenv, ...
                if str(parent) not in made:                    # passable, not listable
                    binds += ["--perms", "0711", "--dir", str(parent)]
                    made.add(str(parent))
            binds += ["--ro-bind", path, path]
        for path in _hidden_inside(_python_roots() + _package_roots()):
            binds += ["--tmpfs", path]          # an empty folder over the solutions
        env = {"HOME": SANDBOX_HOME, "PATH": f"{Path(python).parent}:/usr/bin:/bin",
               "LANG": "C.UTF-8", "TMPDIR": "/tmp", "MPLBACKEND": "Agg",
               "MPLCONFIGDIR": f"{SANDBOX_HOME}/.matplotlib",
               "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "PYTHONDONTWRITEBYTECODE": "1", "JUPYTER_PLATFORM_DIRS": "1",
               "IPYTHONDIR": f"{SANDBOX_HOME}/.ipython"}
        setenv = [arg for key, value in env.items() for arg in ("--setenv", key, value)]
        # bwrap runs as root (no user namespace: it may then bind what root can read), and
        # inside, setpriv becomes the slot's uid with no capabilities before Python starts
        return ["bwrap", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv",
                *setenv, *binds, "--bind", str(self.folder), SANDBOX_HOME, "--chdir", SANDBOX_HOME,
                "--hostname", "sandbox", "--",
                "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
                python, "-I", *python_args]

    def run(self, python_args):
        """Runs the sandbox to its end or its deadline; every process of it is gone after.

        Returns:
            A ``SandboxResult`` (``timed_out`` when the wall-time limit killed it).
        """
        self.give_to_sandbox()
        self._cgroups = _memory_cgroups(self.limits.memory_bytes, self.limits.processes)
        self.memory_capped = bool(self._cgroups)
        started = time.monotonic()
        process = subprocess.Popen(
            self.command(python_args), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, preexec_fn=self._limit_child, start_new_session=True)
        timed_out = False
        try:
            _, stderr = process.communicate(timeout=self.limits.wall_seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(process)
            _, stderr = process.communicate()
        _kill_group(process)   # anything that left bwrap's session is in our process group
        text = stderr.decode("utf-8", "replace")[-4000:]
        return SandboxResult(process.returncode, timed_out, time.monotonic() - started, text)

    def _limit_child(self):
        # Runs in the child before setpriv: the limits every process of the sandbox inherits.
        for group in self._cgroups:
            with contextlib.suppress(OSError):
                (group / "cgroup.procs").write_text(str(os.getpid()))
        limits = self.limits
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def read_output(self, name, max_bytes):
        """The bytes of ``out/<name>``, or None: missing, a link, not a plain file, too big.

        Only call it once ``run`` returned (no process of the sandbox is left to swap the
        file for a link meanwhile)."""
        out = self.folder / "out"
        if not stat.S_ISDIR(os.lstat(out).st_mode):
            return None
        try:
            fd = os.open(out / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
                return None
            return handle.read(max_bytes + 1)[:max_bytes]


def _copy_font_cache(folder):
    """matplotlib's font list, as this machine's matplotlib built it: without it, every
    sandbox (a fresh home) would spend a second or two building it again. The fonts it
    names are at the same paths inside the sandbox."""
    base = os.environ.get("MPLCONFIGDIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "matplotlib")
    found = sorted(Path(base).glob("fontlist-*.json")) if os.path.isdir(base) else []
    if found:
        folder.mkdir()
        for path in found:
            shutil.copyfile(path, folder / path.name)


def _python_executable():
    """This Python, its folder's links resolved (the sandbox binds real paths) but not its
    own (a virtual environment's ``bin/python`` must stay itself to find its packages)."""
    return os.path.join(os.path.realpath(os.path.dirname(sys.executable)),
                        os.path.basename(sys.executable))


def _hidden_inside(roots):
    """Folders inside what the sandbox sees that hold the teacher editions: the lessons a
    wheel carries (tapeschool/lessons/) and a clone's notebooks/ (and its src/)."""
    here = Path(__file__).resolve().parent.parent           # the tapeschool package
    candidates = [here / "lessons", here.parent / "notebooks"]
    return [str(path) for path in candidates if path.is_dir() and any(
        str(path).startswith(root.rstrip(os.sep) + os.sep) for root in roots)]


def _python_roots():
    roots = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)}
    return sorted(roots)


def package_folders():
    """Where ``autodiff``, ``widgets`` and ``tapeschool`` are, wherever they are installed."""
    import importlib.util

    folders = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            folders.append(os.path.realpath(list(spec.submodule_search_locations)[0]))
    return folders


def _package_roots():
    """The package folders outside the Python installation (an editable install points at a
    checkout: only these folders of it are bound)."""
    inside = _python_roots()
    return [folder for folder in package_folders()
            if not any(folder.startswith(root + os.sep) for root in inside)]


def _memory_cgroups(memory_bytes, processes):
    """Fresh cgroups capping the sandbox's memory and processes, or ``[]`` where this
    machine gives us none (then the per-process limits are all there is)."""
    name = f"tapeschool-{os.getpid()}-{time.monotonic_ns()}"
    root = Path("/sys/fs/cgroup")
    if "memory" in _read(root / "cgroup.controllers"):                      # cgroup v2
        wanted = [(root, {"memory.max": memory_bytes, "pids.max": processes})]
    else:                                                                   # cgroup v1
        wanted = [(root / "memory", {"memory.limit_in_bytes": memory_bytes}),
                  (root / "pids", {"pids.max": processes})]
    groups = []
    for base, files in wanted:
        if not (base / "cgroup.procs").exists():
            continue
        group = base / name
        try:
            group.mkdir()
            for file, value in files.items():
                (group / file).write_text(str(value))
            groups.append(group)
        except OSError:
            with contextlib.suppress(OSError):
                group.rmdir()
    if not any((group / "memory.max").exists() or (group / "memory.limit_in_bytes").exists()
               for group in groups):
        for group in groups:
            with contextlib.suppress(OSError):
                group.rmdir()
        return []
    return groups


def _read(path):
    try:
        return path.read_text()
    except OSError:
        return ""


def _kill_group(process):
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
