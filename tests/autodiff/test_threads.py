"""Tapes belong to one thread: threads that record at once never see each other's ops.

Eight threads take 200 gradient steps each while the interpreter switches
threads as often as it can (``sys.setswitchinterval(1e-5)``). Every gradient
is compared with the hand-derived one, and every tape must hold exactly the
records its own thread made.
"""

import sys
import threading

import numpy as np
import pytest

import autodiff as ad

THREADS = 8
STEPS = 200


@pytest.fixture
def fast_switching():
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


def run_in_threads(work):
    """Runs ``work(k)`` in THREADS threads at once; returns their errors (empty when all passed)."""
    errors = []
    start = threading.Barrier(THREADS)

    def body(k):
        try:
            start.wait()
            work(k)
        except BaseException as err:  # noqa: BLE001 - reported to the main thread
            errors.append(f"thread {k}: {type(err).__name__}: {err}")

    threads = [threading.Thread(target=body, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def one_step(w, x, persistent):
    """loss = sum((x @ w)^2): 2 records (MatMul, Square) and a ReduceSum: 3 in all."""
    with ad.GradientTape(persistent=persistent) as tape:
        loss = ad.reduce_sum(ad.square(ad.matmul(x, w)))
    n_records = len(tape.records)
    grad = tape.gradient(loss, w)
    return n_records, grad


def expected_grad(w, x):
    return 2.0 * x.T @ (x @ w)


@pytest.mark.parametrize("persistent", [False, True])
@pytest.mark.parametrize("shared", [False, True], ids=["private-model", "shared-model"])
def test_threads_recording_at_once_get_exact_gradients_and_only_their_own_records(
        fast_switching, persistent, shared):
    rng = np.random.default_rng(0)
    shared_w = ad.Variable(rng.normal(size=(3, 2)))
    bad = []

    def work(k):
        local = np.random.default_rng(100 + k)
        w = shared_w if shared else ad.Variable(local.normal(size=(3, 2)))
        for step in range(STEPS):
            x = local.normal(size=(4, 3))
            n_records, grad = one_step(w, ad.constant(x), persistent)
            want = expected_grad(w.numpy(), x)
            if n_records != 3:
                bad.append(f"thread {k} step {step}: {n_records} records, not 3")
            elif grad is None or not np.allclose(grad.numpy(), want, rtol=1e-12, atol=1e-12):
                bad.append(f"thread {k} step {step}: gradient {grad} != {want}")

    errors = run_in_threads(work)
    assert errors == []
    assert bad == []
    assert ad.tape.active == []  # nothing left recording in this thread either


def test_a_tape_in_one_thread_does_not_record_another_threads_ops(fast_switching):
    x = ad.constant(2.0)
    other_ops_done = threading.Event()

    def other_thread():
        for _ in range(50):
            ad.sin(x) * x   # would land on the main thread's tape if tapes were shared
        other_ops_done.set()

    with ad.GradientTape() as tape:
        tape.watch(x)
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        y = x * x
    assert other_ops_done.is_set()
    assert [r.op_type for r in tape.records] == ["Mul"]
    assert float(tape.gradient(y, x)) == 4.0


def test_forward_accumulators_and_traced_functions_in_threads_stay_in_their_thread(
        fast_switching):
    @ad.function
    def cube(v):
        return v * v * v

    bad = []

    def work(k):
        v = ad.constant(float(k + 1), dtype=ad.float64)
        for step in range(STEPS // 4):
            with ad.GradientTape() as tape:
                tape.watch(v)
                with ad.autodiff.ForwardAccumulator(v, ad.constant(1.0, dtype=ad.float64)) as acc:
                    y = cube(v) + ad.sin(v)
                jvp = acc.jvp(y)
            grad = tape.gradient(y, v)
            want = 3 * (k + 1) ** 2 + np.cos(k + 1)
            if jvp is None or abs(float(jvp) - want) > 1e-9:
                bad.append(f"thread {k} step {step}: jvp {jvp} != {want}")
            if grad is None or abs(float(grad) - want) > 1e-9:
                bad.append(f"thread {k} step {step}: gradient {grad} != {want}")

    errors = run_in_threads(work)
    assert errors == []
    assert bad == []


def test_second_order_with_nested_tapes_in_threads(fast_switching):
    bad = []

    def work(k):
        x = ad.Variable(float(k) / 4 + 0.5, dtype=ad.float64)
        for step in range(STEPS // 4):
            with ad.GradientTape() as outer:
                with ad.GradientTape() as inner:
                    y = x * x * x
                dy = inner.gradient(y, x)
            d2y = outer.gradient(dy, x)
            value = x.numpy()
            if abs(float(dy) - 3 * value ** 2) > 1e-12 or abs(float(d2y) - 6 * value) > 1e-12:
                bad.append(f"thread {k} step {step}: {dy}, {d2y} at x={value}")

    errors = run_in_threads(work)
    assert errors == []
    assert bad == []


def test_tracing_in_one_thread_never_moves_another_threads_random_draws(fast_switching):
    """Tracing draws from private copies of the streams: another thread's sequence is untouched."""
    def draws():
        return [float(ad.random.normal([])) for _ in range(300)]

    ad.random.set_seed(7)
    want = draws()
    ad.random.set_seed(7)
    tracing_done = threading.Event()

    def keep_tracing():
        while not tracing_done.is_set():
            noisy = ad.function(lambda x: x + ad.random.normal([3]))  # a new function: a new trace
            noisy.get_concrete_function(ad.TensorSpec([3], ad.float32))

    tracer = threading.Thread(target=keep_tracing)
    tracer.start()
    try:
        got = draws()
    finally:
        tracing_done.set()
        tracer.join()
    ad.random.set_seed(None)
    assert got == want
