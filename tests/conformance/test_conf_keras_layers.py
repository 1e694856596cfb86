"""The layers issue 34 adds, against Keras 3 on TensorFlow 2.21, with Keras' weights copied.

Each layer is built in Keras and here on the same inputs; Keras' weights go
into ours with ``set_weights``; the outputs and the gradients of
``sum(y * w)`` (a fixed random ``w``) with respect to every float input and
every trainable weight must agree, eagerly and inside
``ad.function(jit_compile=True)``. Also: Keras' variable paths, a functional
model with masks (Embedding(mask_zero=True) into a Bidirectional LSTM).
"""

import numpy as np
import pytest

import autodiff as ad

RNG = np.random.default_rng(3434)


def _x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


SEQ, SEQ2, IMG = _x(2, 5, 4), _x(2, 3, 4), _x(2, 4, 4, 6)
IDS = np.array([[3, 1, 4, 0, 0], [5, 9, 2, 6, 5]], np.int32)

# name: (make(k) -> layer, inputs, call(layer, *inputs))
CASES = {
    "activation_gelu": (lambda k: k.layers.Activation("gelu"), [SEQ], None),
    "activation_selu": (lambda k: k.layers.Activation("selu"), [SEQ], None),
    "relu_options": (lambda k: k.layers.ReLU(max_value=0.8, negative_slope=0.1, threshold=0.2),
                     [SEQ], None),
    "leaky_relu": (lambda k: k.layers.LeakyReLU(), [SEQ], None),
    "softmax": (lambda k: k.layers.Softmax(axis=1), [SEQ], None),
    "reshape": (lambda k: k.layers.Reshape((10, -1)), [SEQ], None),
    "permute": (lambda k: k.layers.Permute((2, 1)), [SEQ], None),
    "permute_3d": (lambda k: k.layers.Permute((3, 1, 2)), [IMG], None),
    "repeat_vector": (lambda k: k.layers.RepeatVector(3), [SEQ[:, 0]], None),
    "rescaling": (lambda k: k.layers.Rescaling(1 / 255.0, offset=-0.5), [IMG], None),
    "identity": (lambda k: k.layers.Identity(), [SEQ], None),
    "lambda": (lambda k: k.layers.Lambda(lambda t: k.ops.tanh(t) * 2.0), [SEQ], None),
    "global_average_pooling2d": (lambda k: k.layers.GlobalAveragePooling2D(), [IMG], None),
    "global_max_pooling2d": (lambda k: k.layers.GlobalMaxPooling2D(keepdims=True), [IMG], None),
    "conv1d_same": (lambda k: k.layers.Conv1D(3, 3, padding="same", activation="relu"),
                    [SEQ], None),
    "conv1d_causal_dilated": (lambda k: k.layers.Conv1D(2, 2, padding="causal",
                                                        dilation_rate=2), [SEQ], None),
    "conv1d_strided": (lambda k: k.layers.Conv1D(2, 3, strides=2), [SEQ], None),
    "group_norm": (lambda k: k.layers.GroupNormalization(groups=3), [IMG], None),
    "group_norm_instance": (lambda k: k.layers.GroupNormalization(groups=6, epsilon=1e-5),
                            [IMG], None),
    "spatial_dropout_inference": (lambda k: k.layers.SpatialDropout2D(0.5), [IMG], None),
    "add": (lambda k: k.layers.Add(), [SEQ, SEQ * 2], "list"),
    "multiply": (lambda k: k.layers.Multiply(), [SEQ, SEQ + 1], "list"),
    "average": (lambda k: k.layers.Average(), [SEQ, SEQ - 1, SEQ * 3], "list"),
    "concatenate": (lambda k: k.layers.Concatenate(axis=1), [SEQ, SEQ2], "list"),
    "mha_self": (lambda k: k.layers.MultiHeadAttention(2, 3), [SEQ, SEQ], "args"),
    "mha_cross_value_dim": (lambda k: k.layers.MultiHeadAttention(3, 2, value_dim=4,
                                                                 output_shape=5),
                            [SEQ2, SEQ], "args"),
    "mha_causal": (lambda k: k.layers.MultiHeadAttention(2, 2), [SEQ, SEQ], "causal"),
    # attention_axes: over axis 2 of [B, 4, 4, 6] (axis 1 is then a batch axis), over both,
    # and an int counted from the end
    "mha_attention_axes_2": (lambda k: k.layers.MultiHeadAttention(
        2, 3, attention_axes=(2,)), [IMG, IMG[:, :, :3]], "args"),
    "mha_attention_axes_1_2": (lambda k: k.layers.MultiHeadAttention(
        2, 3, value_dim=2, attention_axes=(1, 2)), [IMG, IMG], "args"),
    "mha_attention_axes_negative_int": (lambda k: k.layers.MultiHeadAttention(
        3, 2, attention_axes=-2), [IMG[:, :3], IMG[:, :3]], "args"),
    # wrapped layers are named: each library numbers its own layers (gru, gru_1, ...)
    "time_distributed_dense": (lambda k: k.layers.TimeDistributed(
        k.layers.Dense(3, "tanh", name="step")), [SEQ], None),
    "bidirectional_gru_concat": (lambda k: k.layers.Bidirectional(
        k.layers.GRU(3, return_sequences=True, name="g")), [SEQ], None),
    "bidirectional_lstm_sum": (lambda k: k.layers.Bidirectional(
        k.layers.LSTM(2, name="l"), merge_mode="sum"), [SEQ], None),
    "bidirectional_simple_rnn_ave": (lambda k: k.layers.Bidirectional(
        k.layers.SimpleRNN(2, return_sequences=True, name="s"), merge_mode="ave"), [SEQ], None),
}


