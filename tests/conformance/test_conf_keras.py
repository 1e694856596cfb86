"""``ad.keras`` against Keras 3 on TensorFlow 2.21: layers, Sequential, Model subclassing.

Each layer is built in Keras and here, Keras' weights are copied into ours
(``set_weights(keras_layer.get_weights())``), and the outputs and the
gradients (of a scalar loss, with respect to the input and every weight)
must agree. Then whole custom training loops, Keras' and ours, from the
same weights on the same data for several steps, must end at the same
weights, eager and compiled.
"""

import numpy as np
import pytest

import autodiff as ad

RNG = np.random.default_rng(2026)


def _compare_layer(tf, make, x, training=None, rtol=1e-5, atol=1e-6):
    """Builds ``make(tf.keras)`` and ``make(ad.keras)``, copies the weights, compares outputs and
    the gradients of ``sum(y * w)`` (a fixed random ``w``) with respect to input and weights."""
    theirs, ours = make(tf.keras), make(ad.keras)
    kwargs = {} if training is None else {"training": training}
    tf_x, ad_x = tf.constant(x), ad.constant(x)
    theirs(tf_x, **kwargs)
    ours(ad_x, **kwargs)                            # both built
    ours.set_weights(theirs.get_weights())
    weights = RNG.standard_normal(np.shape(theirs(tf_x, **kwargs))).astype(np.float32)
    results = []
    for m, layer, xx in ((tf, theirs, tf_x), (ad, ours, ad_x)):
        variables = list(layer.trainable_variables)
        with m.GradientTape() as tape:
            if x.dtype.kind == "f":
                tape.watch(xx)
            y = layer(xx, **kwargs)
            loss = m.reduce_sum(y * m.constant(weights))
        sources = ([xx] if x.dtype.kind == "f" else []) + variables
        grads = tape.gradient(loss, sources)
        if m is tf:   # an embedding's gradient is IndexedSlices in TensorFlow
            grads = [tf.convert_to_tensor(g) for g in grads]
        results.append((y.numpy(), [g.numpy() for g in grads]))
    (tf_y, tf_grads), (ad_y, ad_grads) = results
    np.testing.assert_allclose(ad_y, tf_y, rtol=rtol, atol=atol)
    assert len(ad_grads) == len(tf_grads)
    for a, t in zip(ad_grads, tf_grads):
        np.testing.assert_allclose(a, t, rtol=rtol, atol=atol)


