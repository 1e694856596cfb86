"""A shared optimizer never loses a step under threads (issue 33, item 5).

Eight threads call ``apply_gradients`` 100 times each on one optimizer, eager
and through ``ad.function`` (traced, and compiled with ``jit_compile=True``),
while the interpreter switches threads as often as it can. Every call must
count (``iterations`` ends at exactly 800), and because every thread applies
the same gradient, a step that is atomic leaves the weights exactly where 800
steps in a row would: a step that read the slots of one call and the counter
of another would not.
"""

import threading

import numpy as np
import pytest

import autodiff as ad
from test_threads import fast_switching  # noqa: F401 - the fixture: switch threads often

THREADS, CALLS = 8, 100
GRADIENT = np.array([[0.5, -1.0, 2.0], [0.25, 0.0, -3.0]], np.float32)

OPTIMIZERS = {
    "adam": lambda: ad.optimizers.Adam(0.01),
    "sgd_momentum": lambda: ad.optimizers.SGD(0.01, momentum=0.9),
}
MODES = ["eager", "traced", "compiled"]


def _stepper(opt, w, mode):
    g = ad.constant(GRADIENT)
    if mode == "eager":
        return lambda: opt.apply_gradients([(g, w)])
    step = ad.function(lambda grad: opt.apply_gradients([(grad, w)]),
                       jit_compile=(mode == "compiled"))
    step.get_concrete_function(ad.TensorSpec(GRADIENT.shape, ad.float32))   # traces, steps nothing
    return lambda: step(g)


def _sequential_result(make):
    opt, w = make(), ad.Variable(np.ones_like(GRADIENT))
    for _ in range(THREADS * CALLS):
        opt.apply_gradients([(ad.constant(GRADIENT), w)])
    return w.numpy()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_eight_threads_sharing_an_optimizer_lose_no_step(name, mode, fast_switching):
    opt, w = OPTIMIZERS[name](), ad.Variable(np.ones_like(GRADIENT))
    step = _stepper(opt, w, mode)
    assert int(opt.iterations.numpy()) == 0    # tracing stepped nothing
    errors, start = [], threading.Barrier(THREADS)

    def body():
        try:
            start.wait()
            for _ in range(CALLS):
                step()
        except BaseException as err:  # noqa: BLE001 - reported to the main thread
            errors.append(f"{type(err).__name__}: {err}")

    threads = [threading.Thread(target=body) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert int(opt.iterations.numpy()) == THREADS * CALLS
    np.testing.assert_allclose(w.numpy(), _sequential_result(OPTIMIZERS[name]),
                               rtol=1e-6, atol=1e-6)


def test_a_traced_step_is_one_optimizer_node_that_reads_the_rate_when_it_runs():
    opt, w = ad.optimizers.SGD(0.5), ad.Variable([1.0, 1.0])
    step = ad.function(lambda g: opt.apply_gradients([(g, w)]))
    graph = str(step.get_concrete_function(ad.TensorSpec([2], ad.float32)).graph)
    assert "OptimizerApply(a0, step=<sgd step over 1 variable>)" in graph
    assert int(step(ad.constant([1.0, 2.0])).numpy()) == 1
    np.testing.assert_allclose(w.numpy(), [0.5, 0.0])
    opt.learning_rate = 0.25                      # read when the node runs, not frozen
    assert int(step(ad.constant([1.0, 2.0])).numpy()) == 2
    np.testing.assert_allclose(w.numpy(), [0.25, -0.5])