def _call(layer, style, xs):
    if style == "list":
        return layer(list(xs))
    if style == "args":
        return layer(*xs)
    if style == "causal":
        return layer(*xs, use_causal_mask=True)
    return layer(xs[0])


def _run(m, layer, style, xs, weights):
    variables = list(layer.trainable_variables)
    with m.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = _call(layer, style, xs)
        loss = m.reduce_sum(y * m.constant(weights))
    return y, tape.gradient(loss, list(xs) + variables)


@pytest.mark.parametrize("mode", ["eager", "compiled"])
@pytest.mark.parametrize("key", sorted(CASES))
def test_layer_equals_keras_with_copied_weights(tf, key, mode):
    make, inputs, style = CASES[key]
    theirs, ours = make(tf.keras), make(ad.keras)
    tf_xs, ad_xs = [tf.constant(x) for x in inputs], [ad.constant(x) for x in inputs]
    tf_y = _call(theirs, style, tf_xs)
    _call(ours, style, ad_xs)
    ours.set_weights(theirs.get_weights())
    # Keras' paths, below the layer's own (numbered) name
    assert [v.path.split("/", 1)[1] for v in ours.weights] == \
        [v.path.split("/", 1)[1] for v in theirs.weights]
    weights = RNG.standard_normal(np.shape(tf_y)).astype(np.float32)
    tf_y, tf_grads = _run(tf, theirs, style, tf_xs, weights)
    run = (lambda *xs: _run(ad, ours, style, list(xs), weights))
    if mode == "compiled":
        run = ad.function(run, jit_compile=True)
    ad_y, ad_grads = run(*ad_xs)
    np.testing.assert_allclose(ad_y.numpy(), tf_y.numpy(), rtol=2e-5, atol=2e-6)
    assert len(ad_grads) == len(tf_grads)
    for a, t in zip(ad_grads, tf_grads):
        np.testing.assert_allclose(a.numpy(), tf.convert_to_tensor(t).numpy(), rtol=5e-5,
                                   atol=5e-6)


