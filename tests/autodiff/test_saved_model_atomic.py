"""A save is published as one unit: racing readers and writers, and a save killed at every step.

Two models that differ in both graph and weights, A (``x * 2``) and B
(``x + 5``), are saved over one path. Whatever happens, a load must give A
or B whole: f(3) is 6 or 8, never 15 (A's graph with B's weights) or 5.
Writers racing each other (processes and threads) must never take the
directory for something that is not a saved model.
"""

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import autodiff as ad
from autodiff.saved_model import store

ROOT = Path(__file__).resolve().parents[2]
POSIX_ONLY = pytest.mark.skipif(os.name != "posix", reason="fork and SIGKILL are POSIX")

MODELS = """
import autodiff as ad

class A(ad.Module):
    def __init__(self):
        super().__init__()
        self.w = ad.Variable(2.0, name="w")

    @ad.function(input_signature=[ad.TensorSpec([])])
    def f(self, x):
        return x * self.w

class B(ad.Module):
    def __init__(self):
        super().__init__()
        self.w = ad.Variable(5.0, name="w")

    @ad.function(input_signature=[ad.TensorSpec([])])
    def f(self, x):
        return x + self.w
"""
namespace = {}
exec(MODELS, namespace)  # noqa: S102  (the models, shared with the child processes)
A, B = namespace["A"], namespace["B"]

READER = """
import json, sys
import autodiff as ad
path, stop = sys.argv[1], sys.argv[2]
import os
counts = {"loads": 0, "failed": 0, "mixed": 0, "seen": []}
while not os.path.exists(stop):
    try:
        loaded = ad.saved_model.load(path)
    except Exception as err:
        counts["failed"] += 1
        counts["seen"].append(repr(err))
        continue
    counts["loads"] += 1
    value = float(loaded.f(3.0))
    op = loaded.f.concrete_functions[0].graph.nodes[0].op_type
    if (op, value) not in (("Mul", 6.0), ("AddV2", 8.0)):
        counts["mixed"] += 1
print(json.dumps(counts))
"""

WRITER = """
import sys
import autodiff as ad
{models}
path, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    ad.saved_model.save(A() if i % 2 else B(), path)
"""


def which_model(path):
    """'A' or 'B': the model at ``path``, checked to be whole (graph and weights agree)."""
    loaded = ad.saved_model.load(str(path))
    op = loaded.f.concrete_functions[0].graph.nodes[0].op_type
    value = float(loaded.f(3.0))
    assert (op, value) in (("Mul", 6.0), ("AddV2", 8.0)), f"a mixed model: {op} gives {value}"
    return "A" if op == "Mul" else "B"


def _python(code, *args):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=ROOT)


def test_readers_racing_a_writer_always_load_one_whole_model(tmp_path, engine_backend):
    if engine_backend != "numpy":
        pytest.skip("the processes race on files, the same on every backend: raced once")
    path, stop, n_saves = tmp_path / "m", tmp_path / "stop", 150
    ad.saved_model.save(A(), str(path))
    readers = [_python(READER, path, stop) for _ in range(2)]
    in_thread = {"loads": 0, "failed": [], "mixed": 0}

    def read_here():
        while not stop.exists():
            try:
                which_model(path)
                in_thread["loads"] += 1
            except AssertionError:
                in_thread["mixed"] += 1
            except Exception as err:  # noqa: BLE001 - every failure is counted
                in_thread["failed"].append(repr(err))

    thread = threading.Thread(target=read_here)
    thread.start()
    writer = _python(WRITER.format(models=MODELS), path, n_saves)
    _, err = writer.communicate(timeout=120)
    stop.touch()
    thread.join()
    assert writer.returncode == 0, err
    results = [json.loads(r.communicate(timeout=60)[0]) for r in readers] + [
        {"loads": in_thread["loads"], "failed": len(in_thread["failed"]),
         "mixed": in_thread["mixed"], "seen": in_thread["failed"]}]
    loads = sum(r["loads"] for r in results)
    print(f"{n_saves} saves raced {loads} loads")
    assert [r["failed"] for r in results] == [0, 0, 0], [r["seen"][:3] for r in results]
    assert [r["mixed"] for r in results] == [0, 0, 0]
    assert loads > 50  # the readers really raced the writer
    assert which_model(path) == "A"  # the last save (i = n - 1, odd) wins