def _images(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


LAYERS = {
    "dense": (lambda k: k.layers.Dense(5, activation="tanh"), _images(4, 3)),
    "dense_rank3": (lambda k: k.layers.Dense(2), _images(2, 3, 4)),
    "flatten": (lambda k: k.layers.Flatten(), _images(2, 3, 4)),
    "dropout_inference": (lambda k: k.layers.Dropout(0.4), _images(3, 5)),
    "embedding": (lambda k: k.layers.Embedding(7, 3), np.array([[1, 2, 6], [0, 0, 3]])),
    "max_pooling": (lambda k: k.layers.MaxPooling2D(), _images(2, 6, 6, 3)),
    "max_pooling_same_strided": (lambda k: k.layers.MaxPooling2D(3, strides=2, padding="same"),
                                 _images(2, 7, 7, 2)),
    "average_pooling": (lambda k: k.layers.AveragePooling2D(2, padding="same"),
                        _images(1, 5, 5, 2)),
    "layer_norm": (lambda k: k.layers.LayerNormalization(), _images(4, 6)),
    "layer_norm_axes": (lambda k: k.layers.LayerNormalization(axis=[1, 2], epsilon=1e-5),
                        _images(2, 3, 4)),
    "conv2d": (lambda k: k.layers.Conv2D(3, 2, padding="same", activation="relu"),
               _images(2, 5, 5, 2)),
    "batch_norm_training": (lambda k: k.layers.BatchNormalization(), _images(6, 4)),
}


@pytest.mark.parametrize("key", sorted(LAYERS))
def test_layer_equals_keras_with_the_same_weights(tf, key):
    make, x = LAYERS[key]
    _compare_layer(tf, make, x, training=True if key == "batch_norm_training" else None)


def test_keras_names_of_the_layers(tf):
    for name in ("Dense", "Flatten", "Dropout", "Embedding", "MaxPooling2D", "AveragePooling2D",
                 "LayerNormalization", "BatchNormalization", "Conv2D", "MaxPool2D", "AvgPool2D"):
        assert hasattr(ad.keras.layers, name) and hasattr(tf.keras.layers, name), name
    assert ad.keras.layers is ad.layers and ad.keras.optimizers is ad.optimizers


def _mlp(k, input_first):
    layers = [k.layers.Dense(8, activation="relu"), k.layers.LayerNormalization(),
              k.layers.Dense(1)]
    return k.Sequential([k.Input((3,))] + layers) if input_first else k.Sequential(layers)


def test_sequential_variables_line_up_with_keras(tf):
    theirs, ours = _mlp(tf.keras, True), _mlp(ad.keras, True)
    assert [tuple(v.shape) for v in ours.trainable_variables] == \
        [tuple(v.shape) for v in theirs.trainable_variables]
    assert len(ours.layers) == len(theirs.layers) == 3


class _Subclassed:
    """The same subclassed model in both libraries; layers assigned out of alphabetical order."""

    @staticmethod
    def make(k):
        class Net(k.Model):
            def __init__(self):
                super().__init__()
                self.zeta = k.layers.Dense(4, activation="tanh")
                self.alpha = k.layers.Dense(1)

            def call(self, x, training=False):
                return self.alpha(self.zeta(x))

        return Net()


def test_a_subclassed_model_tracks_its_layers_in_keras_order(tf):
    theirs, ours = _Subclassed.make(tf.keras), _Subclassed.make(ad.keras)
    x = _images(2, 3)
    theirs(tf.constant(x))
    ours(ad.constant(x))
    # assignment order (zeta, then alpha), not sorted attribute names
    assert [tuple(v.shape) for v in ours.trainable_variables] == \
        [tuple(v.shape) for v in theirs.trainable_variables] == [(3, 4), (4,), (4, 1), (1,)]


# 13_training_a_network.py section 2 "On TensorFlow 2.21, a `tf.Module` holding Keras 3
# layers finds none of their variables: its gradient list is empty"; README "On TensorFlow
# 2.21 a `tf.Module` holding Keras 3 layers finds none of their variables"
def test_a_tf_module_holding_keras_3_layers_finds_no_variables(tf):
    # Why the lessons subclass keras.Model: on TensorFlow 2.21 (Keras 3) a tf.Module does
    # not see the variables of the Keras layers it holds.
    class Holder(tf.Module):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(2)

    holder = Holder()
    holder.dense(tf.ones([1, 3]))
    assert len(holder.dense.trainable_variables) == 2
    assert len(holder.trainable_variables) == 0
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(holder.dense(tf.ones([1, 3])))
    assert list(tape.gradient(y, holder.trainable_variables)) == []


def _train(m, model, data, steps, jit=None):
    opt = (m.keras if m is not ad else ad.keras).optimizers.Adam(0.05)

    def step(x, y):
        with m.GradientTape() as tape:
            loss = m.reduce_mean((model(x, training=True) - y) ** 2)
        variables = model.trainable_variables
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    if jit is not None:
        step = ad.function(step, jit_compile=jit)
    losses = [float(step(m.constant(x), m.constant(y))) for x, y in data[:steps]]
    return losses, [v.numpy() for v in model.trainable_variables]


@pytest.mark.parametrize("mode", ["eager", "function", "jit"])
def test_a_custom_training_loop_ends_where_keras_ends(tf, mode):
    data = [(_images(8, 3), _images(8, 1)) for _ in range(10)]
    theirs, ours = _mlp(tf.keras, True), _mlp(ad.keras, True)
    ours.set_weights(theirs.get_weights())
    tf_losses, tf_weights = _train(tf, theirs, data, 10)
    ad_losses, ad_weights = _train(ad, ours, data, 10,
                                   jit=None if mode == "eager" else mode == "jit")
    np.testing.assert_allclose(ad_losses, tf_losses, rtol=1e-4)
    for a, t in zip(ad_weights, tf_weights):
        np.testing.assert_allclose(a, t, rtol=1e-4, atol=1e-5)


def test_dense_input_shape_builds_the_sequential_model_at_once(tf):
    for k in (tf.keras, ad.keras):
        model = k.Sequential([k.layers.Dense(4, input_shape=(3,)), k.layers.Dense(2)])
        assert [tuple(v.shape) for v in model.trainable_variables] == [(3, 4), (4,), (4, 2), (2,)]


def test_adding_something_that_is_not_a_layer_raises_value_error(tf):
    for k in (tf.keras, ad.keras):
        with pytest.raises(ValueError, match="Only instances of"):
            k.Sequential([k.layers.Dense(2), "relu"])


def test_the_keras_loop_example_runs_on_tensorflow_with_only_its_import_changed(tf, tmp_path):
    import importlib.util
    import io
    import pathlib

    source = (pathlib.Path(__file__).parents[2] / "examples" / "train_keras_loop.py").read_text()
    assert source.count("import autodiff as ad\n") == 1
    path = tmp_path / "train_keras_loop_tf.py"
    path.write_text(source.replace("import autodiff as ad\n", "import tensorflow as ad\n"))
    spec = importlib.util.spec_from_file_location("train_keras_loop_tf", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    history, accuracy = module.main(epochs=3, out=io.StringIO())
    assert len(history) == 3 and history[-1][0] < history[0][0] and accuracy > 0.8


def test_nested_layers_and_models_are_tracked_in_keras_order(tf):
    def make(k):
        class Block(k.layers.Layer):
            def __init__(self):
                super().__init__()
                self.second = k.layers.Dense(3)
                self.first = k.layers.Dense(2, use_bias=False)

            def call(self, x):
                return self.first(self.second(x))

        class Net(k.Model):
            def __init__(self):
                super().__init__()
                self.head = k.Sequential([k.layers.Dense(4), k.layers.Dense(1)])
                self.block = Block()

            def call(self, x):
                return self.head(self.block(x))

        return Net()

    theirs, ours = make(tf.keras), make(ad.keras)
    theirs(tf.ones([2, 5]))
    ours(ad.ones([2, 5]))
    shapes = [tuple(v.shape) for v in ours.trainable_variables]
    assert shapes == [tuple(v.shape) for v in theirs.trainable_variables]
    assert shapes == [(2, 4), (4,), (4, 1), (1,), (5, 3), (3,), (3, 2)]


def test_losses_are_also_at_the_top_level_as_tf_losses(tf):
    assert tf.losses.BinaryCrossentropy is tf.keras.losses.BinaryCrossentropy
    assert ad.losses is ad.keras.losses
    for name in ("MeanSquaredError", "BinaryCrossentropy", "CategoricalCrossentropy",
                 "SparseCategoricalCrossentropy", "Huber", "MeanAbsoluteError"):
        assert hasattr(tf.losses, name) and hasattr(ad.losses, name), name