def test_embedding_mask_reaches_a_bidirectional_lstm_as_in_keras(tf):
    outputs = []
    for k in (tf.keras, ad.keras):
        ids = k.Input((5,), dtype="int32")
        h = k.layers.Embedding(10, 4, mask_zero=True, name="embed")(ids)
        h = k.layers.Bidirectional(k.layers.LSTM(3, return_sequences=True, name="l1"),
                                   name="bi")(h)
        model = k.Model(ids, k.layers.LSTM(2, name="l2")(h))
        if outputs:
            model.set_weights(outputs[0][0].get_weights())
        outputs.append((model, model.predict(IDS, verbose=0)))
    (theirs, tf_y), (ours, ad_y) = outputs
    np.testing.assert_allclose(ad_y, tf_y, rtol=2e-5, atol=2e-6)
    assert [v.path for v in ours.weights] == [v.path for v in theirs.weights]
    assert ours.weights[1].path == "bi/forward_l1/lstm_cell/kernel"


def test_embedding_with_mask_zero_makes_keras_mask(tf):
    theirs, ours = tf.keras.layers.Embedding(10, 3, mask_zero=True), \
        ad.keras.layers.Embedding(10, 3, mask_zero=True)
    np.testing.assert_array_equal(ours.compute_mask(ad.constant(IDS)).numpy(),
                                  theirs.compute_mask(tf.constant(IDS)).numpy())


@pytest.mark.parametrize("axes", [(2,), (1, 2), None])
def test_mha_attention_scores_over_attention_axes_equal_keras(tf, axes):
    theirs = tf.keras.layers.MultiHeadAttention(2, 3, attention_axes=axes)
    ours = ad.keras.layers.MultiHeadAttention(2, 3, attention_axes=axes)
    query, value = IMG, IMG[:, :, :3]
    tf_out, tf_scores = theirs(tf.constant(query), tf.constant(value),
                               return_attention_scores=True)
    ours(ad.constant(query), ad.constant(value))
    ours.set_weights(theirs.get_weights())
    ad_out, ad_scores = ours(ad.constant(query), ad.constant(value),
                             return_attention_scores=True)
    assert ad_scores.shape == tuple(tf_scores.shape)
    np.testing.assert_allclose(ad_scores.numpy(), tf_scores.numpy(), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(ad_out.numpy(), tf_out.numpy(), rtol=2e-5, atol=2e-6)
    ours_axes = ours.get_config()["attention_axes"]
    keras_axes = theirs.get_config()["attention_axes"]
    assert (None if ours_axes is None else list(ours_axes)) == \
        (None if keras_axes is None else list(keras_axes))   # a JSON list in either file


EDGES = np.array([-np.inf, -2.0, -0.5, 0.0, 0.3, 0.5, 0.7, 3.0, 6.0, 9.0, np.inf, np.nan],
                 np.float32)
RELU_OPTIONS = [dict(max_value=6.0), dict(max_value=4.0), dict(threshold=0.5),
                dict(negative_slope=0.1), dict(negative_slope=0.1, max_value=6.0),
                dict(negative_slope=0.1, threshold=0.5),
                dict(threshold=0.5, max_value=2.0),
                dict(negative_slope=0.1, threshold=0.5, max_value=2.0)]


@pytest.mark.parametrize("options", RELU_OPTIONS,
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_relu_options_at_the_edges_equal_keras(tf, options):
    """Keras' relu with a cap, a threshold or a slope at -inf, inf and NaN (where a
    ``x * 0.0`` gave NaN and -0.0), and its gradient at finite points, bounds included."""
    want = tf.keras.activations.relu(tf.constant(EDGES), **options).numpy()
    got = ad.keras.activations.relu(ad.constant(EDGES), **options).numpy()
    np.testing.assert_array_equal(got, want)
    layer = ad.keras.layers.ReLU(**options)
    np.testing.assert_array_equal(layer(ad.constant(EDGES)).numpy(), want)
    finite = EDGES[np.isfinite(EDGES)]
    scale = np.arange(1, finite.size + 1, dtype=np.float32)
    grads = []
    for m, layer in ((tf, tf.keras.activations.relu), (ad, ad.keras.activations.relu)):
        x = m.Variable(finite)
        with m.GradientTape() as tape:
            loss = m.reduce_sum(layer(x, **options) * scale)
        grads.append(tape.gradient(loss, x).numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
