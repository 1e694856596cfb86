"""ad.Module and ad.layers (Dense, BatchNormalization), and the guide examples that use them.

The advanced autodiff guide builds its Jacobian, Hessian, batch-Jacobian and
input-gradient-regularization examples on ``tf.keras.layers.Dense`` and
``BatchNormalization``; here they run on ``ad.layers`` with the guide's shapes.
"""

import re

import numpy as np
import pytest

import autodiff as ad
from autodiff import testing

needs_jacobian = pytest.mark.skipif(not hasattr(ad.GradientTape, "jacobian"),
                                    reason="jacobian lands with issue 4")


# ---- ad.Module ---------------------------------------------------------------------

class Block(ad.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.w = ad.Variable([[1.0, 2.0]], name="w")
        self.b = ad.Variable([0.0, 0.0], name="b", trainable=False)


class Net(ad.Module):
    def __init__(self):
        super().__init__()
        self.layers = [Block("first"), Block("second")]
        self.extra = {"z": ad.Variable(1.0, name="z"), "a": ad.Variable(2.0, name="a")}
        self.shared = self.layers[0].w   # listed once


def test_module_walks_attributes_sorted_by_name_then_submodules():
    net = Net()
    names = [v.name for v in net.variables]
    # own leaves first, attributes sorted (extra < layers < shared), dict keys sorted;
    # then each submodule's own (b < w); the shared variable once, where first met
    assert names == ["a:0", "z:0", "w:0", "b:0", "b:0", "w:0"]
    assert net.variables[2] is net.layers[0].w and net.variables[5] is net.layers[1].w
    assert [v.name for v in net.trainable_variables] == ["a:0", "z:0", "w:0", "w:0"]
    assert [v.name for v in net.non_trainable_variables] == ["b:0", "b:0"]
    assert [m.name for m in net.submodules] == ["first", "second"]


def test_module_name_defaults_to_snake_case_class_name_and_is_checked():
    assert Net().name == "net"
    assert Block("custom_name").name == "custom_name"
    with pytest.raises(ValueError, match="valid module name"):
        ad.Module(name="not valid!")


def test_module_walk_survives_cycles():
    a, b = Block("a"), Block("b")
    a.other, b.other = b, a
    assert len(a.variables) == 4
    assert [m.name for m in a.submodules] == ["b"]


# ---- Dense -------------------------------------------------------------------------

def test_dense_builds_on_first_call_with_keras_names_and_shapes():
    layer = ad.layers.Dense(10, activation="relu")
    assert not layer.built and layer.trainable_variables == []
    y = layer(ad.random.normal([7, 5]))
    assert layer.built and y.shape == (7, 10)
    assert layer.kernel.shape == (5, 10) and layer.bias.shape == (10,)
    assert re.fullmatch(r"dense(_\d+)?", layer.name)
    assert [v.name for v in layer.trainable_variables] == ["kernel", "bias"]   # Keras 3
    assert [v.path for v in layer.trainable_variables] == [f"{layer.name}/kernel",
                                                           f"{layer.name}/bias"]


def test_dense_layer_names_are_unique_like_keras():
    first, second = ad.layers.Dense(1), ad.layers.Dense(1)
    n = int(first.name.rpartition("_")[2]) if "_" in first.name else 0
    assert second.name == f"dense_{n + 1}"
    assert ad.layers.Dense(1, name="head").name == "head"


def test_dense_computes_activation_of_x_kernel_plus_bias():
    layer = ad.layers.Dense(3, activation=ad.nn.relu, bias_initializer="ones")
    x = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    y = layer(x)
    expected = np.maximum(x @ layer.kernel.numpy() + 1.0, 0.0)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)


def test_dense_glorot_uniform_is_bounded_and_follows_the_global_seed():
    ad.random.set_seed(3)
    a = ad.layers.Dense(10)
    a(ad.ones([1, 5]))
    ad.random.set_seed(3)
    b = ad.layers.Dense(10)
    b(ad.ones([1, 5]))
    np.testing.assert_array_equal(a.kernel.numpy(), b.kernel.numpy())
    assert np.abs(a.kernel.numpy()).max() <= np.sqrt(6 / 15)
    assert a.kernel.numpy().std() > 0.1            # not all zeros
    np.testing.assert_array_equal(a.bias.numpy(), np.zeros(10, np.float32))


