"""``for row in x`` inside ``ad.function`` with a ``None`` number of rows, against
TensorFlow 2: one trace serves every size, the first call's included when it has no rows
(the loop counts the rows when the graph runs; the body is recorded once, on a row that
reads as zeros), with the same values and gradients."""

import numpy as np
import pytest

import autodiff as ad


def _rows(m):
    @m.function(input_signature=[m.TensorSpec([None, 3], m.float32)])
    def total(x):
        s = m.zeros([3])
        for row in x:
            s = s + row * row + m.sin(row)
        return s
    return total


@pytest.mark.parametrize("sizes", [(0, 2, 3, 1), (2, 0, 4)])
def test_a_loop_over_rows_is_traced_once_from_any_first_size(tf, sizes):
    ours, theirs = _rows(ad), _rows(tf)
    rng = np.random.default_rng(5)
    for n in sizes:
        x = rng.standard_normal((n, 3)).astype(np.float32)
        xa, xt = ad.constant(x), tf.constant(x)
        with ad.GradientTape() as tape:
            tape.watch(xa)
            ya = ours(xa)
            la = ad.reduce_sum(ya * ya)
        with tf.GradientTape() as their_tape:
            their_tape.watch(xt)
            yt = theirs(xt)
            lt = tf.reduce_sum(yt * yt)
        np.testing.assert_allclose(ya.numpy(), yt.numpy(), rtol=1e-6)
        ga, gt = tape.gradient(la, xa), their_tape.gradient(lt, xt)
        if n:   # no rows: nothing connects x here (None); TensorFlow's While gives zeros
            np.testing.assert_allclose(ga.numpy(), gt.numpy(), rtol=1e-5)
        else:
            assert ga is None and not np.any(gt.numpy())
    assert ours.experimental_get_tracing_count() == theirs.experimental_get_tracing_count() == 1


def test_an_index_out_of_range_still_raises_on_the_first_call(tf):
    """Recording does not check a traced index (the graph does, when it runs)."""
    for m in (ad, tf):
        pick = m.function(lambda x, i: m.gather(x, i))
        with pytest.raises(m.errors.InvalidArgumentError):
            pick(m.constant([1.0, 2.0, 3.0]), m.constant(5))
        assert float(pick(m.constant([1.0, 2.0, 3.0]), m.constant(1))) == 2.0
        with pytest.raises(m.errors.InvalidArgumentError):
            pick(m.constant([1.0, 2.0, 3.0]), m.constant(-1))
