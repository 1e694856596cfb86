"""``ad.keras.ops``, ``activations``, ``initializers``, ``regularizers`` and ``random`` against
Keras 3 on TensorFlow 2.21: the same values (ops, activations, regularizer penalties, their
gradients) for the same inputs, and initializers with Keras' statistics (their random numbers
are each library's own)."""

import numpy as np
import pytest

import autodiff as ad

RNG = np.random.default_rng(99)
X = RNG.standard_normal((3, 4)).astype(np.float32)
Y = RNG.standard_normal((3, 4)).astype(np.float32)

OPS = {
    "sum_axis": lambda o, x, y: o.sum(x, axis=1, keepdims=True),
    "mean": lambda o, x, y: o.mean(x),
    "max": lambda o, x, y: o.max(x, axis=0),
    "std": lambda o, x, y: o.std(x, axis=1),
    "var": lambda o, x, y: o.var(x),
    "logsumexp": lambda o, x, y: o.logsumexp(x, axis=-1),
    "matmul": lambda o, x, y: o.matmul(x, o.transpose(y)),
    "dot": lambda o, x, y: o.dot(x, o.transpose(y)),
    "concatenate": lambda o, x, y: o.concatenate([x, y], axis=1),
    "stack": lambda o, x, y: o.stack([x, y], axis=1),
    "where_clip": lambda o, x, y: o.where(o.greater(x, 0.0), o.clip(x, -0.5, 0.5), y),
    "reshape_expand_squeeze": lambda o, x, y: o.squeeze(o.expand_dims(o.reshape(x, (4, 3)), 0)),
    "softmax_log_softmax": lambda o, x, y: o.softmax(x) + o.log_softmax(y, axis=0),
    "gelu_default": lambda o, x, y: o.gelu(x),
    "leaky_relu": lambda o, x, y: o.leaky_relu(x),
    "norm": lambda o, x, y: o.norm(x, axis=1),
    "take": lambda o, x, y: o.take(x, np.array([2, 0]), axis=0),
    "one_hot_cast": lambda o, x, y: o.cast(o.one_hot(o.argmax(x, axis=1), 4), "float32") * y,
    "cumsum": lambda o, x, y: o.cumsum(x, axis=1),
    "square_sqrt_abs": lambda o, x, y: o.sqrt(o.abs(x)) + o.square(y),
    "full_linspace": lambda o, x, y: x * o.full((3, 4), 2.0) + o.linspace(0, 1, 4),
    "any_all": lambda o, x, y: o.where(o.logical_and(o.any(x > 1.0, axis=1, keepdims=True),
                                                     o.all(y > -3.0)), x, y),
    "sort_flip": lambda o, x, y: o.sort(x, axis=0) + o.flip(y, axis=1) + o.flip(y),
    "argsort_take": lambda o, x, y: o.take(x, o.argsort(y[0]), axis=1),
    "isnan_isinf_isfinite": lambda o, x, y: o.where(o.logical_or(o.isnan(x / y), o.isinf(y)),
                                                    0.0, x) * o.cast(o.isfinite(x), "float32"),
    "moments": lambda o, x, y: o.concatenate(o.moments(x * y, axes=[0], keepdims=True), 0),
}

ACTIVATIONS = ["relu", "relu6", "elu", "selu", "sigmoid", "hard_sigmoid", "tanh", "softmax",
               "log_softmax", "softplus", "softsign", "gelu", "silu", "swish", "leaky_relu",
               "mish", "exponential", "linear"]


def _value_and_grad(m, fn, x, y):
    x, y = m.constant(x), m.constant(y)
    with m.GradientTape() as tape:
        tape.watch(x)
        tape.watch(y)
        out = fn(x, y)
        loss = m.reduce_sum(m.cast(out, "float32") * 0.7)
    return out.numpy(), [np.zeros_like(X) if g is None else np.asarray(m.convert_to_tensor(g))
                         for g in tape.gradient(loss, [x, y])]


