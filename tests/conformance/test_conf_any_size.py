"""``None`` sizes in an ``input_signature`` against TensorFlow 2 (issue 33, item 3): one trace
serves every batch size, in the function and in a saved model, unless the trace depends on the
size (then this engine traces per size: never the first size's answer for another)."""

import numpy as np

import autodiff as ad


def _module(xp, base):
    class Regressor(base):
        def __init__(self):
            super().__init__()
            self.w = xp.Variable([[1.0], [2.0], [3.0]])

        @xp.function(input_signature=[xp.TensorSpec([None, 3])])
        def __call__(self, x):
            return xp.nn.relu(xp.matmul(x, self.w)) + xp.reduce_mean(x, axis=1, keepdims=True)

    return Regressor()


def test_one_trace_serves_every_batch_size_and_so_does_the_saved_model(tf, tmp_path):
    ours, theirs = _module(ad, ad.Module), _module(tf, tf.Module)
    rng = np.random.default_rng(0)
    batches = [rng.standard_normal((n, 3)).astype(np.float32) for n in (1, 4, 9)]
    for x in batches:
        np.testing.assert_allclose(ours(ad.constant(x)).numpy(), theirs(tf.constant(x)).numpy(),
                                   rtol=1e-6)
    assert ours.__call__.experimental_get_tracing_count() == \
        theirs.__call__.experimental_get_tracing_count() == 1
    ad.saved_model.save(ours, str(tmp_path / "ours"))
    tf.saved_model.save(theirs, str(tmp_path / "theirs"))
    loaded_ours = ad.saved_model.load(str(tmp_path / "ours"))
    loaded_theirs = tf.saved_model.load(str(tmp_path / "theirs"))
    for n in (2, 5, 17):
        x = rng.standard_normal((n, 3)).astype(np.float32)
        np.testing.assert_allclose(loaded_ours(ad.constant(x)).numpy(),
                                   loaded_theirs(tf.constant(x)).numpy(), rtol=1e-6)


def test_a_trace_that_reads_the_size_is_made_per_size_and_stays_right():
    f = ad.function(lambda x: ad.reduce_sum(x) / x.shape[0],
                    input_signature=[ad.TensorSpec([None])])
    for n in (2, 3, 8, 3):
        assert float(f(ad.constant(np.full(n, float(n), np.float32)))) == float(n)
    assert f.experimental_get_tracing_count() == 3
