"""Per-channel elementwise ops in compiled programs (``autodiff/compiler/rowwise.py``):
written with a wide inner loop, and equal to the eager ops bit for bit, NaN, inf and
signed zeros included, whichever side the channel row is on."""

import numpy as np
import pytest

import autodiff as ad
from autodiff.compiler import compile_graph, rowwise

SHAPE = (32, 8, 8, 16)   # 32,768 elements, 16 channels: written wide


def _program(f, *args):
    graph = ad.function(f).get_concrete_function(*args).graph
    return compile_graph(graph, "f", ["x", "s"][:len(args)])


def _check(f, *args):
    eager = [t.numpy().copy() for t in ad.nest.flatten(f(*args))]
    program = _program(f, *args)
    compiled = [t.numpy() for t in ad.nest.flatten(program.run(list(args)))]
    for e, c in zip(eager, compiled):
        assert e.shape == c.shape and e.dtype == c.dtype
        np.testing.assert_array_equal(c, e)
        assert (np.signbit(c) == np.signbit(e)).all()   # signed zeros too
    return program.source


def _awkward(shape, dtype, seed):
    """Random values with NaN, inf, -inf, 0.0 and -0.0 planted."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(dtype)
    flat = a.reshape(-1)
    flat[rng.choice(flat.size, 5 * 3, replace=False).reshape(5, 3)] = \
        np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype)[:, None]
    return ad.constant(a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", [ad.add, ad.subtract, ad.multiply, ad.divide])
@pytest.mark.parametrize("row_first", [False, True])
@pytest.mark.parametrize("row_shape", [(16,), (1, 1, 1, 16)])
def test_a_channel_row_meets_an_activation_as_eager_ops_do(dtype, op, row_first, row_shape):
    x = _awkward(SHAPE, dtype, 1)
    s = ad.reshape(_awkward((16,), dtype, 2), row_shape)

    def f(x, s):
        y = ad.exp(x * 0.5)                      # a fresh array the op may write over
        return op(s, y) if row_first else op(y, s)

    source = _check(f, x, s)
    assert "rowwise(" in source, source


def test_a_mean_gradient_broadcasts_into_a_fresh_array_and_divides_in_place():
    x = _awkward(SHAPE, np.float32, 3)

    def f(x):
        with ad.GradientTape() as tape:
            tape.watch(x)
            mean = ad.reduce_mean(x, axis=[0, 1, 2], keepdims=True)
            loss = ad.reduce_sum(ad.square(x - mean) * ad.range(16, dtype=ad.float32))
        return tape.gradient(loss, x)

    source = _check(f, x)
    assert "broadcast_rows(" in source, source


def test_batch_norm_training_step_compiled_equals_eager_bit_for_bit():
    rng = np.random.default_rng(5)
    x = ad.constant(rng.standard_normal((16, 8, 8, 3)).astype(np.float32))
    y = ad.constant(rng.integers(0, 4, 16).astype(np.int32))
    results = []
    for jit in (False, True):
        ad.keras.utils.set_random_seed(7)
        model = ad.keras.Sequential([
            ad.keras.Input((8, 8, 3)), ad.keras.layers.Conv2D(16, 3, padding="same"),
            ad.keras.layers.BatchNormalization(), ad.keras.layers.ReLU(),
            ad.keras.layers.Flatten(), ad.keras.layers.Dense(4)])
        optimizer = ad.keras.optimizers.Adam(1e-2)

        def step(x, y):
            with ad.GradientTape() as tape:
                logits = model(x, training=True)
                loss = ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            variables = model.trainable_variables
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            return loss

        run = ad.function(step, jit_compile=True) if jit else step
        losses = [float(run(x, y)) for _ in range(3)]
        results.append((losses, [w.copy() for w in model.get_weights()]))
        if jit:
            source = run.experimental_get_compiler_ir(x, y)()
            assert "rowwise(" in source and "broadcast_rows(" in source, source
    (eager_losses, eager_weights), (jit_losses, jit_weights) = results
    assert jit_losses == eager_losses
    for e, c in zip(eager_weights, jit_weights):
        np.testing.assert_array_equal(c, e)


def test_a_view_argument_takes_numpys_own_broadcast():
    # the program's argument is a transposed view: not C-contiguous, so not reshaped
    x = np.random.default_rng(6).standard_normal((16, 8, 8, 32)).astype(np.float32)
    view = ad.constant(np.transpose(x, (3, 1, 2, 0)))
    s = ad.constant(np.linspace(-2, 2, 16).astype(np.float32))
    source = _check(lambda x, s: x * s, view, s)
    assert "rowwise(" in source
    np.testing.assert_array_equal(rowwise.rowwise(np.multiply, view.numpy(), s.numpy(), 64, False),
                                  view.numpy() * s.numpy())


@pytest.mark.parametrize("shape, row", [((8, 16), (16,)),            # too small to matter
                                        ((32, 8, 8, 128), (128,)),    # rows already wide
                                        ((32, 8, 8, 16), (8, 1, 16))])  # not a channel row
def test_other_shapes_are_written_as_plain_expressions(shape, row):
    x = ad.constant(np.ones(shape, np.float32))
    s = ad.constant(np.full(row, 2.0, np.float32))
    assert "rowwise(" not in _check(lambda x, s: x * s, x, s)