@pytest.mark.parametrize("name, fn", [("relu", ad.nn.relu), ("elu", ad.nn.elu),
                                      ("sigmoid", ad.nn.sigmoid), ("tanh", ad.nn.tanh),
                                      ("softmax", ad.nn.softmax), ("linear", lambda t: t)])
def test_dense_accepts_keras_activation_names(name, fn):
    layer = ad.layers.Dense(4, activation=name)
    x = ad.random.normal([3, 2])
    y = layer(x)
    np.testing.assert_allclose(y.numpy(), fn(x @ layer.kernel + layer.bias).numpy(), rtol=1e-6)


def test_dense_rejects_unknown_activation_and_wrong_input_size():
    with pytest.raises(ValueError, match="Unknown activation function: 'nope'"):
        ad.layers.Dense(3, activation="nope")
    layer = ad.layers.Dense(3)
    layer(ad.ones([2, 4]))
    with pytest.raises(ValueError, match="last axis is 4"):
        layer(ad.ones([2, 5]))
    with pytest.raises(ValueError, match="needs rank 2 or more"):
        ad.layers.Dense(3)(ad.ones([4]))


def test_dense_without_bias_and_on_rank_3_inputs():
    layer = ad.layers.Dense(2, use_bias=False)
    x = ad.random.normal([3, 4, 5])
    y = layer(x)
    assert layer.trainable_variables == [layer.kernel] and layer.bias is None
    np.testing.assert_allclose(y.numpy(), x.numpy() @ layer.kernel.numpy(), rtol=1e-5, atol=1e-6)


def test_dense_casts_float64_inputs_to_its_float32_variables_like_keras():
    layer = ad.layers.Dense(2)
    assert layer(np.ones((1, 3))).dtype == ad.float32
    assert ad.layers.Dense(2, dtype=ad.float64)(np.ones((1, 3))).dtype == ad.float64


def test_dense_gradients_match_finite_differences_to_second_order():
    layer = ad.layers.Dense(3, activation="tanh", dtype=ad.float64)
    x = np.random.default_rng(1).standard_normal((4, 2))
    layer(x)
    testing.check_grads(lambda t: layer(t), [x], order=2)


# ---- BatchNormalization ---------------------------------------------------------------

def test_batch_normalization_variables_are_gamma_beta_and_moving_statistics():
    bn = ad.layers.BatchNormalization()
    bn(ad.ones([2, 3]))
    assert [v.name for v in bn.trainable_variables] == ["gamma", "beta"]
    assert [v.path for v in bn.non_trainable_variables] == \
        [f"{bn.name}/moving_mean", f"{bn.name}/moving_variance"]
    assert all(v.shape == (3,) for v in bn.variables)


def test_batch_normalization_training_uses_batch_statistics_and_updates_moving_ones():
    bn = ad.layers.BatchNormalization(momentum=0.9)
    x = np.random.default_rng(0).normal(3.0, 2.0, size=(50, 4)).astype(np.float32)
    y = bn(x, training=True).numpy()
    variance = x.var(axis=0)
    np.testing.assert_allclose(y.mean(axis=0), 0.0, atol=1e-5)
    np.testing.assert_allclose(y.var(axis=0), variance / (variance + 1e-3), rtol=1e-4)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.1 * x.mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.9 + 0.1 * variance, rtol=1e-5)


def test_batch_normalization_inference_uses_moving_statistics():
    bn = ad.layers.BatchNormalization()
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_allclose(bn(x).numpy(), x / np.sqrt(1.0 + 1e-3), rtol=1e-6)
    bn.moving_mean.assign([1.0, 2.0])
    np.testing.assert_allclose(bn(x, training=False).numpy(),
                               (x - [1.0, 2.0]) / np.sqrt(1.0 + 1e-3), rtol=1e-6)


def test_batch_normalization_on_a_middle_axis():
    bn = ad.layers.BatchNormalization(axis=1)
    x = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float32)
    y = bn(x, training=True).numpy()
    assert bn.gamma.shape == (3,)
    np.testing.assert_allclose(y.mean(axis=(0, 2)), 0.0, atol=1e-5)


