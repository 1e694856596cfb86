"""``ad.shape(x)`` inside a trace with ``None`` sizes is a tensor the shape ops take (issue 33):
``reshape(x, [shape(x)[0], -1])``, ``zeros(shape(x))``, ``fill``, ``broadcast_to``, ``ones``
and ``range(shape(x)[0])`` in one trace that serves every batch size, as in TensorFlow 2,
and in a saved model of it (``autodiff/ops/dynamic_shape.py``)."""

import numpy as np

import autodiff as ad


def _function(xp):
    @xp.function(input_signature=[xp.TensorSpec([None, 2, 3])])
    def f(x):
        n = xp.shape(x)[0]
        flat = xp.reshape(x, [n, -1])
        column = xp.broadcast_to(xp.reduce_sum(flat, axis=0), xp.shape(flat))
        steps = xp.cast(xp.range(n), xp.float32)
        return {"flat": flat + xp.zeros(xp.shape(flat)) + column,
                "filled": xp.fill([n, 2], 1.5) * xp.ones([n, 1]),
                "steps": steps, "n": n, "back": xp.reshape(flat * 2.0, xp.shape(x))}
    return f


def _batches():
    rng = np.random.default_rng(2)
    return [rng.standard_normal((n, 2, 3)).astype(np.float32) for n in (1, 4, 2, 9)]


def test_shape_ops_take_a_traced_shape_in_one_trace_for_every_batch_size(tf):
    ours, theirs = _function(ad), _function(tf)
    for x in _batches():
        want, got = theirs(tf.constant(x)), ours(ad.constant(x))
        assert sorted(want) == sorted(got)
        for key in want:
            assert got[key].dtype.name == want[key].dtype.name, key
            np.testing.assert_allclose(got[key].numpy(), want[key].numpy(), rtol=1e-6,
                                       err_msg=key)
    assert ours.experimental_get_tracing_count() == theirs.experimental_get_tracing_count() == 1
    graph = str(ours.get_concrete_function(ad.constant(_batches()[0])).graph)
    assert "Shape(" in graph and "ReshapeTo(" in graph and "RangeOf(" in graph


def test_a_gradient_through_traced_shapes_and_the_saved_model_agree_with_tensorflow(tf, tmp_path):
    ours, theirs = _function(ad), _function(tf)
    for x in _batches():
        xa, xt = ad.constant(x), tf.constant(x)
        with ad.GradientTape() as tape:
            tape.watch(xa)
            y = ad.reduce_sum(ours(xa)["flat"] ** 2)
        with tf.GradientTape() as tf_tape:
            tf_tape.watch(xt)
            yt = tf.reduce_sum(theirs(xt)["flat"] ** 2)
        np.testing.assert_allclose(tape.gradient(y, xa).numpy(),
                                   tf_tape.gradient(yt, xt).numpy(), rtol=1e-5)
    module_ours, module_theirs = ad.Module(), tf.Module()
    module_ours.f, module_theirs.f = ours, theirs
    ad.saved_model.save(module_ours, str(tmp_path / "ours"))
    tf.saved_model.save(module_theirs, str(tmp_path / "theirs"))
    loaded_ours = ad.saved_model.load(str(tmp_path / "ours"))
    loaded_theirs = tf.saved_model.load(str(tmp_path / "theirs"))
    for n in (3, 6):
        x = np.full((n, 2, 3), 0.5, np.float32)
        want, got = loaded_theirs.f(tf.constant(x)), loaded_ours.f(ad.constant(x))
        for key in want:
            np.testing.assert_allclose(got[key].numpy(), want[key].numpy(), rtol=1e-6,
                                       err_msg=key)


def test_eagerly_shape_is_still_a_constant_and_reshape_reads_it():
    x = ad.ones([2, 3])
    assert ad.shape(x).numpy().tolist() == [2, 3]
    assert tuple(ad.reshape(x, [ad.shape(x)[1], -1]).shape) == (3, 2)
    assert ad.range(ad.shape(x)[0]).numpy().tolist() == [0, 1]


