"""Saved models with control flow against TensorFlow 2's (issue 33): the same module, written
once for both libraries, with ``cond``, ``switch_case``, ``while_loop`` (``maximum_iterations``),
``scan``, ``map_fn``, ``foldl``, ``foldr`` and AutoGraph's ``if`` and ``for``, is saved and
loaded by each; the loaded functions agree with each other and with the module they came
from, on inputs that take every branch and loop count, at batch sizes never traced."""

import numpy as np

import autodiff as ad


def _module(xp, base):
    class Flow(base):
        def __init__(self):
            super().__init__()
            self.w = xp.Variable([1.0, 2.0, 3.0])

        @xp.function(input_signature=[xp.TensorSpec([None, 3])])
        def __call__(self, x):
            s = xp.reduce_sum(x)
            y = xp.cond(s > 0, lambda: x * self.w, lambda: x - self.w)
            i, z = xp.while_loop(lambda i, z: xp.reduce_sum(z) < 50.0,
                                 lambda i, z: (i + 1, z * 2.0 + 1.0), (xp.constant(0), y),
                                 maximum_iterations=6)
            rows = xp.reduce_sum(x, axis=1)
            picked = xp.switch_case(xp.cast(s > 1.0, xp.int32) + xp.cast(s > 3.0, xp.int32),
                                    [lambda: rows * 0.5, lambda: -rows, lambda: rows + 1.0])
            if xp.reduce_max(x) > 1.0:       # AutoGraph: an If
                z = z - 1.0
            return {"z": z, "i": i, "picked": picked,
                    "scan": xp.scan(lambda a, e: a * 0.5 + e, rows,
                                    initializer=xp.constant(0.0)),
                    "map": xp.map_fn(lambda r: xp.reduce_max(r) * r[0], x),
                    "foldl": xp.foldl(lambda a, e: a * 0.9 + e * e, rows,
                                      initializer=xp.constant(1.0)),
                    "foldr": xp.foldr(lambda a, e: a * 0.5 - e, rows,
                                      initializer=xp.constant(2.0))}

        @xp.function(input_signature=[xp.TensorSpec([4, 3])])
        def rows(self, x):
            total = xp.zeros([3])
            for row in x:                     # AutoGraph: a loop over the rows, an If inside
                if xp.reduce_sum(row) > 0:
                    total += row * self.w
                else:
                    total -= row * 0.5
            return total

    return Flow()


def _close(a, b, where):
    assert sorted(a) == sorted(b), where
    for key in a:
        np.testing.assert_allclose(np.asarray(a[key]), b[key].numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{where}: {key}")


def test_a_saved_model_with_control_flow_loads_and_agrees_with_tensorflows(tf, tmp_path):
    ours, theirs = _module(ad, ad.Module), _module(tf, tf.Module)
    ad.saved_model.save(ours, str(tmp_path / "ours"))
    tf.saved_model.save(theirs, str(tmp_path / "theirs"))
    loaded_ours = ad.saved_model.load(str(tmp_path / "ours"))
    loaded_theirs = tf.saved_model.load(str(tmp_path / "theirs"))
    rng = np.random.default_rng(5)
    batches = [rng.standard_normal((n, 3)).astype(np.float32) for n in (3, 6, 11)]
    batches += [np.full((5, 3), 0.25, np.float32), np.full((7, 3), -3.0, np.float32),
                np.full((4, 3), 2.0, np.float32)]
    seen_i = set()
    for x in batches:
        want = {k: v.numpy() for k, v in loaded_theirs(tf.constant(x)).items()}
        _close(want, loaded_ours(ad.constant(x)), f"loaded, batch {x.shape[0]}")
        _close(want, ours(ad.constant(x)), f"the module, batch {x.shape[0]}")
        seen_i.add(int(want["i"]))
        if x.shape[0] == 4:
            np.testing.assert_allclose(loaded_ours.rows(ad.constant(x)).numpy(),
                                       loaded_theirs.rows(tf.constant(x)).numpy(), rtol=1e-6)
    assert len(seen_i) >= 3, seen_i     # the loop ran a different number of times
    for n in (4, 8):   # the loop over rows: trained size only, as both signatures say
        x = rng.standard_normal((4, 3)).astype(np.float32) * n
        np.testing.assert_allclose(loaded_ours.rows(ad.constant(x)).numpy(),
                                   loaded_theirs.rows(tf.constant(x)).numpy(), rtol=1e-6)
