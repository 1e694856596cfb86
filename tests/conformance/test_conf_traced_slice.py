"""``ad.slice`` with begin and size computed inside ``ad.function``, against TensorFlow 2.

``tf.slice(x, begin, size)`` takes begin and size as tensors in a graph: a loop
counter, an argument, ``tf.shape(x)[1] - 2``. One trace serves every value, a
size of -1 reaches the end of the axis as long as it is at that call, and a box
that does not fit raises InvalidArgumentError when the graph runs (never a box
cut short). Here: values, first and second order gradients, forward mode,
tracing counts, ``jit_compile=True`` and a saved model, side by side
(``autodiff/ops/traced_slice.py``).
"""

import numpy as np
import pytest

import autodiff as ad


def _column(xp):
    @xp.function(input_signature=[xp.TensorSpec([None, None]), xp.TensorSpec([], xp.int32)])
    def column(x, i):
        return xp.slice(x, [0, i], [-1, 1])          # a list mixing ints and a tensor
    return column


def _box(xp, jit_compile=False):
    @xp.function(input_signature=[xp.TensorSpec([None, None]), xp.TensorSpec([2], xp.int32),
                                  xp.TensorSpec([2], xp.int32)], jit_compile=jit_compile)
    def box(x, begin, size):
        return xp.slice(x, begin, size)                # two tensor vectors
    return box


def _trimmed(xp):
    @xp.function(input_signature=[xp.TensorSpec([None, None])])
    def trimmed(x):                                    # a size read in the graph
        return xp.slice(x, [1, 1], xp.stack([-1, xp.shape(x)[1] - 2]))
    return trimmed


def _open(xp):
    @xp.function(input_signature=[xp.TensorSpec([None, 3])])
    def rows_after_the_first(x):                       # ints, but a size -1 on a None axis
        return xp.slice(x, [1, 0], [-1, 2])
    return rows_after_the_first


def _weighted_columns(xp):
    @xp.function(input_signature=[xp.TensorSpec([None, None])])
    def weighted(x):                                   # AutoGraph: a loop counter as begin
        total = xp.zeros_like(xp.slice(x, [0, 0], [-1, 1]))
        for i in xp.range(xp.shape(x)[1]):
            total += xp.slice(x, [0, i], [-1, 1]) * xp.cast(i + 1, x.dtype)
        return total
    return weighted


def _matrix(rows, cols, seed=0):
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)


# (program, calls): each call is (x, other arguments), several values and sizes per trace
CASES = {
    "column": (_column, [(_matrix(3, 4), [2]), (_matrix(5, 2, 1), [0]), (_matrix(2, 6, 2), [5]),
                         (_matrix(3, 4, 3), [3])]),
    "box": (_box, [(_matrix(4, 5), [[1, 2], [2, -1]]), (_matrix(3, 3, 1), [[0, 0], [-1, 2]]),
                   (_matrix(6, 2, 2), [[2, 1], [3, 1]]), (_matrix(2, 2, 3), [[2, 0], [0, 2]])]),
    "trimmed": (_trimmed, [(_matrix(3, 4), []), (_matrix(5, 6, 1), []), (_matrix(2, 3, 2), [])]),
    "open": (_open, [(_matrix(3, 3), []), (_matrix(6, 3, 1), []), (_matrix(1, 3, 2), [])]),
    "loop": (_weighted_columns, [(_matrix(3, 4), []), (_matrix(2, 1, 1), []),
                                 (_matrix(4, 3, 2), [])]),
}


def _args(xp, x, others):
    return [xp.constant(x)] + [xp.constant(np.asarray(a, np.int32)) for a in others]


