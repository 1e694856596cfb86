"""The functional API against Keras 3 on TensorFlow 2.21: the same graph of layer calls gives
the same layer order, variable paths and weights order, output shapes, outputs and gradients
(Keras' weights copied), for several inputs and outputs, shared layers, nested models and
arithmetic on placeholders; and ``fit`` on a model with two outputs (a loss and a weight
per output) logs and trains as Keras does.
"""

import numpy as np
import pytest

import autodiff as ad

RNG = np.random.default_rng(341)
A, B = RNG.standard_normal((6, 4)).astype(np.float32), RNG.standard_normal((6, 3)).astype(
    np.float32)
Y1, Y2 = RNG.standard_normal((6, 2)).astype(np.float32), (RNG.random(6) > 0.5).astype(
    np.float32)[:, None]


def _inner(k):
    x = k.Input((5,), name="inner_in")
    return k.Model(x, k.layers.Dense(5, activation="tanh", name="inner_dense")(x), name="inner")


def _two_towers(k):
    a, b = k.Input((4,), name="a"), k.Input((3,), name="b")
    shared = k.layers.Dense(5, name="shared")
    ha = shared(k.layers.Dense(3, name="proj_a")(a))
    hb = shared(b)                                     # one layer, two calls
    h = k.layers.Concatenate(name="cat")([ha, hb])
    h = k.layers.Dense(5, name="mix")(h)
    h = _inner(k)(h) + ha                              # a nested model, a residual
    out1 = k.layers.Dense(2, name="regress")(h)
    out2 = k.layers.Dense(1, activation="sigmoid", name="classify")(k.layers.Multiply()([h, hb]))
    return k.Model([a, b], [out1, out2], name="towers")


def test_structure_names_and_order_equal_keras(tf):
    theirs, ours = _two_towers(tf.keras), _two_towers(ad.keras)
    assert [layer.name for layer in ours.layers] == [layer.name for layer in theirs.layers]
    assert [v.path for v in ours.weights] == [v.path for v in theirs.weights]
    assert [tuple(t.shape) for t in ours.outputs] == [tuple(t.shape) for t in theirs.outputs]
    lines = []
    ours.summary(print_fn=lines.append)
    assert "Connected to" in lines[0] and "Total params: " + f"{theirs.count_params():,}" in lines[0]


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_outputs_and_gradients_equal_keras(tf, mode):
    theirs, ours = _two_towers(tf.keras), _two_towers(ad.keras)
    ours.set_weights(theirs.get_weights())
    results = []
    for m, model in ((tf, theirs), (ad, ours)):
        def run(a, b, model=model, m=m):
            with m.GradientTape() as tape:
                tape.watch(a)
                y1, y2 = model([a, b])
                loss = m.reduce_sum(y1 * y1) + m.reduce_sum(y2)
            return y1, y2, tape.gradient(loss, [a] + list(model.trainable_variables))
        if m is ad and mode == "compiled":
            run = ad.function(run, jit_compile=True, autograph=False)
        y1, y2, grads = run(m.constant(A), m.constant(B))
        results.append([y1.numpy(), y2.numpy()] + [np.asarray(g) for g in grads])
    for ours_value, theirs_value in zip(results[1], results[0]):
        np.testing.assert_allclose(ours_value, theirs_value, rtol=5e-5, atol=5e-6)