def _save_repeatedly(path, n, errors):
    """Saves A and B in turn ``n`` times; the exceptions go to ``errors`` (a list or a queue)."""
    found = []
    for i in range(n):
        try:
            ad.saved_model.save(A() if i % 2 else B(), path)
        except Exception as err:  # noqa: BLE001 - every failure is counted
            found.append(repr(err))
    if isinstance(errors, list):
        errors.extend(found)
    else:
        errors.put(found)


@POSIX_ONLY
def test_writers_racing_each_other_never_refuse_the_directory(tmp_path, engine_backend):
    # A writer used to check the directory before taking the lock: another writer renaming
    # its staging directory or removing an old version between that check's listdir and
    # its isdir made the save fail with "... so not a saved model".
    if engine_backend != "numpy":
        pytest.skip("the writers race on files, the same on every backend: raced once")
    path, n_saves = str(tmp_path / "m"), 25
    ad.saved_model.save(A(), path)
    fork = multiprocessing.get_context("fork")   # before any thread of ours starts
    queue = fork.Queue()
    processes = [fork.Process(target=_save_repeatedly, args=(path, n_saves, queue))
                 for _ in range(3)]
    for process in processes:
        process.start()
    in_threads, stop, loads = [], threading.Event(), []

    def read_until_stopped():
        while not stop.is_set():
            try:
                which_model(path)
                loads.append(1)
            except Exception as err:  # noqa: BLE001 - every failure is counted
                in_threads.append(repr(err))

    savers = [threading.Thread(target=_save_repeatedly, args=(path, n_saves, in_threads))
              for _ in range(2)]
    reader = threading.Thread(target=read_until_stopped)
    for thread in savers + [reader]:
        thread.start()
    in_processes = [error for _ in processes for error in queue.get(timeout=120)]
    for thread in savers:
        thread.join()
    stop.set()
    reader.join()
    for process in processes:
        process.join(timeout=60)
    assert [p.exitcode for p in processes] == [0, 0, 0]
    assert in_processes + in_threads == []
    assert len(loads) > 10                     # the reader really raced the writers
    versions = [n for n in os.listdir(path) if n.startswith("v-")]
    assert len(versions) <= 2 and which_model(path) in ("A", "B")