def _gradients(xp, f, args):
    """f's value, and the first and second gradients of sum(sin(f(x))) with respect to x."""
    x = args[0]
    with xp.GradientTape() as outer:
        outer.watch(x)
        with xp.GradientTape() as inner:
            inner.watch(x)
            y = f(x, *args[1:])
            loss = xp.reduce_sum(xp.sin(y))
        first = inner.gradient(loss, x)
        total = xp.reduce_sum(first * first)
    return y, first, outer.gradient(total, x)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_two_orders_of_gradients_from_one_trace_agree_with_tensorflow(tf, name):
    make, calls = CASES[name]
    ours, theirs = make(ad), make(tf)
    for x, others in calls:
        got = _gradients(ad, ours, _args(ad, x, others))
        want = _gradients(tf, theirs, _args(tf, x, others))
        for what, g, w in zip(("value", "first", "second"), got, want):
            assert tuple(g.shape) == tuple(w.shape), (name, what, x.shape, others)
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} {what} {x.shape} {others}")
    assert ours.experimental_get_tracing_count() == theirs.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_mode_through_a_traced_slice_agrees_with_tensorflow(tf, name):
    make, calls = CASES[name]
    for x, others in calls:
        results = []
        for xp in (ad, tf):
            f, args = make(xp), _args(xp, x, others)
            tangent = xp.constant(np.linspace(-1.0, 1.0, x.size, dtype=np.float32)
                                  .reshape(x.shape))
            with xp.autodiff.ForwardAccumulator(args[0], tangent) as acc:
                y = f(*args)
            results.append(acc.jvp(y).numpy())
        np.testing.assert_allclose(results[0], results[1], rtol=1e-6, err_msg=f"{name} {others}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_equals_traced_bit_for_bit(name):
    make, calls = CASES[name]
    traced = make(ad)
    compiled = ad.function(traced.python_function, input_signature=traced.input_signature,
                           jit_compile=True)
    for x, others in calls:
        want, got = traced(*_args(ad, x, others)), compiled(*_args(ad, x, others))
        assert got.dtype == want.dtype and np.array_equal(got.numpy(), want.numpy()), others


# boxes that do not fit a 3x4 input: begin past the end, negative begin, size past the end,
# a size below -1
BAD_BOXES = [([0, 5], [1, 1]), ([-1, 0], [1, 1]), ([1, 2], [1, 3]), ([0, 0], [4, 1]),
             ([1, 1], [-2, 1])]


@pytest.mark.parametrize("jit_compile", [False, True], ids=["traced", "compiled"])
def test_a_box_that_does_not_fit_raises_when_the_graph_runs_on_both_sides(tf, jit_compile):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    ours, theirs = _box(ad, jit_compile), _box(tf, jit_compile)
    ok = ([1, 1], [2, -1])
    np.testing.assert_array_equal(ours(*_args(ad, x, ok)).numpy(),
                                  theirs(*_args(tf, x, ok)).numpy())
    for begin, size in BAD_BOXES:
        for xp, f in ((ad, ours), (tf, theirs)):
            with pytest.raises(xp.errors.InvalidArgumentError, match=r"Expected (begin|size)\["):
                f(*_args(xp, x, [begin, size]))
    assert ours.experimental_get_tracing_count() == 1


def test_the_error_names_the_axis_and_the_range_in_tensorflows_words(tf):
    x = np.zeros((3, 4), np.float32)
    for begin, size, words in (([0, 5], [1, 1], r"Expected begin\[1\] in \[0, 4\], but got 5"),
                               ([1, 2], [1, 3], r"Expected size\[1\] in \[0, 2\], but got 3")):
        for xp in (ad, tf):
            with pytest.raises(xp.errors.InvalidArgumentError, match=words):
                _box(xp)(*_args(xp, x, [begin, size]))


def test_a_counter_past_the_last_column_raises_instead_of_an_empty_box(tf):
    x = _matrix(3, 4)
    for xp in (ad, tf):
        column = _column(xp)
        assert column(*_args(xp, x, [3])).shape == (3, 1)
        with pytest.raises(xp.errors.InvalidArgumentError, match=r"Expected size\[1\]"):
            column(*_args(xp, x, [4]))


def test_a_first_call_whose_box_does_not_fit_raises_and_the_trace_serves_later_calls(tf):
    x = _matrix(3, 4)
    for xp in (ad, tf):
        column = _column(xp)
        with pytest.raises(xp.errors.InvalidArgumentError, match=r"Expected begin\[1\]"):
            column(*_args(xp, x, [7]))
        np.testing.assert_array_equal(column(*_args(xp, x, [1])).numpy(), x[:, 1:2])
        assert column.experimental_get_tracing_count() == 1


def test_a_saved_model_keeps_the_traced_slice_and_its_check(tf, tmp_path):
    loaded = {}
    for name, xp in (("ours", ad), ("theirs", tf)):
        module = xp.Module()
        module.box, module.column = _box(xp), _column(xp)
        xp.saved_model.save(module, str(tmp_path / name))
        loaded[name] = xp.saved_model.load(str(tmp_path / name))
    for x, others in CASES["box"][1] + [(_matrix(7, 3, 4), [[3, 1], [-1, -1]])]:
        np.testing.assert_array_equal(loaded["ours"].box(*_args(ad, x, others)).numpy(),
                                      loaded["theirs"].box(*_args(tf, x, others)).numpy())
    for x, others in CASES["column"][1]:
        np.testing.assert_array_equal(loaded["ours"].column(*_args(ad, x, others)).numpy(),
                                      loaded["theirs"].column(*_args(tf, x, others)).numpy())
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for begin, size in BAD_BOXES:
        for name, xp in (("ours", ad), ("theirs", tf)):
            with pytest.raises(xp.errors.InvalidArgumentError, match=r"Expected (begin|size)\["):
                loaded[name].box(*_args(xp, x, [begin, size]))