def test_a_compiled_trace_serving_every_size_equals_eager_at_each_size():
    # A program is written for its trace's sizes (a result written over an input of the same
    # shape); at another size the graph is compiled again for it, as XLA compiles per shape.
    w = ad.Variable(np.linspace(-1.0, 1.0, 3, dtype=np.float32).reshape(1, 3))

    def body(y):
        out = ad.sin(y * ad.exp(w))                      # (n, 1) * (1, 3): written over exp(w)
        flat = ad.reshape(out, [ad.shape(out)[0], -1])
        return ad.reduce_sum(flat, axis=1) + ad.cast(ad.range(ad.shape(y)[0]), ad.float32)

    compiled = ad.function(body, input_signature=[ad.TensorSpec([None, 1])], jit_compile=True)
    for n in (1, 2, 5, 1, 5):
        y = ad.constant(np.linspace(0.0, 2.0, n, dtype=np.float32).reshape(n, 1))
        got, want = compiled(y), body(y)
        assert got.dtype == want.dtype and np.array_equal(got.numpy(), want.numpy()), n
    assert compiled.experimental_get_tracing_count() == 1
    assert "written over" in compiled.experimental_get_compiler_ir(
        ad.constant(np.ones((1, 1), np.float32)))()


def _loop_over_rows(xp):
    @xp.function(input_signature=[xp.TensorSpec([None, 3]), xp.TensorSpec([], xp.int32)])
    def f(x, k):
        total = xp.zeros([3])
        for i in xp.range(xp.shape(x)[0]):     # AutoGraph: a while loop to each call's size
            total += x[i] * xp.cast(i + 1, xp.float32)
        return total + x[k]                      # k may count from the end
    return f


def test_autograph_loops_to_a_traced_size_and_indexes_from_its_end_in_one_trace(tf):
    ours, theirs = _loop_over_rows(ad), _loop_over_rows(tf)
    for n in (1, 4, 2, 6):
        x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
        for k in (0, -1, n - 1):
            np.testing.assert_allclose(ours(ad.constant(x), ad.constant(k)).numpy(),
                                       theirs(tf.constant(x), tf.constant(k)).numpy(), rtol=1e-6)
    assert ours.experimental_get_tracing_count() == theirs.experimental_get_tracing_count() == 1


def _tile_and_slices(xp):
    @xp.function(input_signature=[xp.TensorSpec([None, 3])])
    def f(x):
        n = xp.shape(x)[0]
        with xp.GradientTape() as tape:
            tape.watch(x)
            parts = {"head": x[:n - 1], "column": x[:, n % 3], "tiled": xp.tile(x[1:], [n, 1]),
                     "stepped": x[n - 1::-2]}
            y = sum(xp.reduce_sum(p * p) for p in parts.values())
        parts["grad"] = tape.gradient(y, x)
        return parts
    return f


def test_tile_and_slices_take_traced_bounds_in_one_trace(tf):
    # tile's multiples and slice bounds computed from tf.shape: one trace for every batch
    # size in TensorFlow; here too for the values (the tape inside keeps a trace per size)
    ours, theirs = _tile_and_slices(ad), _tile_and_slices(tf)
    rng = np.random.default_rng(5)
    for n in (1, 4, 2, 5):
        x = rng.standard_normal((n, 3)).astype(np.float32)
        want, got = theirs(tf.constant(x)), ours(ad.constant(x))
        for key in want:
            assert got[key].shape == tuple(want[key].shape), key
            np.testing.assert_allclose(got[key].numpy(), want[key].numpy(), rtol=1e-5,
                                       err_msg=key)
    assert theirs.experimental_get_tracing_count() == 1
    values_only = ad.function(lambda x: {k: v for k, v in _tile_and_slices(ad).python_function(x)
                                         .items() if k != "grad"},
                              input_signature=[ad.TensorSpec([None, 3])])
    for n in (2, 3, 6):
        values_only(ad.ones([n, 3]))
    assert values_only.experimental_get_tracing_count() == 1


def test_slice_takes_begin_and_size_and_refuses_a_box_that_does_not_fit(tf):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for begin, size in (([1, 1], [2, -1]), ([0, 0], [3, 4]), ([2, 3], [1, 0])):
        np.testing.assert_array_equal(ad.slice(ad.constant(x), begin, size).numpy(),
                                      tf.slice(tf.constant(x), begin, size).numpy())
    for begin, size in (([0, 0], [4, 1]), ([-1, 0], [1, 1]), ([1, 2], [1, 3])):
        for xp in (ad, tf):
            try:
                xp.slice(xp.constant(x), begin, size)
            except Exception as err:   # both: InvalidArgumentError
                assert type(err).__name__ == "InvalidArgumentError", (xp, begin, size, err)
            else:
                raise AssertionError(f"{xp.__name__}.slice accepted begin={begin}, size={size}")