def test_a_dict_of_inputs_by_name_and_a_model_called_on_placeholders(tf):
    outputs = []
    for k in (tf.keras, ad.keras):
        model = _two_towers(k)
        if outputs:
            model.set_weights(outputs[0][0].get_weights())
        outer_a, outer_b = k.Input((4,)), k.Input((3,))
        wrapped = k.Model([outer_a, outer_b], model([outer_a, outer_b])[1])
        outputs.append((model, wrapped.predict([A, B], verbose=0),
                        model.predict({"a": A, "b": B}, verbose=0)[0]))
    np.testing.assert_allclose(outputs[1][1], outputs[0][1], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(outputs[1][2], outputs[0][2], rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("mode", [dict(run_eagerly=True), dict()], ids=["eager", "compiled"])
def test_fit_with_two_outputs_equals_keras(tf, mode):
    theirs, ours = _two_towers(tf.keras), _two_towers(ad.keras)
    ours.set_weights(theirs.get_weights())
    for model, k in ((theirs, tf.keras), (ours, ad.keras)):
        model.compile(k.optimizers.Adam(0.01), loss={"regress": "mse",
                                                     "classify": "binary_crossentropy"},
                      loss_weights={"regress": 1.0, "classify": 0.5},
                      **(mode if model is ours else {}))
    kwargs = dict(batch_size=4, epochs=2, shuffle=False, verbose=0)
    h_theirs = theirs.fit([A, B], {"regress": Y1, "classify": Y2}, **kwargs)
    h_ours = ours.fit([A, B], {"regress": Y1, "classify": Y2}, **kwargs)
    assert sorted(h_ours.history) == sorted(h_theirs.history)
    for key in h_theirs.history:
        np.testing.assert_allclose(h_ours.history[key], h_theirs.history[key], rtol=5e-5,
                                   err_msg=key)
    for a, t in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, t, rtol=5e-5, atol=5e-6)


def test_per_output_losses_average_batches_as_keras_compiled_step_does(tf):
    # Keras 3 logs each output's loss as a mean over batches weighted by batch size when it
    # runs eagerly, and as the plain mean in its (default) compiled step, whose traced batch
    # size is None. ad.keras follows the compiled step in every mode; the total loss is
    # weighted in both libraries and all modes.
    histories = []
    for k, eager in ((tf.keras, False), (tf.keras, True), (ad.keras, True)):
        model = _two_towers(k)
        if histories:
            model.set_weights(histories[0][0].get_weights())
        model.compile(k.optimizers.SGD(0.0), loss={"regress": "mse", "classify": "mse"},
                      run_eagerly=eager)
        history = model.fit([A, B], {"regress": Y1, "classify": Y2}, batch_size=4,
                            shuffle=False, verbose=0).history
        histories.append((model, history))
    (_, compiled), (_, eager), (_, ours) = histories
    assert abs(compiled["regress_loss"][0] - eager["regress_loss"][0]) > 1e-3
    np.testing.assert_allclose(ours["regress_loss"], compiled["regress_loss"], rtol=2e-6)
    np.testing.assert_allclose(ours["loss"], eager["loss"], rtol=2e-6)
    np.testing.assert_allclose(compiled["loss"], eager["loss"], rtol=2e-6)


def test_layer_output_makes_a_feature_model_and_count_params_equal_keras(tf):
    theirs, ours = _two_towers(tf.keras), _two_towers(ad.keras)
    ours.set_weights(theirs.get_weights())
    assert ours.count_params() == theirs.count_params()
    assert [layer.count_params() for layer in ours.layers] == \
        [layer.count_params() for layer in theirs.layers]
    features = []
    for model, k in ((theirs, tf.keras), (ours, ad.keras)):
        mix = model.get_layer("mix")
        assert tuple(mix.output.shape) == (None, 5) and tuple(mix.input.shape) == (None, 10)
        features.append(k.Model(model.inputs, [mix.output, model.get_layer("shared").output]))
    for got, want in zip(features[1]([A, B]), features[0]([A, B])):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for k in (tf.keras, ad.keras):
        fresh = k.layers.Dense(2)
        assert not hasattr(fresh, "output")            # never called: AttributeError
        with pytest.raises(ValueError, match="isn't built"):
            fresh.count_params()


def test_activity_regularizer_is_divided_by_the_batch_size_as_keras(tf):
    losses = []
    for k in (tf.keras, ad.keras):
        x = k.Input((4,))
        dense = k.layers.Dense(3, kernel_initializer="ones",
                               activity_regularizer=k.regularizers.L1(0.01))
        model = k.Model(x, dense(x))
        model(A)
        losses.append(sorted(float(v) for v in model.losses))
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-6)


def _ops_on_placeholders(k):
    a, b = k.Input((4,), name="a"), k.Input((3,), name="b")
    h = k.layers.Dense(3, name="proj")(a) * 2 + 1          # Python numbers beside a placeholder
    h = k.ops.concatenate([h, 0.5 - b], axis=-1)
    h = k.ops.tanh(h) * k.ops.mean(b, axis=-1, keepdims=True)
    out = k.ops.sum(k.layers.Dense(2, name="head")(h), axis=-1, keepdims=True)
    return k.Model([a, b], out)


def test_keras_ops_and_numbers_on_placeholders_build_the_same_model_as_keras(tf):
    theirs, ours = _ops_on_placeholders(tf.keras), _ops_on_placeholders(ad.keras)
    ours.set_weights(theirs.get_weights())
    assert [layer.name for layer in ours.layers] == [layer.name for layer in theirs.layers]
    assert tuple(ours.outputs[0].shape) == tuple(theirs.outputs[0].shape) == (None, 1)
    results = []
    for model, m in ((theirs, tf), (ours, ad)):
        with m.GradientTape() as tape:
            y = model([A, B])
            loss = m.reduce_sum(y * y)
        results.append((y, tape.gradient(loss, model.trainable_variables)))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5, atol=1e-6)
    for got, want in zip(results[1][1], results[0][1]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_output_names_equal_keras(tf):
    theirs, ours = _two_towers(tf.keras), _two_towers(ad.keras)
    assert ours.output_names == list(theirs.output_names) == ["regress", "classify"]


def test_layer_and_model_variables_are_lists_as_keras(tf):
    kinds = []
    for model, m in ((_two_towers(tf.keras), tf), (_two_towers(ad.keras), ad)):
        extra = m.Variable(1.0)
        sources = model.trainable_variables + [extra]        # a tuple here once: TypeError
        with m.GradientTape() as tape:
            loss = m.reduce_sum(model([A, B])[0]) * extra
        grads = tape.gradient(loss, sources)
        dense = model.get_layer("mix")
        kinds.append([type(x).__name__ for x in (model.variables, model.trainable_variables,
                                                  model.non_trainable_variables, grads,
                                                  dense.trainable_variables, dense.weights)])
        assert len(grads) == len(sources)
    assert kinds[1] == kinds[0] == ["list"] * 6