@pytest.mark.parametrize("name", sorted(OPS))
def test_keras_ops_equal_keras(tf, name):
    import keras
    theirs = _value_and_grad(tf, lambda x, y: OPS[name](keras.ops, x, y), X, Y)
    ours = _value_and_grad(ad, lambda x, y: OPS[name](ad.keras.ops, x, y), X, Y)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    for a, t in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activations_equal_keras(tf, name):
    theirs = _value_and_grad(tf, lambda x, y: tf.keras.activations.get(name)(x), X, Y)
    ours = _value_and_grad(ad, lambda x, y: ad.keras.activations.get(name)(x), X, Y)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[1][0], theirs[1][0], rtol=1e-5, atol=1e-6)


def test_relu_options_equal_keras(tf):
    kwargs = dict(negative_slope=0.1, max_value=0.9, threshold=0.3)
    np.testing.assert_allclose(ad.keras.activations.relu(ad.constant(X), **kwargs).numpy(),
                               tf.keras.activations.relu(tf.constant(X), **kwargs).numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("make", [lambda r: r.L1(0.3), lambda r: r.L2(0.02),
                                  lambda r: r.L1L2(l1=0.1, l2=0.2)], ids=["l1", "l2", "l1_l2"])
def test_regularizer_penalties_equal_keras(tf, make):
    theirs = float(make(tf.keras.regularizers)(tf.constant(X)))
    assert float(make(ad.keras.regularizers)(ad.constant(X))) == pytest.approx(theirs, rel=1e-6)


@pytest.mark.parametrize("name", ["he_normal", "he_uniform", "glorot_normal", "glorot_uniform",
                                  "lecun_normal", "lecun_uniform", "truncated_normal",
                                  "random_uniform", "orthogonal"])
def test_initializers_have_keras_statistics(tf, name):
    shape = (300, 200)
    ad.random.set_seed(0)
    theirs = tf.keras.initializers.get(name)(shape).numpy()
    ours = ad.keras.initializers.get(name)(shape).numpy()
    assert ours.shape == theirs.shape
    assert ours.std() == pytest.approx(theirs.std(), rel=0.03)
    if name != "orthogonal":   # bounded draws (uniform, or truncated at two deviations)
        assert np.abs(ours).max() <= np.abs(theirs).max() * 1.02 + 1e-6
    assert abs(ours.mean()) < 3 * theirs.std() / np.sqrt(ours.size) + 1e-6


def test_keras_random_an_int_seed_repeats_its_draw_as_in_keras(tf):
    import keras
    assert np.array_equal(keras.random.normal((2, 3), seed=5).numpy(),
                          keras.random.normal((2, 3), seed=5).numpy())
    a = ad.keras.random.normal((2, 3), seed=5)
    b = ad.keras.random.normal((2, 3), seed=5)
    assert tuple(a.shape) == (2, 3) and np.array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(ad.keras.random.normal((2, 3)).numpy(),
                              ad.keras.random.normal((2, 3)).numpy())
    assert np.abs(ad.keras.random.truncated_normal((500,), seed=2).numpy()).max() <= 2.0
    assert ad.keras.random.uniform((4,), 2.0, 3.0, seed=1).numpy().min() >= 2.0
    with pytest.raises(NotImplementedError, match="SeedGenerator"):
        ad.keras.random.normal((2,), seed=object())


# ---- keras.utils ----------------------------------------------------------------------
@pytest.mark.parametrize("labels, num_classes", [([0, 2, 1], 3), ([[1], [0]], None),
                                                 ([[0, 1], [2, 0]], None), ([3], 5)])
def test_to_categorical_matches_keras(tf, labels, num_classes):
    import keras
    ours = ad.keras.utils.to_categorical(labels, num_classes)
    theirs = keras.utils.to_categorical(labels, num_classes)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


def test_set_random_seed_repeats_every_stream_and_refuses_a_float_as_keras(tf):
    import keras
    draws = []
    for _ in range(2):
        ad.keras.utils.set_random_seed(5)
        draws.append((ad.random.uniform([3]).numpy(), np.random.random(3),
                      ad.keras.layers.Dense(2)(ad.ones([1, 3])).numpy()))
    for a, b in zip(*draws):
        np.testing.assert_array_equal(a, b)
    for module in (ad.keras, keras):
        with pytest.raises(ValueError, match="Expected `seed` argument to be an integer"):
            module.utils.set_random_seed(1.5)


def test_new_ops_give_keras_dtypes(tf):
    dtypes = []
    for o in (tf.keras.ops, ad.keras.ops):
        outs = [o.full((2,), 3), o.full((2,), 3, dtype="int32"), o.linspace(0, 1, 3),
                o.argsort(X), o.any(X > 0), o.isnan(X), o.sort(X), o.flip(X)]
        dtypes.append([getattr(t.dtype, "name", t.dtype) for t in outs])
    assert dtypes[1] == dtypes[0]


def test_argmax_argmin_give_keras_int32_and_convert_to_numpy_an_array(tf):
    for k in (tf.keras, ad.keras):
        o = k.ops
        for out in (o.argmax(X), o.argmax(X, axis=1), o.argmin(X, axis=0, keepdims=True)):
            assert getattr(out.dtype, "name", out.dtype) == "int32"
        array = o.convert_to_numpy(o.argmax(X, axis=1))
        assert isinstance(array, np.ndarray)
        np.testing.assert_array_equal(array, np.argmax(X, axis=1))


def test_keras_variable_names_dtypes_and_an_optimizer_step_as_keras(tf):
    made = []
    for k in (tf.keras, ad.keras):
        variables = [k.Variable(np.array([1.0, -2.0], np.float32)), k.Variable(3.0, name="w"),
                     k.Variable("ones", shape=(2,), name="o"), k.Variable(np.array([1, 2]))]
        optimizer = k.optimizers.Adam(0.1)
        for step in range(3):
            grad = np.array([0.5, -1.0], np.float32) * (step + 1)
            optimizer.apply_gradients([(grad, variables[0]), (grad, variables[2])])
        made.append([(v.name, v.path, str(k.ops.convert_to_numpy(v).dtype),
                      k.ops.convert_to_numpy(v).tolist()) for v in variables])
        with pytest.raises(ValueError):
            k.Variable("zeros")                     # an initializer needs a shape
    assert [entry[:3] for entry in made[1]] == [entry[:3] for entry in made[0]]
    for ours, theirs in zip(made[1], made[0]):
        np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-6)


def test_clear_session_starts_the_automatic_names_over_as_keras(tf):
    names = []
    for k in (tf.keras, ad.keras):
        k.layers.Dense(1), k.layers.Dense(1)
        k.backend.clear_session()
        first = k.layers.Dense(1).name
        k.utils.clear_session()
        names.append((first, k.layers.Dense(1).name, k.layers.Dense(1).name))
    assert names[1] == names[0] == ("dense", "dense", "dense_1")


@pytest.mark.parametrize("name", ["RandomNormal", "RandomUniform", "TruncatedNormal",
                                  "GlorotUniform", "HeNormal", "LecunNormal", "Orthogonal"])
def test_a_seeded_initializer_repeats_its_values_as_in_keras(tf, name):
    for k in (tf.keras, ad.keras):
        init = getattr(k.initializers, name)(seed=5)
        np.testing.assert_array_equal(np.asarray(init((4, 3))), np.asarray(init((4, 3))))
        first, second = k.layers.Dense(3, kernel_initializer=init), \
            k.layers.Dense(3, kernel_initializer=init)
        first.build((None, 4))
        second.build((None, 4))
        np.testing.assert_array_equal(first.get_weights()[0], second.get_weights()[0])