def test_batch_normalization_gradients_flow_to_inputs_and_parameters_not_moving_stats():
    bn = ad.layers.BatchNormalization(dtype=ad.float64)
    x = np.random.default_rng(2).standard_normal((6, 3))
    bn(x, training=True)
    testing.check_grads(lambda t: bn(t, training=True), [x], order=2)
    weights = ad.constant(np.random.default_rng(3).standard_normal((6, 3)))
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(bn(x, training=True) * weights)
    dgamma, dbeta, dmean = tape.gradient(loss, [bn.gamma, bn.beta, bn.moving_mean])
    np.testing.assert_allclose(dbeta.numpy(), weights.numpy().sum(axis=0))
    normalized = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3)
    np.testing.assert_allclose(dgamma.numpy(), (normalized * weights.numpy()).sum(0), rtol=1e-10)
    assert dmean is None


# ---- the advanced guide's examples -------------------------------------------------

def test_guide_input_gradient_regularization_with_dense():
    x = ad.random.normal([7, 5])
    layer = ad.layers.Dense(10, activation=ad.nn.relu)
    with ad.GradientTape() as t2:
        with ad.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            y = layer(x)  # noqa: F841  (the guide computes it too)
            out = ad.reduce_sum(layer(x) ** 2)
        g1 = t1.gradient(out, x)
        g1_mag = ad.norm(g1)
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
    assert [var.shape for var in dg1_mag] == [(5, 10), (10,)]
    assert all(np.isfinite(g.numpy()).all() for g in dg1_mag)


@needs_jacobian
def test_guide_jacobian_of_dense_output_with_respect_to_kernel():
    x = ad.random.normal([7, 5])
    layer = ad.layers.Dense(10, activation=ad.nn.relu)
    with ad.GradientTape(persistent=True) as tape:
        y = layer(x)
    assert y.shape == (7, 10) and layer.kernel.shape == (5, 10)
    j = tape.jacobian(y, layer.kernel)
    assert j.shape == (7, 10, 5, 10)
    g = tape.gradient(y, layer.kernel)
    j_sum = ad.reduce_sum(j, axis=[0, 1])
    assert ad.reduce_max(abs(g - j_sum)).numpy() < 1e-3


@needs_jacobian
def test_guide_hessian_of_two_dense_layers_and_newton_step():
    x = ad.random.normal([7, 5])
    layer1 = ad.layers.Dense(8, activation=ad.nn.relu)
    layer2 = ad.layers.Dense(6, activation=ad.nn.relu)
    with ad.GradientTape() as t2:
        with ad.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = ad.reduce_mean(x ** 2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    assert layer1.kernel.shape == (5, 8) and h.shape == (5, 8, 5, 8)
    n_params = ad.reduce_prod(layer1.kernel.shape)
    g_vec = ad.reshape(g, [n_params, 1])
    h_mat = ad.reshape(h, [n_params, n_params])
    np.testing.assert_allclose(h_mat.numpy(), h_mat.numpy().T, atol=1e-6)
    update = ad.linalg.solve(h_mat + ad.eye(h_mat.shape[0]) * 1e-3, g_vec)
    before = layer1.kernel.numpy()
    layer1.kernel.assign_sub(ad.reshape(update, layer1.kernel.shape))
    assert layer1.kernel.shape == (5, 8) and not np.array_equal(before, layer1.kernel.numpy())


@needs_jacobian
def test_guide_batch_jacobian_and_batch_normalization_couples_the_batch():
    x = ad.random.normal([7, 5])
    layer1 = ad.layers.Dense(8, activation=ad.nn.elu)
    layer2 = ad.layers.Dense(6, activation=ad.nn.elu)
    with ad.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer2(layer1(x))
    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5)
    assert ad.reduce_max(abs(jb - ad.reduce_sum(j, axis=2))).numpy() < 1e-3

    bn = ad.layers.BatchNormalization()
    with ad.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer2(bn(layer1(x), training=True))
    j = tape.jacobian(y, x).numpy()
    assert j.shape == (7, 6, 7, 5)
    off_diagonal = j[0, :, 1, :]   # example 1's input moves example 0's output
    assert np.abs(off_diagonal).max() > 1e-4
    assert tape.batch_jacobian(y, x).shape == (7, 6, 5)


def test_training_argument_is_dropped_for_layers_that_do_not_take_it():
    layer = ad.layers.Dense(2)
    x = ad.ones([1, 3])
    np.testing.assert_array_equal(layer(x, training=True).numpy(), layer(x).numpy())
