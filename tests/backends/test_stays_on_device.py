"""Nothing in the engine copies tensor data to the host: proved on the strict backend.

Inside ``autodiff._strict.no_transfers()`` even the explicit exits
(``.get()``, ``.item()``) raise. Every registered op runs there: its
forward, its first and second derivatives on nested tapes, and its JVP in
forward mode. Then the engine's other parts (jacobian, batch_jacobian,
hessians, custom gradients, user ops, layers, traced functions) run there
too. On a GPU each of these would otherwise be a silent device-to-host copy.

Inputs are made before the block: making a tensor from host data is the
one transfer a program must do.
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff import _strict, nest, testing
from autodiff.registry import REGISTRY

# Ops whose whole job is to look at the values on the host: one bool per call.
READS_THE_HOST_BY_DESIGN = {"CheckNumerics",   # raises when a value is NaN or inf
                            "PrintV2",   # ad.print writes the values as text (TensorFlow's
                            # PrintV2 runs on the host too)
                            # a shape computed in a trace (ops/dynamic_shape.py) is read to
                            # allocate the result: a few ints, as TensorFlow keeps shape
                            # tensors in host memory
                            "ReshapeTo", "FillTo", "BroadcastToShape", "RangeOf", "TileTo",
                            "RandomUniformOf",   # (and the random draws are made on the host)
                            # and slice bounds computed in a trace, to index with
                            "StridedSliceOf", "StridedSliceGradOf",
                            # and the box of ad.slice, checked against the input's shape
                            "SliceBounds"}
BUILTIN_OPS = sorted(name for name, prim in REGISTRY.items()
                     if prim.forward.__module__.startswith("autodiff.")
                     and name not in READS_THE_HOST_BY_DESIGN)


def test_check_numerics_reads_only_a_flag_and_leaves_its_result_on_the_device(strict):
    x = ad.constant([1.0, 2.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.debugging.check_numerics(x * x, "on the device")
    assert y.backend == "strict" and tape.gradient(y, x).backend == "strict"
    with pytest.raises(ad.errors.InvalidArgumentError, match="Tensor had NaN values"):
        ad.debugging.check_numerics(x * float("nan"), "on the device")


def _floats(tensors):
    return [t for t in nest.flatten(tensors) if t.dtype.is_floating]


@pytest.mark.parametrize("name", BUILTIN_OPS)
def test_op_forward_gradients_and_jvp_never_copy_to_the_host(name, strict):
    prim = REGISTRY[name]
    rng = np.random.default_rng(0)
    for shapes, params in testing.op_cases(prim):
        xs = [ad.constant(a) for a in testing.op_inputs(prim, shapes, rng)]
        sources = _floats(xs)
        with _strict.no_transfers():
            with ad.GradientTape(persistent=True) as outer:
                outer.watch(sources)
                with ad.GradientTape() as tape:
                    tape.watch(sources)
                    outputs = _floats(prim(*xs, **params))
                assert all(t.backend == "strict" for t in outputs)
                if not (prim.differentiable and outputs and sources):
                    continue
                # an IndexedSlices gradient (ResourceGather's) made dense on the device too
                grads = [ad.convert_to_tensor(g) for g in tape.gradient(outputs, sources)
                         if g is not None]
                assert all(g.backend == "strict" for g in grads)
                total = sum(ad.reduce_sum(g * g) for g in grads) if grads else None
            if total is not None:
                second = outer.gradient(total, sources)
                assert all(g is None or g.backend == "strict" for g in second)
            tangents = [ad.ones_like(x) for x in sources]
            with ad.autodiff.ForwardAccumulator(sources, tangents) as acc:
                outputs = _floats(prim(*xs, **params))
            jvps = acc.jvp(outputs, unconnected_gradients="zero")
            assert all(j.backend == "strict" for j in jvps)


def test_jacobians_and_hessians_stay_on_the_device(strict):
    x = ad.constant(np.linspace(-1.0, 1.0, 6).reshape(2, 3))
    w = ad.Variable(np.ones((3, 4)) / 3)
    with _strict.no_transfers():
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = ad.nn.softplus(x @ w)
            loss = ad.reduce_sum(y ** 2)
        j = tape.jacobian(y, x)
        bj = tape.batch_jacobian(y, x)
        jw = tape.jacobian(y, w, experimental_use_pfor=False)
        h = tape.hessian(loss, x)
        hvp = ad.functional.hvp(lambda v: ad.reduce_sum(ad.sin(v) * v), (x,), (ad.ones_like(x),))
    assert (j.shape, bj.shape, jw.shape, h.shape) == ((2, 4, 2, 3), (2, 4, 3), (2, 4, 3, 4),
                                                      (2, 3, 2, 3))
    assert all(t.backend == "strict" for t in (j, bj, jw, h, *nest.flatten(hvp)))
    np.testing.assert_allclose(ad.einsum("bxby->bxy", j).numpy(), bj.numpy())


def test_custom_gradients_and_user_ops_stay_on_the_device(strict):
    @ad.custom_gradient
    def clipped_log(x):
        def grad_fn(g):
            return g * ad.clip_by_value(1.0 / x, -10.0, 10.0)
        return ad.math.log(x), grad_fn

    x = ad.constant([0.01, 1.0, 2.0])
    with _strict.no_transfers():
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = ad.reduce_sum(clipped_log(x))
        g = tape.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), [10.0, 1.0, 0.5])
    assert g.backend == "strict"


def test_layers_train_on_the_device(strict):
    ad.random.set_seed(0)
    dense = ad.layers.Dense(4, activation="relu")
    norm = ad.layers.BatchNormalization()
    x = ad.random.normal([8, 3])
    y_true = ad.random.normal([8, 4])
    with _strict.no_transfers():
        for _ in range(3):
            with ad.GradientTape() as tape:
                y = norm(dense(x), training=True)
                loss = ad.reduce_mean((y - y_true) ** 2)
            grads = tape.gradient(loss, dense.trainable_variables + norm.trainable_variables)
            for v, g in zip(dense.trainable_variables + norm.trainable_variables, grads):
                v.assign_sub(0.1 * g)
    assert all(v.backend == "strict" for v in dense.trainable_variables + norm.variables)


def test_a_traced_function_runs_on_the_device(strict):
    @ad.function
    def f(x):
        return ad.reduce_sum(ad.tanh(x) * x)

    x = ad.constant([0.5, -1.0])
    f(x)   # tracing may look at values; running the graph must not
    with _strict.no_transfers():
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
    assert y.backend == g.backend == "strict"
    expected = np.tanh([0.5, -1.0]) + np.array([0.5, -1.0]) / np.cosh([0.5, -1.0]) ** 2
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-6)