def _save_killed_at(step, model_class, path):
    """Saves in a forked child that SIGKILLs itself just before ``step``; whether it died."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            def hook(name):
                if name == step:
                    os.kill(os.getpid(), signal.SIGKILL)
            store._step_hook = hook
            if ad.get_backend() == "cupy":
                # A forked child cannot use CUDA; the steps are file operations on host bytes.
                ad.set_backend("numpy")
            ad.saved_model.save(model_class(), str(path))
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def _leftovers(path):
    current = os.path.basename(store.resolve(str(path)))
    return sorted(n for n in os.listdir(path)
                  if n not in (store.POINTER_FILE, store.LOCK_FILE, current)
                  and not n.startswith("v-"))


def test_the_save_steps_are_the_documented_ones(tmp_path):
    seen = []
    store._step_hook = seen.append
    try:
        ad.saved_model.save(A(), str(tmp_path / "m"))
    finally:
        store._step_hook = None
    assert tuple(seen) == store.STEPS


@POSIX_ONLY
@pytest.mark.parametrize("step", store.STEPS)
def test_a_save_killed_at_any_step_leaves_the_old_or_the_new_model(tmp_path, step):
    path = tmp_path / "m"
    ad.saved_model.save(A(), str(path))
    ad.saved_model.save(A(), str(path))   # a previous version exists too
    assert _save_killed_at(step, B, path)
    published = STEPS_AFTER_PUBLISH.index(step) if step in STEPS_AFTER_PUBLISH else -1
    assert which_model(path) == ("B" if published >= 0 else "A")
    ad.saved_model.save(A(), str(path))   # the next save cleans up
    assert which_model(path) == "A"
    assert _leftovers(path) == []
    versions = [n for n in os.listdir(path) if n.startswith("v-")]
    assert len(versions) <= 2            # the new one and the one it replaced


STEPS_AFTER_PUBLISH = store.STEPS[store.STEPS.index("replace pointer") + 1:]


@POSIX_ONLY
@pytest.mark.parametrize("step", store.STEPS)
def test_a_first_save_killed_at_any_step_leaves_nothing_or_the_model(tmp_path, step):
    path = tmp_path / "m"
    assert _save_killed_at(step, B, path)
    if step in STEPS_AFTER_PUBLISH:
        assert which_model(path) == "B"
    else:
        with pytest.raises(FileNotFoundError):
            ad.saved_model.load(str(path))
    ad.saved_model.save(A(), str(path))   # a half-written first save is no obstacle
    assert which_model(path) == "A"
    assert _leftovers(path) == []


def test_a_model_of_the_older_layout_loads_and_is_upgraded_by_the_next_save(tmp_path):
    path = tmp_path / "m"
    ad.saved_model.save(A(), str(path))
    version = Path(store.resolve(str(path)))
    for name in ("saved_model.json", "variables.npz"):     # the layout before versions
        os.replace(version / name, path / name)
    os.rmdir(version)
    os.remove(path / store.POINTER_FILE)
    assert which_model(path) == "A"
    ad.saved_model.save(B(), str(path))
    assert which_model(path) == "B"
    assert not (path / "saved_model.json").exists()


@pytest.mark.parametrize("make", [
    lambda p: p.write_text("my thesis"),
    lambda p: (p.mkdir(), (p / "notes.txt").write_text("my thesis")),
    lambda p: (p.mkdir(), (p / "photos").mkdir()),
    lambda p: (p.mkdir(), (p / "v-000001-0123abcd").write_text("named like a version")),
    lambda p: (p.mkdir(), (p / "saved_model.json").write_text('{"format": "another tool"}'),
               (p / "variables.npz").write_text("not ours either")),
    lambda p: (p.mkdir(), (p / "variables.npz").write_text("no JSON beside it")),
])
def test_saving_over_something_that_is_not_a_saved_model_refuses_and_keeps_it(tmp_path, make):
    path = tmp_path / "target"
    make(path)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    with pytest.raises(ValueError, match="not a saved model; refusing"):
        ad.saved_model.save(A(), str(path))
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_saving_something_that_is_not_a_module_is_a_type_error(tmp_path):
    with pytest.raises(TypeError, match="the argument obj must be an ad.Module.*int 42"):
        ad.saved_model.save(42, str(tmp_path / "m"))
    assert not (tmp_path / "m").exists()


def test_current_version_names_the_directory_the_pointer_points_at(tmp_path):
    class Doubler(ad.Module):
        @ad.function(input_signature=[ad.TensorSpec(None)])
        def __call__(self, x):
            return x * 2.0

    path = tmp_path / "model"
    ad.saved_model.save(Doubler(), path)
    first = ad.saved_model.current_version(path)
    assert sorted(os.listdir(first)) == ["saved_model.json", "variables.npz"]
    ad.saved_model.save(Doubler(), path)
    second = ad.saved_model.current_version(path)
    assert second != first and os.path.dirname(second) == str(path)
    with pytest.raises(FileNotFoundError):
        ad.saved_model.current_version(tmp_path / "nothing")
