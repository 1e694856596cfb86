"""Every sentence that says what TensorFlow does, run against TensorFlow.

The lessons (notebooks/src), the READMEs and the engine's docstrings tell
students "TensorFlow does X". Each test here pins one such sentence: the
comment above it quotes where the sentence lives (file:line when written, or
a short id), the test runs the claim on real TensorFlow, and then runs the
same code on ``ad`` and asserts it agrees, unless the text itself documents
a deliberate difference. When a claim turns out false against TensorFlow,
the sentence is fixed, never enshrined here.

The ``tf`` fixture (tests/conformance/conftest.py) skips these tests where
TensorFlow is missing, and fails them under ``CI=true``.
"""

import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import autodiff as ad


def _value(t):
    return None if t is None else np.asarray(t.numpy())


def _assert_same(tf_result, ad_result, rtol=1e-6):
    """Nested lists of tensors / None: same structure, same Nones, close values."""
    if isinstance(tf_result, (list, tuple)):
        assert isinstance(ad_result, (list, tuple)) and len(tf_result) == len(ad_result)
        for t, a in zip(tf_result, ad_result):
            _assert_same(t, a, rtol)
        return
    if tf_result is None:
        assert ad_result is None, f"TensorFlow gives None, ad gives {ad_result!r}"
        return
    assert ad_result is not None, f"TensorFlow gives {tf_result!r}, ad gives None"
    np.testing.assert_allclose(_value(ad_result), _value(tf_result), rtol=rtol)
    assert ad_result.dtype.name == tf_result.dtype.name


# ---------------------------------------------------------------------------------------
# Watching: only what a tape watches receives a gradient
# ---------------------------------------------------------------------------------------

def _unwatched_constant(m):
    c = m.constant(3.0)
    with m.GradientTape() as tape:
        y = c * c
    return tape.gradient(y, c)


# 01_gradients_and_tapes.py "an unwatched constant gives None, not an error and not
# zero ... TensorFlow 2, and this library, return None"; 02_controlling_the_tape.py 5.1
# "unwatched constant: None"; notebooks/README.md:19 "an unwatched constant's gradient is
# None"
def test_claim_unwatched_constant_gradient_is_none(tf):
    assert _unwatched_constant(tf) is None
    assert _unwatched_constant(ad) is None


def _fed_a_recorded_op(m):
    x = m.constant(2.0)
    c = m.constant(5.0)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = x * c
    return tape.gradient(y, [x, c])


# 02_controlling_the_tape.py (teaching moment "feeding a recorded op is not being
# watched"), README.md:121-124 "`y = x * c` with only `x` watched: `tape.gradient(y, [x, c])`
# is `[c, None]`", 10_build_your_own_tape.py (B3) "gives `[c, None]`", autodiff/tape.py
# _watched_source_ids docstring "# [c, None]"
def test_claim_unwatched_source_feeding_a_recorded_op_gets_none(tf):
    tf_grads = _fed_a_recorded_op(tf)
    assert float(tf_grads[0]) == 5.0 and tf_grads[1] is None
    _assert_same(tf_grads, _fed_a_recorded_op(ad))


def _lesson2_direct_and_scaled(m, watch_data):
    w = m.Variable(2.0, name="w")
    data = m.constant(3.0)
    with m.GradientTape(persistent=True) as tape:
        if watch_data:
            tape.watch(data)
        direct = data * w
        scaled = data * 10.0
    result = [tape.gradient(direct, [w, data]), tape.gradient(scaled, data)]
    del tape
    return result


# 02_controlling_the_tape.py-234: the predict-then-run cells: `d direct / d [w, data]`
# is [3.0, None] and `d scaled / d data` None; after tape.watch(data): [3.0, 2.0] and 10.0
@pytest.mark.parametrize("watch_data", [False, True])
def test_claim_lesson2_direct_and_scaled(tf, watch_data):
    tf_result = _lesson2_direct_and_scaled(tf, watch_data)
    if watch_data:
        assert [float(g) for g in tf_result[0]] == [3.0, 2.0] and float(tf_result[1]) == 10.0
    else:
        assert float(tf_result[0][0]) == 3.0 and tf_result[0][1] is None and tf_result[1] is None
    _assert_same(tf_result, _lesson2_direct_and_scaled(ad, watch_data))


def _lesson8_b1(m):
    a = m.constant(2.0)
    b = m.constant(3.0)
    with m.GradientTape() as tape:
        tape.watch(a)
        c = a * b
        d = b * b
        e = c + d
    return tape.gradient(e, [a, b])


# 10_build_your_own_tape.py (B1): "`b`, although it is an input of the recorded `Mul`, gets
# `None`: it was never watched"
def test_claim_lesson8_b_fed_recorded_mul_gets_none(tf):
    tf_grads = _lesson8_b1(tf)
    assert float(tf_grads[0]) == 3.0 and tf_grads[1] is None
    _assert_same(tf_grads, _lesson8_b1(ad))


def _inner_only_watch(m, op):
    c = m.constant(1.0) if op == "cube" else m.constant(0.5)
    with m.GradientTape() as outer:
        with m.GradientTape() as inner:
            inner.watch(c)
            y = c ** 3 if op == "cube" else m.sin(c)
        dy = inner.gradient(y, c)
    return dy, outer.gradient(dy, c)


# 04_higher_order_derivatives.py "An older TensorFlow tutorial runs this very pattern (on
# x^3 at x = 1) and expects the second derivative 6.0. TensorFlow 2, and this library, give
# None"; 10_build_your_own_tape.py "In TensorFlow 2 the answer is None"; README.md:117-118
# "a constant watched only by an inner tape has no second derivative"
@pytest.mark.parametrize("op", ["cube", "sin"])
def test_claim_constant_watched_only_by_inner_tape_has_no_second_derivative(tf, op):
    tf_first, tf_second = _inner_only_watch(tf, op)
    assert tf_first is not None and tf_second is None
    _assert_same([tf_first, tf_second], list(_inner_only_watch(ad, op)))


def _both_tapes_watch(m):
    x = m.constant(0.5)
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = m.sin(x)
        dy = inner.gradient(y, x)
    return outer.gradient(dy, x)


# 10_build_your_own_tape.py "if another tape is recording while `gradient` runs, it
# records the `Cos` and `Mul` of the backward pass ... and can differentiate them again"
def test_claim_outer_tape_records_the_backward_pass(tf):
    tf_second = _both_tapes_watch(tf)
    np.testing.assert_allclose(float(tf_second), -np.sin(0.5), rtol=1e-6)
    _assert_same(tf_second, _both_tapes_watch(ad))


def _frozen_and_rebound(m):
    weight = m.Variable(2.0, name="weight")
    scale = m.Variable(3.0, trainable=False, name="scale")
    shifted = m.Variable(1.0, name="shifted") + 1.0
    data = m.constant(4.0)
    with m.GradientTape() as tape:
        y = weight * scale * shifted * data
    names = [v.name for v in tape.watched_variables()]
    return tape.gradient(y, [weight, scale, shifted, data]), names


# 01_gradients_and_tapes.py-203 "`scale` was created with `trainable=False`: frozen
# values are not watched"; "adding 1.0 to a Variable produces a new Tensor, a constant as
# far as the tape is concerned"; "`data` is a constant"
def test_claim_frozen_variables_and_rebound_names_are_not_watched(tf):
    tf_grads, tf_names = _frozen_and_rebound(tf)
    assert tf_grads[0] is not None and tf_grads[1:] == [None, None, None]
    assert tf_names == ["weight:0"]
    ad_grads, ad_names = _frozen_and_rebound(ad)
    _assert_same(tf_grads, ad_grads)
    assert ad_names == tf_names


# ---------------------------------------------------------------------------------------
# Dtypes: no implicit casting
# ---------------------------------------------------------------------------------------

# 02_controlling_the_tape.py "In TensorFlow 2, `tf.multiply(1, 3.0)` raises
# `TypeError`: ... `1` becomes an `int32` tensor, and then `3.0` has to become an `int32`
# too, which it cannot"; README.md:121-124; notebooks/README.md:19.
# ad refuses too, with its own error (the lesson prints the type it gets).
# NOTE for the lead: ad raises InvalidArgumentError (a ValueError) here, TensorFlow a
# TypeError; API.md asks for the same kinds of errors.
def test_claim_multiply_python_int_and_float_is_refused(tf):
    with pytest.raises(TypeError, match="Cannot convert 3.0 to EagerTensor of dtype int32"):
        tf.multiply(1, 3.0)
    with pytest.raises((TypeError, ad.errors.InvalidArgumentError)):
        ad.multiply(1, 3.0)


# 02_controlling_the_tape.py "`multiply(1, constant(3.0))` is a `float32` 3.0";
# README.md:121-124; 02_controlling_the_tape.py "`2 * ad.constant(3.0)` is a `float32` 6.0";
# README.md:85 "a bare Python number takes its partner's dtype"
def test_claim_python_number_takes_the_tensors_dtype(tf):
    _assert_same(tf.multiply(1, tf.constant(3.0)), ad.multiply(1, ad.constant(3.0)))
    assert tf.multiply(1, tf.constant(3.0)).dtype == tf.float32
    _assert_same(2 * tf.constant(3.0), 2 * ad.constant(3.0))
    _assert_same(tf.constant(3.0, tf.float64) + 1, ad.constant(3.0, ad.float64) + 1)


# README.md:85 "a Python float is float32; `float32 + float64` is an
# `ad.errors.InvalidArgumentError`"; API.md "Python ints int32"
def test_claim_python_values_and_mixed_dtypes(tf):
    assert tf.constant(1.0).dtype.name == ad.constant(1.0).dtype.name == "float32"
    assert tf.constant(1).dtype.name == ad.constant(1).dtype.name == "int32"
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.constant(1.0) + tf.constant(1.0, tf.float64)
    with pytest.raises(ad.errors.InvalidArgumentError):
        ad.constant(1.0) + ad.constant(1.0, ad.float64)


# 02_controlling_the_tape.py 5.2 "A tensor made from a Python `int` is `int32`; watching it
# earns a warning, and its gradient is `None`"
def test_claim_integer_source_gradient_is_none(tf):
    def run(m):
        count = m.constant(3)
        with m.GradientTape() as tape:
            tape.watch(count)
            y = count * count
        return tape.gradient(y, count)
    assert tf.constant(3).dtype == tf.int32
    assert run(tf) is None
    with pytest.warns(Warning):
        assert run(ad) is None


# ---------------------------------------------------------------------------------------
# Non-differentiable ops
# ---------------------------------------------------------------------------------------

# 02_controlling_the_tape.py "TensorFlow marks such ops [rounding, shuffling]
# non-differentiable: the gradient through them is `None`, not zero";
# autodiff/ops/elementwise.py:104 "not differentiable (gradient None), as in TensorFlow";
# autodiff/ops/random.py:223/229 "not differentiable, as in TensorFlow 2: the gradient is None"
@pytest.mark.parametrize("op", ["round", "floor", "shuffle"])
def test_claim_round_floor_shuffle_have_no_gradient(tf, op):
    def run(m):
        level = m.Variable([1.3, 2.6], name="level")
        with m.GradientTape() as tape:
            if op == "shuffle":
                out = m.random.shuffle(level * 2.0)
            else:
                out = getattr(m.math, op)(level * 2.0)
        return tape.gradient(out, level)
    assert run(tf) is None
    assert run(ad) is None


# ---------------------------------------------------------------------------------------
# Custom gradients
# ---------------------------------------------------------------------------------------

def _first_and_second(m, f, at=3.0):
    x = m.constant(at)
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy_dx = inner.gradient(y, x)
    return [dy_dx, outer.gradient(dy_dx, x)]


def _square_nested_captured(m):
    @m.custom_gradient
    def square_nested_captured(x):
        def grad_fn(dy):
            @m.custom_gradient
            def backward(dy):                    # x captured, not an input
                def backward_grad(ddy):
                    return ddy * 2.0 * x
                return dy * 2.0 * x, backward_grad
            return backward(dy)
        return x * x, grad_fn
    return square_nested_captured


def _square_nested(m):
    @m.custom_gradient
    def square_nested(x):
        def grad_fn(dy):
            @m.custom_gradient
            def backward(dy, x):
                def backward_grad(ddy):
                    return ddy * 2.0 * x, ddy * 2.0 * dy
                return dy * 2.0 * x, backward_grad
            return backward(dy, x)
        return x * x, grad_fn
    return square_nested


def _square(m):
    @m.custom_gradient
    def square(x):
        def grad_fn(dy):
            return dy * 2.0 * x
        return x * x, grad_fn
    return square


# 05_custom_gradients.py "It is `2.0`, in TensorFlow 2 and here ... A `custom_gradient`
# function becomes a single record only if some recording tape watches one of
# its inputs ... When no recording tape does ... the function just runs its body as
# ordinary ops"; autodiff/custom_gradient.py:47-55 (the same rule)
def test_claim_square_nested_captured_second_derivative_is_2(tf):
    tf_result = _first_and_second(tf, _square_nested_captured(tf))
    assert [float(t) for t in tf_result] == [6.0, 2.0]
    _assert_same(tf_result, _first_and_second(ad, _square_nested_captured(ad)))


# 05_custom_gradients.py "An outer tape records the ops of `grad_fn` while an inner
# tape's backward pass runs them ... and differentiates them for the second derivative";
# :392 "Make `x` an input ... the second derivative is computed by *our* rule"
@pytest.mark.parametrize("make", [_square, _square_nested])
def test_claim_custom_gradient_second_derivatives(tf, make):
    tf_result = _first_and_second(tf, make(tf))
    assert [float(t) for t in tf_result] == [6.0, 2.0]
    _assert_same(tf_result, _first_and_second(ad, make(ad)))


def _product_on_constants(m, watch):
    @m.custom_gradient
    def product(x, y):
        def grad_fn(dz):
            return dz * y, dz * x
        return x * y, grad_fn
    p = m.constant(2.0)
    q = m.constant(3.0)
    with m.GradientTape(persistent=True) as tape:
        if watch:
            tape.watch([p, q])
        z = product(p, q)
    result = [tape.gradient(z, p), tape.gradient(z, q)]
    del tape
    return result


# 06_custom_gradients_deeper.py section 5 "leave them [the tape.watch calls] out and both
# gradients are `None`, in TensorFlow 2 and here ... A custom gradient does not change what a
# tape watches" (watch=False), and with them both are numbers (watch=True);
# 01_gradients_and_tapes.py "TensorFlow 2, and this library, return `None`"
@pytest.mark.parametrize("watch", [False, True])
def test_claim_custom_gradient_on_unwatched_constants_is_none(tf, watch):
    tf_result = _product_on_constants(tf, watch)
    if watch:
        assert [float(t) for t in tf_result] == [3.0, 2.0]
    else:
        assert tf_result == [None, None]
    _assert_same(tf_result, _product_on_constants(ad, watch))


def _graph_op_types(tf, fn, *specs):
    graph = tf.function(fn).get_concrete_function(*specs).graph
    return {op.type for op in graph.get_operations()}


# 05_custom_gradients.py: the eager tape records the call as one op named after the
# function, a graph as `IdentityN`; autodiff/custom_gradient.py says the same.
def test_claim_custom_gradient_op_is_named_after_the_function_eagerly_and_identity_n_in_graphs(
        tf, monkeypatch):
    from tensorflow.python.ops import custom_gradient as tf_custom_gradient

    square = _square(tf)
    assert "IdentityN" in _graph_op_types(tf, square, tf.TensorSpec([], tf.float32))
    recorded = []
    record_operation = tf_custom_gradient.record.record_operation
    monkeypatch.setattr(tf_custom_gradient.record, "record_operation",
                        lambda op_type, *rest: (recorded.append(op_type),
                                                record_operation(op_type, *rest)))
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        square(x)
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        _square(ad)(x)
    assert recorded == ["square"]
    assert [r.op_type for r in tape.records][-1] == "square"
    graph = ad.function(_square(ad)).get_concrete_function(ad.TensorSpec([], ad.float32)).graph
    assert "IdentityN" in {node.op_type for node in graph.nodes}


# 01_gradients_and_tapes.py "The op types carry TensorFlow's names: `Pow` for `**`, `Mul`
# for `*`, `Sub` for `-`"; 10_build_your_own_tape.py "its TensorFlow op type, "Sin""
def test_claim_op_type_names(tf):
    def f(m):
        return lambda x: m.sin(x ** 2.0 * x - x)
    tf_types = _graph_op_types(tf, f(tf), tf.TensorSpec([], tf.float32))
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        f(ad)(x)
    ad_types = {r.op_type for r in tape.records}
    assert {"Pow", "Mul", "Sub", "Sin"} <= tf_types
    assert ad_types == {"Pow", "Mul", "Sub", "Sin"}


# 05_nan_gradients_and_new_ops.py "register its gradient by the op's type name with
# `ad.RegisterGradient`, as TensorFlow does"; API.md "a second registration of one name
# raises KeyError"
def test_claim_register_gradient_by_op_type_and_twice_is_key_error(tf):
    name = "TapeschoolClaimsOp"
    tf.RegisterGradient(name)(lambda op, grad: grad)
    with pytest.raises(KeyError):
        tf.RegisterGradient(name)(lambda op, grad: grad)
    ad.RegisterGradient(name)(lambda op, grad: grad)
    with pytest.raises(KeyError):
        ad.RegisterGradient(name)(lambda op, grad: grad)


# ---------------------------------------------------------------------------------------
# Jacobians and Hessians
# ---------------------------------------------------------------------------------------

# 06_jacobians.py "`experimental_use_pfor=False` ... As in TensorFlow, that needs a
# persistent tape"; autodiff/tape.py:399 "(needs persistent=True), as TensorFlow does"
def test_claim_jacobian_without_pfor_needs_persistent_tape(tf):
    def run(m):
        x = m.constant([1.0, 2.0])
        with m.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        return tape.jacobian(y, x, experimental_use_pfor=False)
    with pytest.raises(RuntimeError):
        run(tf)
    with pytest.raises(RuntimeError):
        run(ad)


def _batch_coupled(m):
    x = m.constant([[1.0, 2.0], [3.0, 5.0], [-1.0, 0.5]])
    with m.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x - m.reduce_mean(x, axis=0)       # couples the batch, as BatchNormalization
    return tape.batch_jacobian(y, x), tape.jacobian(y, x)


# 06_jacobians.py "`batch_jacobian` does not check ... TensorFlow behaves the same way";
# autodiff/jacobian.py:22, autodiff/tape.py:416, autodiff/testing.py:331 "Like TensorFlow,
# batch_jacobian does not check"
def test_claim_batch_jacobian_does_not_check_independence(tf):
    tf_batch, tf_full = _batch_coupled(tf)
    per_example = tf.einsum("bxby->bxy", tf_full)
    assert tf_batch.shape == (3, 2, 2)
    assert not np.allclose(tf_batch.numpy(), per_example.numpy())   # silently "wrong"
    ad_batch, ad_full = _batch_coupled(ad)
    np.testing.assert_allclose(ad_batch.numpy(), tf_batch.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ad_full.numpy(), tf_full.numpy(), rtol=1e-6)


# 07_hessians_and_newton.py "two shortcuts TensorFlow does not have (`tape.hessian`,
# `ad.functional.hessian`)"; :72 "TensorFlow stops at the recipe above"; README.md:97
# "`tape.hessian` (TensorFlow has none)"; autodiff/tape.py:429, autodiff/functional.py:27
def test_claim_tensorflow_has_no_hessian_helper(tf):
    assert not hasattr(tf.GradientTape, "hessian")
    assert not hasattr(tf, "hessian") and not hasattr(tf.autodiff, "hessian")
    assert hasattr(ad.GradientTape, "hessian") and hasattr(ad.functional, "hessian")


# README.md:99 "Forward mode: `ad.autodiff.ForwardAccumulator`, nesting as in TensorFlow
# (forward-over-reverse Hessian-vector products)"
def test_claim_forward_over_reverse_hvp(tf):
    def run(m):
        x = m.constant([1.0, 2.0])
        v = m.constant([0.5, -1.0])
        with m.autodiff.ForwardAccumulator(x, v) as acc:
            with m.GradientTape() as tape:
                tape.watch(x)
                y = m.reduce_sum(x ** 3)
            g = tape.gradient(y, x)
        return acc.jvp(g)
    tf_hvp = run(tf)
    np.testing.assert_allclose(tf_hvp.numpy(), [6 * 1.0 * 0.5, 6 * 2.0 * -1.0], rtol=1e-6)
    _assert_same(tf_hvp, run(ad))


# ---------------------------------------------------------------------------------------
# Values and errors
# ---------------------------------------------------------------------------------------

# README.md:192 "`np.asarray(t)` too, as in TensorFlow"; autodiff/tensor.py:157
def test_claim_numpy_can_read_a_tensor(tf):
    np.testing.assert_array_equal(np.asarray(tf.constant([1.0, 2.0])), [1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(ad.constant([1.0, 2.0])), [1.0, 2.0])


# autodiff/tensor.py:219 "elementwise == makes tensors unhashable, as in TensorFlow; use .ref()"
def test_claim_tensors_are_unhashable(tf):
    with pytest.raises(TypeError):
        hash(tf.constant(1.0))
    with pytest.raises(TypeError):
        hash(ad.constant(1.0))


# autodiff/variable.py:35 "``.name`` adds TensorFlow's ``':0'`` suffix"
def test_claim_variable_name_suffix(tf):
    assert tf.Variable(1.0, name="x0").name == ad.Variable(1.0, name="x0").name == "x0:0"


# autodiff/functional.py:397 "RuntimeError: always, as ``tf.gradients`` does under eager
# execution"
def test_claim_gradients_raises_in_eager_mode(tf):
    with pytest.raises(RuntimeError):
        tf.gradients(tf.constant(1.0), tf.constant(1.0))
    with pytest.raises(RuntimeError):
        ad.gradients(ad.constant(1.0), ad.constant(1.0))


# autodiff/dtypes.py:133 "The dtype TensorFlow gives a Python value (nested lists included)"
@pytest.mark.parametrize("value", [1, 1.0, True, [1, 2], [[1.0, 2.0]], [1, 2.5], 1 + 2j])
def test_claim_python_value_dtypes(tf, value):
    assert ad.constant(value).dtype.name == tf.constant(value).dtype.name


# autodiff/ops/elementwise.py:212 "integer inputs give float64, as in TensorFlow"
def test_claim_integer_true_division_is_float64(tf):
    tf_q = tf.math.divide(tf.constant([1, 2]), tf.constant([2, 4]))
    ad_q = ad.math.divide(ad.constant([1, 2]), ad.constant([2, 4]))
    assert tf_q.dtype == tf.float64
    _assert_same(tf_q, ad_q)


# ---------------------------------------------------------------------------------------
# Gradient conventions at special points (ops docstrings)
# ---------------------------------------------------------------------------------------

def _grad_of(m, fn, values, dtype="float64"):
    x = m.Variable(np.array(values, dtype=dtype))
    with m.GradientTape() as tape:
        y = fn(m, x)
    return tape.gradient(y, x)


CONVENTIONS = {
    # autodiff/ops/nn.py:3/45 relu'(0) = 0 (API.md "relu'(0) = 0")
    "relu_at_0": (lambda m, x: m.nn.relu(x), [-1.0, 0.0, 2.0]),
    # autodiff/ops/nn.py:96 "the gradient is 0 at 0 and at 6 (TensorFlow)"
    "relu6_at_kinks": (lambda m, x: m.nn.relu6(x), [0.0, 3.0, 6.0, 7.0]),
    # autodiff/ops/nn.py:157/161 "At 0 the gradient is ``alpha`` (TensorFlow)"
    "leaky_relu_at_0": (lambda m, x: m.nn.leaky_relu(x, alpha=0.2), [-1.0, 0.0, 1.0]),
    # autodiff/ops/elementwise.py:93 "Maximum/Minimum send g to x where x wins or ties"
    "maximum_tie": (lambda m, x: m.maximum(x, m.constant([1.0, 1.0], dtype=m.float64)), [1.0, 2.0]),
    "minimum_tie": (lambda m, x: m.minimum(x, m.constant([1.0, 1.0], dtype=m.float64)), [1.0, 0.0]),
    # autodiff/ops/reduce.py:87 "g is shared evenly between all elements equal to the extreme"
    "reduce_max_ties": (lambda m, x: m.reduce_max(x), [3.0, 1.0, 3.0]),
    # autodiff/ops/clip.py:4 "TensorFlow's convention at the bounds: the gradient passes"
    "clip_at_bounds": (lambda m, x: m.clip_by_value(x, 0.0, 1.0), [0.0, 0.5, 1.0, 2.0]),
    # autodiff/ops/clip.py:12 "``norm`` of an all-zero vector has gradient NaN (TensorFlow's too)"
    "norm_at_zero": (lambda m, x: m.norm(x), [0.0, 0.0]),
    # autodiff/ops/clip.py:69 "The gradient at ``t = 0`` is finite" (clip_by_norm)
    "clip_by_norm_at_zero": (lambda m, x: m.clip_by_norm(x, 1.0), [0.0, 0.0]),
    # autodiff/ops/elementwise.py:60 "d/dy x^y ... taken as 0 where x <= 0"
    "pow_exponent_at_nonpositive_base": (
        lambda m, x: m.pow(m.constant([0.0, -2.0], dtype=m.float64), x), [2.0, 2.0]),
    # autodiff/ops/reduce.py:138 reduce_prod's gradient with a zero (exclusive products)
    "reduce_prod_with_zero": (lambda m, x: m.reduce_prod(x), [2.0, 0.0, 3.0]),
    # API.md "sign (its gradient is zero)"
    "sign": (lambda m, x: m.sign(x), [-1.0, 0.0, 2.0]),
}


@pytest.mark.parametrize("name", sorted(CONVENTIONS))
def test_claim_gradient_conventions_at_special_points(tf, name):
    fn, values = CONVENTIONS[name]
    tf_grad = _grad_of(tf, fn, values)
    _assert_same(tf_grad, _grad_of(ad, fn, values))


# autodiff/ops/nn.py:45 "TensorFlow's second derivatives of relu, relu6 and leaky_relu are
# zeros"; autodiff/ops/nn.py:73 "second derivatives are then zeros, as in TensorFlow"
@pytest.mark.parametrize("act", ["relu", "relu6", "leaky_relu"])
def test_claim_second_derivative_of_piecewise_linear_is_zeros(tf, act):
    def run(m):
        x = m.Variable(np.array([-1.0, 0.5, 7.0]))
        with m.GradientTape() as outer:
            with m.GradientTape() as inner:
                y = getattr(m.nn, act)(x)
            g = inner.gradient(y, x)
        return outer.gradient(g, x)
    tf_second = run(tf)
    assert tf_second is not None and not np.any(tf_second.numpy())
    _assert_same(tf_second, run(ad))


# ---------------------------------------------------------------------------------------
# The README's guide snippet
# ---------------------------------------------------------------------------------------

# README.md:46-47 "TensorFlow's autodiff guides run with `tf.` replaced by `ad.`";
# 01_gradients_and_tapes.py "write `ad.` where TensorFlow code says `tf.`"
def test_claim_readme_snippet_runs_on_both(tf):
    def run(m):
        x = m.Variable(3.0)
        with m.GradientTape() as tape:
            y = x ** 2
        return tape.gradient(y, x)
    tf_grad = run(tf)
    assert float(tf_grad) == 6.0
    _assert_same(tf_grad, run(ad))
    assert str(run(ad)) == "ad.Tensor(6.0, shape=(), dtype=float32)"
    assert str(tf_grad) == "tf.Tensor(6.0, shape=(), dtype=float32)"


# ---------------------------------------------------------------------------------------
# Engine docstrings: errors, names, dtypes
# ---------------------------------------------------------------------------------------

# autodiff/errors.py:3 "``InvalidArgumentError`` is also a ValueError ... That is an
# extension: TensorFlow's ... derives from ``tf.errors.OpError`` only" (the sentence used
# to say "as it does in TensorFlow", which is false; fixed)
def test_claim_invalid_argument_error_is_a_value_error_only_here(tf):
    assert issubclass(tf.errors.InvalidArgumentError, tf.errors.OpError)
    assert not issubclass(tf.errors.InvalidArgumentError, ValueError)
    assert issubclass(ad.errors.InvalidArgumentError, ValueError)   # the documented extension


# autodiff/name_scope.py:16 "As in TensorFlow's eager mode, nested scopes join with ``/``, a
# name ending in ``/`` is taken as a whole scope name (it does not nest), the empty name
# goes back to the top, and names are not made unique"
def test_claim_name_scope_rules(tf):
    def run(m):
        seen = []
        with m.name_scope("model"):
            for name in ["dense", "whole/", "", "dense"]:
                with m.name_scope(name) as scope:
                    seen.append(scope)
        return seen
    assert run(tf) == ["model/dense/", "whole/", "", "model/dense/"]
    assert run(ad) == run(tf)


# autodiff/dtypes.py:5 "a Python int int32 (int64 if it does not fit)"
def test_claim_large_python_int_is_int64(tf):
    assert tf.constant(2 ** 40).dtype.name == ad.constant(2 ** 40).dtype.name == "int64"


# autodiff/ops/shape.py:197 "The shape as an int32 vector tensor (``tf.shape``)"
def test_claim_shape_is_int32_vector(tf):
    _assert_same(tf.shape(tf.zeros([2, 3])), ad.shape(ad.zeros([2, 3])))


# ---------------------------------------------------------------------------------------
# Engine docstrings: tapes, threads, forward mode
# ---------------------------------------------------------------------------------------

# autodiff/tape.py:531 "Never connected, so 'zero' gives zeros of its own dtype (as
# TensorFlow does)" (an integer source)
def test_claim_integer_source_with_zero_gets_zeros_of_its_dtype(tf):
    def run(m):
        n = m.constant([1, 2])
        x = m.constant(2.0)
        with m.GradientTape() as tape:
            tape.watch([n, x])
            y = x * x
        return tape.gradient(y, n, unconnected_gradients="zero")
    tf_grad = run(tf)
    assert tf_grad.dtype == tf.int32 and list(tf_grad.numpy()) == [0, 0]
    _assert_same(tf_grad, run(ad))


# autodiff/tape.py:497 "TensorFlow's rule for ``gradient`` called inside the tape's own
# block": a persistent tape keeps recording after it
def test_claim_persistent_tape_keeps_recording_after_gradient_inside_its_block(tf):
    def run(m):
        x = m.constant(2.0)
        with m.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            first = tape.gradient(y, x)
            z = x * 3.0
        return [first, tape.gradient(z, x)]
    tf_result = run(tf)
    assert [float(t) for t in tf_result] == [4.0, 3.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _assert_same(tf_result, run(ad))


# autodiff/tape.py:64 "TensorFlow's tapes are per thread too: two threads each running their
# own tape never see each other's ops"
def test_claim_tapes_belong_to_one_thread(tf):

    def run(m):
        x = m.Variable(2.0)
        started, done = threading.Event(), threading.Event()
        other = {}

        def worker():
            started.wait()
            other["y"] = x * x          # read in another thread while the tape records
            done.set()

        thread = threading.Thread(target=worker)
        thread.start()
        with m.GradientTape(persistent=True) as tape:
            started.set()
            done.wait()
            z = x * 3.0                 # this thread's op: recorded
        thread.join()
        return [tape.gradient(other["y"], x), tape.gradient(z, x)]
    tf_result = run(tf)
    assert tf_result[0] is None and float(tf_result[1]) == 3.0
    _assert_same(tf_result, run(ad))


# autodiff/forward.py:254 "An output whose u the rules never read gets None, not zeros"
# (jvp of a tensor the accumulator's primals do not reach)
def test_claim_forward_jvp_of_unconnected_is_none(tf):
    def run(m):
        x = m.constant(1.0)
        other = m.constant(2.0)
        with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
            y = other * 3.0
        return acc.jvp(y)
    assert run(tf) is None
    assert run(ad) is None


# autodiff/autodiff.py:1 "``ad.autodiff``: the namespace TensorFlow calls ``tf.autodiff``"
def test_claim_autodiff_namespace(tf):
    assert hasattr(tf.autodiff, "ForwardAccumulator")
    assert hasattr(ad.autodiff, "ForwardAccumulator")


# autodiff/ops/creation.py:3 "The ``*_like`` ops read their input, so a tape watching it
# records them ... but no gradient flows through them"; "``fill`` and ``linspace`` are
# differentiable in their values ... as in TensorFlow"
def test_claim_like_ops_no_gradient_fill_linspace_differentiable(tf):
    def run(m):
        x = m.constant([1.0, 2.0])
        v = m.constant(3.0)
        with m.GradientTape(persistent=True) as tape:
            tape.watch([x, v])
            z = m.zeros_like(x) + m.ones_like(x)
            filled = m.fill([2], v)
            line = m.linspace(v, v * 2.0, 4)
        result = [tape.gradient(z, x), tape.gradient(filled, v), tape.gradient(line, v)]
        del tape
        return result
    tf_result = run(tf)
    assert tf_result[0] is None and float(tf_result[1]) == 2.0
    _assert_same(tf_result, run(ad))


# autodiff/ops/creation.py:145 "start + i * step, as TensorFlow computes it": true of the
# values between the ends; TensorFlow then writes ``stop`` itself as the last value
# (linspace_nd concatenates start, the middle values and stop). ad's last value is
# start + (num - 1) * step, one float32 ulp off here: an engine difference, reported.
def test_claim_linspace_values_bit_for_bit(tf):
    start, stop = np.float32(0.1), np.float32(1.7)
    step = (stop - start) / np.float32(6)
    tf_line = tf.linspace(0.1, 1.7, 7).numpy()
    np.testing.assert_array_equal(tf_line[:-1], [start + np.float32(i) * step for i in range(6)])
    assert tf_line[-1] == stop
    np.testing.assert_array_equal(ad.linspace(0.1, 1.7, 7).numpy(), tf_line)


# ---------------------------------------------------------------------------------------
# Engine docstrings: nn ops and losses
# ---------------------------------------------------------------------------------------

def _backward_op_types(m, fn, x_value):
    """Op types the outer of two tapes records while the inner one's gradient runs."""
    x = m.constant(x_value)
    if m is ad:
        with ad.GradientTape() as outer:
            outer.watch(x)
            with ad.GradientTape() as inner:
                inner.watch(x)
                y = fn(ad, x)
            inner.gradient(y, x)
        return {r.op_type for r in outer.records}

    def grad(x):
        with m.GradientTape() as inner:
            inner.watch(x)
            y = fn(m, x)
        return inner.gradient(y, x)
    spec = m.TensorSpec(np.shape(x_value), m.float32)
    return _graph_op_types(m, grad, spec)


# autodiff/ops/nn.py:3 "``Relu`` follows TensorFlow: its VJP is a separate op, ``ReluGrad``";
# :71 "Like TensorFlow's Relu6Grad and LeakyReluGrad it is an op of its own";
# autodiff/ops/elementwise.py:138 "TensorFlow's TanhGrad(y, dy) ... is an op of its own"
@pytest.mark.parametrize("act,grad_op", [("relu", "ReluGrad"), ("relu6", "Relu6Grad"),
                                         ("leaky_relu", "LeakyReluGrad"), ("tanh", "TanhGrad")])
def test_claim_activation_gradients_are_ops_of_their_own(tf, act, grad_op):
    fn = (lambda m, x: m.math.tanh(x)) if act == "tanh" else (lambda m, x: getattr(m.nn, act)(x))
    assert grad_op in _backward_op_types(tf, fn, [1.0, -2.0])
    assert grad_op in _backward_op_types(ad, fn, [1.0, -2.0])


# autodiff/ops/nn.py:144 "Scaled elu ... with TensorFlow's constants"
def test_claim_selu_constants(tf):
    values = [-2.0, -0.5, 0.0, 1.5]
    _assert_same(tf.nn.selu(tf.constant(values)), ad.nn.selu(ad.constant(values)))


# autodiff/ops/nn_compositions.py:6 "``moments`` computes the variance around
# ``stop_gradient(mean)`` ... second derivatives differ from the textbook ones:
# TensorFlow's do, and so do ours"
def test_claim_moments_second_derivative(tf):
    def run(m):
        x = m.Variable(np.array([1.0, 2.0, 4.0]))
        with m.GradientTape() as outer:
            with m.GradientTape() as inner:
                _, variance = m.nn.moments(x, axes=[0])
            g = inner.gradient(variance, x)
        return [g, outer.jacobian(g, x)]
    tf_result = run(tf)
    textbook = (np.eye(3) - 1.0 / 3.0) * 2.0 / 3.0
    assert not np.allclose(tf_result[1].numpy(), textbook)
    _assert_same(tf_result, run(ad))


# autodiff/ops/nn_compositions.py:35 "float16 inputs are reduced in float32, as TensorFlow
# does"; :31 "shift: unused (as in TensorFlow 2)"
def test_claim_moments_float16(tf):
    values = np.array([60000.0, 60000.0, 1.0], dtype=np.float16)   # float16 sum overflows
    tf_mean, tf_var = tf.nn.moments(tf.constant(values), axes=[0], shift=123.0)
    ad_mean, ad_var = ad.nn.moments(ad.constant(values), axes=[0], shift=123.0)
    assert np.isfinite(tf_mean.numpy())
    _assert_same([tf_mean, tf_var], [ad_mean, ad_var], rtol=1e-3)


# autodiff/ops/nn_compositions.py:10 "``dropout`` multiplies by ``1 / (1 - rate)`` ... the
# gradient is ``g / (1 - rate)`` where a unit was kept and 0 where it was dropped"
def test_claim_dropout_gradient(tf):
    def run(m):
        x = m.Variable(np.ones(200, dtype=np.float32))
        with m.GradientTape() as tape:
            y = m.nn.dropout(x, rate=0.25, seed=3)
        return y.numpy(), tape.gradient(y, x).numpy()
    for m in (tf, ad):
        y, g = run(m)
        kept = y != 0
        assert 0 < kept.sum() < 200
        np.testing.assert_allclose(g[kept], 1 / 0.75, rtol=1e-6)
        assert not g[~kept].any()


# autodiff/ops/pooling.py:5 "On a tie TensorFlow (on CPU) picks the *first* maximum in the
# window, reading row by row"; :16 "the rules give zeros (not None, as TensorFlow) for x"
def test_claim_max_pool_ties_and_second_derivative(tf):
    values = np.array([[1.0, 3.0], [3.0, 2.0]], dtype=np.float32).reshape(1, 2, 2, 1)

    def run(m):
        x = m.Variable(values)
        with m.GradientTape() as outer:
            with m.GradientTape() as inner:
                y = m.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID")
            g = inner.gradient(y, x)
        return [g, outer.gradient(g, x)]
    tf_result = run(tf)
    assert tf_result[0].numpy().ravel().tolist() == [0.0, 1.0, 0.0, 0.0]
    assert tf_result[1] is not None and not tf_result[1].numpy().any()
    _assert_same(tf_result, run(ad))


# autodiff/ops/pooling.py:20 "With SAME padding TensorFlow averages only the cells inside
# the input (a corner window of a 3x3 pool divides by 4, not 9)"
def test_claim_avg_pool_same_padding_counts_inside_cells(tf):
    values = np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)
    tf_out = tf.nn.avg_pool2d(values, ksize=3, strides=1, padding="SAME")
    assert tf_out.numpy()[0, 0, 0, 0] == (0 + 1 + 3 + 4) / 4
    _assert_same(tf_out, ad.nn.avg_pool2d(ad.constant(values), ksize=3, strides=1,
                                          padding="SAME"))


# autodiff/ops/conv.py:21 "SAME: ``out = ceil(in / stride)``, the extra row or column going
# at the bottom or right, as TensorFlow"
def test_claim_conv_same_padding_extra_at_bottom_right(tf):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 6, 5, 2)).astype(np.float32)
    w = rng.standard_normal((4, 4, 2, 3)).astype(np.float32)
    tf_out = tf.nn.conv2d(x, w, strides=2, padding="SAME")
    assert tf_out.shape == (1, 3, 3, 3)
    ad_out = ad.nn.conv2d(ad.constant(x), ad.constant(w), strides=2, padding="SAME")
    np.testing.assert_allclose(ad_out.numpy(), tf_out.numpy(), rtol=1e-4, atol=1e-5)


# autodiff/ops/losses.py:3-8 "its VJP is ... ``softmax(logits) - labels``. TensorFlow uses
# that formula even when the labels do not sum to 1 ... The labels' gradient is
# ``-log_softmax(logits)``"; :12 "TensorFlow's fused kernel reports zeros for" the mixed
# derivative (ours is -g: a documented difference, only TF's side pinned)
def test_claim_softmax_cross_entropy_gradients(tf):
    logits_v = np.array([[1.0, 2.0, 0.5]], dtype=np.float32)
    labels_v = np.array([[0.5, 0.9, 0.0]], dtype=np.float32)      # sums to 1.4

    def run(m):
        logits, labels = m.constant(logits_v), m.constant(labels_v)
        with m.GradientTape(persistent=True) as outer:
            outer.watch(labels)
            with m.GradientTape() as tape:
                tape.watch([logits, labels])
                loss = m.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            g_logits, g_labels = tape.gradient(loss, [logits, labels])
        mixed = outer.gradient(g_logits, labels, unconnected_gradients="zero")
        return [g_logits, g_labels], mixed
    tf_grads, tf_mixed = run(tf)
    softmax = np.exp(logits_v) / np.exp(logits_v).sum()
    np.testing.assert_allclose(tf_grads[0].numpy(), softmax - labels_v, rtol=1e-5)
    np.testing.assert_allclose(tf_grads[1].numpy(), -np.log(softmax), rtol=1e-5)
    assert not tf_mixed.numpy().any()
    ad_grads, _ = run(ad)
    _assert_same(tf_grads, ad_grads, rtol=1e-5)


# autodiff/ops/losses.py:16 "``sigmoid_cross_entropy_with_logits`` is not an op of its own in
# TensorFlow but a composition, ``max(x, 0) - x * z + log(1 + exp(-|x|))``; it is one here
# too, so the tape shows the same arithmetic ops" (TensorFlow's selects are ``Select``,
# ours ``SelectV2``: the sentence now says so)
def test_claim_sigmoid_cross_entropy_is_a_composition(tf):
    def loss(m):
        return lambda z, x: m.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    spec = tf.TensorSpec([3], tf.float32)
    tf_types = _graph_op_types(tf, loss(tf), spec, spec)
    z, x = ad.constant([0.0, 1.0, 0.5]), ad.constant([-3.0, 0.0, 2.0])
    with ad.GradientTape() as tape:
        tape.watch([z, x])
        out = loss(ad)(z, x)
    ad_types = {r.op_type for r in tape.records}
    arithmetic = {"Neg", "Mul", "Sub", "Exp", "Log1p", "AddV2"}
    assert not any("Sigmoid" in t for t in tf_types | ad_types)
    assert arithmetic <= tf_types and "Select" in tf_types
    assert arithmetic <= ad_types and "SelectV2" in ad_types
    _assert_same(loss(tf)(tf.constant([0.0, 1.0, 0.5]), tf.constant([-3.0, 0.0, 2.0])), out)


# autodiff/ops/losses.py:21/159 "checks that every label is in [0, num_classes) on the NumPy
# backend (TensorFlow's CPU kernel raises)"
def test_claim_sparse_cross_entropy_out_of_range_label_raises(tf):
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[3], logits=[[1.0, 2.0, 3.0]])
    with pytest.raises(ad.errors.InvalidArgumentError):
        ad.nn.sparse_softmax_cross_entropy_with_logits(
            labels=ad.constant([3]), logits=ad.constant([[1.0, 2.0, 3.0]]))


# autodiff/ops/losses.py:204 "indices outside ``[0, depth)`` give a row of ``off_value``
# (TensorFlow does the same)"
def test_claim_one_hot_out_of_range_is_off_value(tf):
    _assert_same(tf.one_hot([0, 5, -1], 3), ad.one_hot(ad.constant([0, 5, -1]), 3))


# ---------------------------------------------------------------------------------------
# Engine docstrings: random, modules, functions, saved models
# ---------------------------------------------------------------------------------------

# autodiff/ops/random.py:3-11 "Seeds work as in TensorFlow 2: ``set_seed(s)`` restarts every
# random sequence ...; an op-level ``seed=`` ... continues from call to call (two calls give
# different numbers) and restarts on ``set_seed``" (the numbers themselves differ: stated)
def test_claim_seed_semantics(tf):
    for m in (tf, ad):
        m.random.set_seed(7)
        a1, a2 = m.random.normal([3], seed=1).numpy(), m.random.normal([3], seed=1).numpy()
        m.random.set_seed(7)
        b1, b2 = m.random.normal([3], seed=1).numpy(), m.random.normal([3], seed=1).numpy()
        assert not np.array_equal(a1, a2)
        np.testing.assert_array_equal(a1, b1)
        np.testing.assert_array_equal(a2, b2)


# autodiff/ops/random.py:183 "``maxval`` ... is required for integer dtypes (a ValueError
# otherwise, as in TensorFlow)"
def test_claim_integer_uniform_needs_maxval(tf):
    with pytest.raises(ValueError):
        tf.random.uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError):
        ad.random.uniform([2], dtype=ad.int32)


# autodiff/ops/random.py:85 "redraw, as TensorFlow does, every value more than two standard
# deviations out"
def test_claim_truncated_normal_within_two_stddev(tf):
    for m in (tf, ad):
        draws = m.random.truncated_normal([5000], stddev=1.5, seed=4).numpy()
        assert np.abs(draws).max() <= 3.0 and np.abs(draws).max() > 2.5


# autodiff/models/module.py:4 "``trainable_variables`` walks the attributes each time it is asked,
# as ``tf.Module`` does, in a fixed order (attribute names sorted ...)"; :45
# "``'BatchNormalization'`` -> ``'batch_normalization'`` (TensorFlow's default names)"
def test_claim_module_variable_order_and_default_name(tf):
    def run(m):
        class BatchNormalization(m.Module):
            def __init__(self):
                super().__init__()
                self.zeta = m.Variable(1.0, name="zeta")
                self.alpha = m.Variable(2.0, name="alpha")
                self.frozen = m.Variable(3.0, name="frozen", trainable=False)
                self.items = {"b": m.Variable(4.0, name="b"), "a": m.Variable(5.0, name="a")}
        module = BatchNormalization()
        return module.name, [v.name for v in module.trainable_variables]
    assert run(ad) == run(tf)
    assert run(tf)[0] == "batch_normalization"


# autodiff/tracing/function.py:17 "the value of every Python argument (``f(x, 2)`` and ``f(x, 3)``
# are two traces, as in TensorFlow)"
def test_claim_function_traces_once_per_python_value(tf):
    def run(m):
        traces = []

        @m.function
        def f(x, k):
            traces.append(k)
            return x * k
        x = m.constant(1.0)
        for k in (2, 3, 2, 3):
            f(x, k)
        return traces
    assert run(tf) == run(ad) == [2, 3]


# autodiff/saved_model/save.py:103 "``experimental_custom_gradients`` (default True, as in
# TensorFlow)"
def test_claim_save_options_custom_gradients_default_true(tf):
    assert tf.saved_model.SaveOptions().experimental_custom_gradients is True
    assert ad.saved_model.SaveOptions().experimental_custom_gradients is True


# ---------------------------------------------------------------------------------------
# Engine docstrings: namespaces, argument names, linalg, tracing, forward nesting
# ---------------------------------------------------------------------------------------

# autodiff/math.py:1 "(as ``tf.math``)", nn.py:1 "(as ``tf.nn``)", linalg.py:1 "(as
# ``tf.linalg``)", random.py:1 "(as ``tf.random``)", errors.py:1 "named as in ``tf.errors``",
# __init__.py:28 "abs, pow, round ... (shadow builtins, as tf does)": the names API.md lists
# live in TensorFlow's namespaces of the same name
NAMESPACE_NAMES = {
    "math": "add subtract multiply divide negative pow square sqrt exp log log1p sin cos tan "
            "tanh sigmoid abs sign round floor maximum minimum reduce_sum reduce_mean "
            "reduce_max reduce_min reduce_prod reduce_logsumexp cumsum softplus",
    "nn": "relu elu selu sigmoid tanh softmax log_softmax softplus leaky_relu gelu l2_loss "
          "moments dropout conv1d conv2d max_pool2d avg_pool2d "
          "softmax_cross_entropy_with_logits sparse_softmax_cross_entropy_with_logits "
          "sigmoid_cross_entropy_with_logits",
    "linalg": "matmul solve inv det slogdet cholesky norm trace diag_part eye",
    "random": "set_seed normal uniform shuffle truncated_normal",
    "errors": "InvalidArgumentError OpError",
    "": "abs pow round add multiply square exp matmul einsum reshape transpose expand_dims "
        "squeeze concat stack pad gather where tile broadcast_to clip_by_value clip_by_norm "
        "norm eye ones zeros ones_like zeros_like fill linspace range identity size shape "
        "cast stop_gradient custom_gradient RegisterGradient no_gradient GradientTape "
        "UnconnectedGradients Variable constant Module function TensorSpec name_scope",
}


@pytest.mark.parametrize("namespace", sorted(NAMESPACE_NAMES))
def test_claim_namespaces_mirror_tensorflow(tf, namespace):
    tf_ns = getattr(tf, namespace) if namespace else tf
    ad_ns = getattr(ad, namespace) if namespace else ad
    for name in NAMESPACE_NAMES[namespace].split():
        if name == "no_gradient":
            assert hasattr(tf, "no_gradient") or hasattr(tf, "NoGradient")
        else:
            assert hasattr(tf_ns, name), f"tf.{namespace}.{name}"
        assert hasattr(ad_ns, name), f"ad.{namespace}.{name}"


# autodiff/ops/creation.py:66 "TensorFlow's argument name" (zeros_like(input)),
# autodiff/ops/linalg.py:150 (inv(input, adjoint)), autodiff/ops/elementwise.py:241 (pow);
# API.md "same argument names and defaults"
@pytest.mark.parametrize("path", ["zeros_like", "linalg.inv", "pow", "constant", "Variable",
                                  "clip_by_value", "reduce_sum", "nn.leaky_relu"])
def test_claim_argument_names(tf, path):
    import inspect

    def resolve(m):
        obj = m
        for part in path.split("."):
            obj = getattr(obj, part)
        return obj.__init__ if isinstance(obj, type) else obj

    def names(fn):
        return [p for p in inspect.signature(fn).parameters if p not in ("self", "kwargs")]
    tf_names = names(resolve(tf))
    ad_names = names(resolve(ad))
    # every name ad takes is TensorFlow's, in TensorFlow's order (ad may leave some out,
    # e.g. Variable's caching_device, zeros_like's layout)
    assert ad_names == [n for n in tf_names if n in ad_names], (tf_names, ad_names)
    assert ad_names[0] == tf_names[0]


# autodiff/ops/slicing.py:251 "integer arrays/tensors and bool masks (NumPy's advanced
# indexing, an extension over TensorFlow)"
def test_claim_advanced_indexing_is_an_extension(tf):
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
        tf.constant([1.0, 2.0, 3.0])[[0, 2]]
    np.testing.assert_array_equal(ad.constant([1.0, 2.0, 3.0])[[0, 2]].numpy(), [1.0, 3.0])


# autodiff/ops/linalg.py:259 "The input is symmetrized first ... (TensorFlow reads only its
# lower triangle; for a symmetric input the two agree)"
def test_claim_cholesky_reads_lower_triangle_in_tensorflow(tf):
    lower_only = np.array([[4.0, 100.0], [2.0, 2.0]])
    symmetric = np.array([[4.0, 2.0], [2.0, 2.0]])
    np.testing.assert_allclose(tf.linalg.cholesky(lower_only).numpy(),
                               tf.linalg.cholesky(symmetric).numpy())
    _assert_same(tf.linalg.cholesky(symmetric), ad.linalg.cholesky(ad.constant(symmetric)))


# autodiff/ops/linalg.py:139 (inv's gradient, "TensorFlow's form"), :240 (cholesky's,
# "Murray (2016), as TensorFlow ... then symmetrized")
@pytest.mark.parametrize("op", ["inv", "cholesky", "det"])
def test_claim_linalg_gradients(tf, op):
    a = np.array([[4.0, 1.0], [1.0, 3.0]])

    def run(m):
        x = m.Variable(a)
        with m.GradientTape() as tape:
            y = m.reduce_sum(getattr(m.linalg, op)(x) * m.constant([[1.0, 2.0], [3.0, 4.0]],
                                                                   dtype=m.float64)
                             if op != "det" else m.linalg.det(x))
        return tape.gradient(y, x)
    _assert_same(run(tf), run(ad), rtol=1e-10)


# autodiff/backend.py:70 "NumPy (and TensorFlow) raise on a singular matrix"
def test_claim_singular_matrix_raises(tf):
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.linalg.inv(tf.constant([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(Exception):
        ad.linalg.inv(ad.constant([[1.0, 2.0], [2.0, 4.0]]))


# autodiff/ops/einsum.py:49 "``strict`` (TensorFlow's rule, for users' equations) lets only
# ellipsis axes broadcast"
def test_claim_einsum_broadcasts_only_ellipsis_axes(tf):
    a, b = np.ones((1, 3), np.float32), np.ones((2, 3), np.float32)
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        tf.einsum("ij,ij->ij", a, b)
    with pytest.raises((ad.errors.InvalidArgumentError, ValueError)):
        ad.einsum("ij,ij->ij", ad.constant(a), ad.constant(b))
    _assert_same(tf.einsum("...j,...j->...j", a, b),
                 ad.einsum("...j,...j->...j", ad.constant(a), ad.constant(b)))


# autodiff/ops/einsum.py / API.md "`ad.einsum` must cover the guides' `'bxby->bxy'`"
def test_claim_einsum_diagonal_extraction(tf):
    full = np.arange(2 * 3 * 2 * 3, dtype=np.float32).reshape(2, 3, 2, 3)
    _assert_same(tf.einsum("bxby->bxy", full), ad.einsum("bxby->bxy", ad.constant(full)))


# autodiff/ops/losses.py:82 "labels ... cast to the logits' dtype, as TensorFlow does";
# :111/:181 "TensorFlow computes these in float32" (float16 logits)
def test_claim_softmax_cross_entropy_dtypes(tf):
    logits = np.array([[1.0, 2.0, 30.0]], dtype=np.float16)
    labels = np.array([[0.0, 0.5, 0.5]], dtype=np.float16)
    tf_loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    ad_loss = ad.nn.softmax_cross_entropy_with_logits(labels=ad.constant(labels),
                                                      logits=ad.constant(logits))
    _assert_same(tf_loss, ad_loss, rtol=1e-3)
    tf_mixed = tf.nn.softmax_cross_entropy_with_logits(labels=labels.astype(np.float64),
                                                       logits=logits.astype(np.float32))
    ad_mixed = ad.nn.softmax_cross_entropy_with_logits(
        labels=ad.constant(labels.astype(np.float64)), logits=ad.constant(logits.astype(np.float32)))
    _assert_same(tf_mixed, ad_mixed, rtol=1e-6)


# autodiff/ops/random.py:19 "a traced function draws fresh numbers on each call, as
# TensorFlow's graphs do"
def test_claim_traced_function_draws_fresh_numbers(tf):
    for m in (tf, ad):
        f = m.function(lambda: m.random.normal([4]))
        assert not np.array_equal(f().numpy(), f().numpy())


# autodiff/tracing/graph.py:243 "An assign while tracing becomes a node; ... only running the graph
# changes it (as in TensorFlow)"
def test_claim_assign_inside_traced_function_runs_once_per_call(tf):
    for m in (tf, ad):
        v = m.Variable(0.0)
        f = m.function(lambda: v.assign_add(1.0))
        f()
        f()
        assert float(v.numpy()) == 2.0


# autodiff/tape.py:459 "TensorFlow's order: a used tape, then the context, then target"
def test_claim_used_tape_is_reported_before_a_none_target(tf):
    for m in (tf, ad):
        x = m.constant(1.0)
        with m.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
        with pytest.raises(RuntimeError):
            tape.gradient(None, x)
        with m.GradientTape() as fresh:
            pass
        with pytest.raises(TypeError):
            fresh.gradient(None, x)


# autodiff/forward.py:29-36 "Nesting follows TensorFlow ... a tape entered *inside* the
# accumulator does not record them [its tangent computations]; a tape ... entered *outside*
# does record them, so reverse-over-forward works: ``outer_tape.gradient(acc.jvp(y), x)``"
def test_claim_forward_accumulator_nesting(tf):
    def run(m):
        x = m.constant(1.5)
        with m.GradientTape(persistent=True) as outside:
            outside.watch(x)
            with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
                with m.GradientTape() as inside:
                    inside.watch(x)
                    y = m.sin(x) * x
                jvp = acc.jvp(y)
        result = [jvp, outside.gradient(jvp, x), inside.gradient(jvp, x)]
        del outside
        return result
    tf_result = run(tf)
    assert tf_result[1] is not None and tf_result[2] is None
    _assert_same(tf_result, run(ad))


# autodiff/forward.py:304 "d/dy x^y = x^y log x, taken as 0 where x <= 0 (TensorFlow's
# convention, as in the VJP)"
def test_claim_pow_jvp_wrt_exponent_at_nonpositive_base(tf):
    def run(m):
        base = m.constant([0.0, -2.0, 3.0], dtype=m.float64)
        y = m.constant([2.0, 2.0, 2.0], dtype=m.float64)
        with m.autodiff.ForwardAccumulator(y, m.ones_like(y)) as acc:
            out = m.pow(base, y)
        return acc.jvp(out)
    _assert_same(run(tf), run(ad))


# autodiff/models/module.py:6 "a module's own attributes before those of its submodules"; :180
# "Depth-first across modules, as tf.Module"; :77 "(as ``tf.Module.name_scope``)"
def test_claim_module_submodule_order_and_name_scope(tf):
    def run(m):
        class Leaf(m.Module):
            def __init__(self, tag):
                super().__init__()
                self.w = m.Variable(1.0, name=f"w_{tag}")

        class Tree(m.Module):
            def __init__(self):
                super().__init__()
                self.b_child = Leaf("b")
                self.a_child = Leaf("a")
                self.z = m.Variable(0.0, name="z")
                self.deep = [Leaf("c"), {"k": Leaf("d")}]
        tree = Tree()
        with tree.name_scope as scope:
            pass
        return [v.name for v in tree.trainable_variables], scope
    tf_names, tf_scope = run(tf)
    ad_names, ad_scope = run(ad)
    assert ad_names == tf_names
    assert ad_scope == tf_scope == "tree/"


# ---------------------------------------------------------------------------------------
# Saved models and custom gradients (a fresh process each)
# ---------------------------------------------------------------------------------------

_SAVE = """
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import {module} as m

@m.custom_gradient
def clip_to_half(x):
    def grad_fn(dy):
        return m.clip_by_norm(dy, 0.5)
    return m.identity(x), grad_fn

class ClippedSquare(m.Module):
    @m.function(input_signature=[m.TensorSpec(None)])
    def __call__(self, x):
        return clip_to_half(x * x)

for flag in (True, False):
    m.saved_model.save(ClippedSquare(), os.path.join(sys.argv[1], str(flag)),
                       options=m.saved_model.SaveOptions(experimental_custom_gradients=flag))
# loading in the saving process still finds the gradient
v = m.Variable(2.0)
loaded = m.saved_model.load(os.path.join(sys.argv[1], "False"))
with m.GradientTape() as tape:
    y = loaded(v)
print("same process:", float(tape.gradient(y, v)))
"""

_LOAD = """
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import {module} as m
for flag in ("True", "False"):
    v = m.Variable(2.0)
    try:
        loaded = m.saved_model.load(os.path.join(sys.argv[1], flag))
        with m.GradientTape() as tape:
            y = loaded(v)
        print(flag, float(tape.gradient(y, v)))
    except LookupError as error:
        print(flag, "LookupError:", error)
"""


def _run(source, module, path):
    done = subprocess.run([sys.executable, "-c", source.format(module=module), str(path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


# 05_nan_gradients_and_new_ops.py "Saved without, the fresh process has no gradient for the
# `IdentityN` op: `LookupError`, exactly the error TensorFlow raises in the same situation";
# autodiff/saved_model/save.py:63 "As in TensorFlow, loading in that same process still finds the
# gradient; in a fresh process ... ``LookupError: No gradient defined for operation
# 'IdentityN' (op type: IdentityN)``"
@pytest.mark.parametrize("module", ["tensorflow", "autodiff"])
def test_claim_saved_custom_gradients(tf, tmp_path, module):
    same = _run(_SAVE, module, tmp_path)
    assert "same process: 2.0" in same
    fresh = _run(_LOAD, module, tmp_path).splitlines()
    assert fresh[0] == "True 2.0"
    assert fresh[1].startswith("False LookupError:")
    assert "No gradient defined for operation" in fresh[1] and "(op type: IdentityN)" in fresh[1]


# 06_jacobians.py "`autodiff` (like TensorFlow's default) does better: it stacks the n
# seeds ... and runs one backward pass" (TensorFlow's default is the vectorized pfor
# path); API.md "`batch_jacobian` returns zeros, not None, for an unconnected source"
def test_claim_jacobian_defaults_and_unconnected_batch_jacobian(tf):
    import inspect
    for name in ("jacobian", "batch_jacobian"):
        tf_params = inspect.signature(getattr(tf.GradientTape, name)).parameters
        ad_params = inspect.signature(getattr(ad.GradientTape, name)).parameters
        assert tf_params["experimental_use_pfor"].default is True
        assert ad_params["experimental_use_pfor"].default is True
        assert tf_params["parallel_iterations"].default is None
        assert ad_params["parallel_iterations"].default is None

    def run(m):
        x = m.constant([[1.0, 2.0]])
        other = m.constant([[3.0, 4.0]])
        with m.GradientTape(persistent=True) as tape:
            tape.watch([x, other])
            y = x * 2.0
        result = [tape.jacobian(y, other), tape.batch_jacobian(y, other)]
        del tape
        return result
    tf_result = run(tf)
    assert tf_result[0] is None and not tf_result[1].numpy().any()
    _assert_same(tf_result, run(ad))


# autodiff/ops/conv.py:9 "three op types that close under differentiation (TensorFlow has the
# same three): Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter"; autodiff/ops/pooling.py:8
# "three op types close under differentiation, as in TensorFlow: MaxPool, MaxPoolGrad,
# MaxPoolGradGrad"
@pytest.mark.parametrize("kind", ["conv", "max_pool"])
def test_claim_conv_and_pool_backward_op_types(tf, kind):
    rng = np.random.default_rng(1)
    x_v = rng.standard_normal((1, 4, 4, 1)).astype(np.float32)
    w_v = rng.standard_normal((2, 2, 1, 1)).astype(np.float32)

    def fn(m, x, w):
        if kind == "conv":
            return m.nn.conv2d(x, w, strides=1, padding="VALID")
        return m.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID") * m.reduce_sum(w)

    def second_order(m, x, w):
        with m.GradientTape() as outer:
            outer.watch([x, w])
            with m.GradientTape() as inner:
                inner.watch([x, w])
                y = fn(m, x, w)
            gx, gw = inner.gradient(y, [x, w])
            z = m.reduce_sum(gx * gx) + m.reduce_sum(gw * gw)
        return outer.gradient(z, [x, w])

    expected = ({"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"} if kind == "conv"
                else {"MaxPool", "MaxPoolGrad", "MaxPoolGradGrad"})
    spec_x, spec_w = tf.TensorSpec(x_v.shape, tf.float32), tf.TensorSpec(w_v.shape, tf.float32)
    tf_types = _graph_op_types(tf, lambda x, w: second_order(tf, x, w), spec_x, spec_w)
    assert expected <= tf_types
    x, w = ad.constant(x_v), ad.constant(w_v)
    with ad.GradientTape() as recorder:
        recorder.watch([x, w])
        ad_grads = second_order(ad, x, w)
    assert expected <= {r.op_type for r in recorder.records}
    tf_grads = second_order(tf, tf.constant(x_v), tf.constant(w_v))
    _assert_same(tf_grads, ad_grads, rtol=1e-4)


# autodiff/custom_gradient.py:159 "f sees a Variable itself (as in TensorFlow)"; API.md
# "TypeError where TensorFlow raises TypeError (... a custom gradient whose grad_fn lacks
# `variables=` when the function reads variables)"
def test_claim_custom_gradient_variables(tf):
    def run(m):
        seen = []
        gain = m.Variable(3.0, name="gain")

        @m.custom_gradient
        def scale(x):
            seen.append(type(x).__name__)
            return x * gain, lambda dy: dy * gain          # no variables=: an error
        v = m.Variable(2.0, name="v")
        with pytest.raises(TypeError):
            with m.GradientTape() as tape:
                y = scale(v)
            tape.gradient(y, v)
        return seen
    assert "Variable" in run(tf)[0] or "ResourceVariable" in run(tf)[0]
    assert "Variable" in run(ad)[0]


# 05_nan_gradients_and_new_ops.py-216 "by a convention each rule picks (the same ones
# TensorFlow picks)": abs'(0) = 0, relu'(0) = 0, maximum(x, 0) at the tie gives 1 (the first
# argument), sqrt'(0) = inf, and the norm of a zero vector has gradient NaN
@pytest.mark.parametrize("name", ["abs", "relu", "maximum", "sqrt", "norm"])
def test_claim_lesson5_kink_conventions(tf, name):
    fns = {"abs": lambda m, t: m.abs(t), "relu": lambda m, t: m.nn.relu(t),
           "maximum": lambda m, t: m.maximum(t, 0.0), "sqrt": lambda m, t: m.sqrt(t),
           "norm": lambda m, t: m.norm(t * 0.0)}
    expected = {"abs": [0.0, 1.0], "relu": [0.0, 1.0], "maximum": [1.0, 1.0],
                "sqrt": [np.inf, 0.5], "norm": [np.nan, np.nan]}

    def run(m):
        x = m.constant([0.0, 1.0])
        with m.GradientTape() as tape:
            tape.watch(x)
            y = fns[name](m, x)
        return tape.gradient(y, x)
    tf_grad = run(tf)
    np.testing.assert_array_equal(tf_grad.numpy(), expected[name])
    _assert_same(tf_grad, run(ad))


# 11_training_a_network.py section 4 "`ad.optimizers.Adam` follows Keras's update rule" and
# "At Adam's very first step ... the step is lr * sign(g)" (exercise 4: w = 1.0, loss
# (3w - 1)**2, learning_rate=0.1 -> 0.9): Keras's Adam, one step, the same numbers
def test_claim_lesson11_adam_first_step_is_lr_times_sign(tf):
    def run(m, optimizer):
        w = m.Variable([1.0, -2.0, 0.5])
        with m.GradientTape() as tape:
            loss = m.reduce_sum((3.0 * w - 1.0) ** 2)
        optimizer.apply_gradients([(tape.gradient(loss, w), w)])
        return w.numpy()
    tf_w = run(tf, tf.keras.optimizers.Adam(learning_rate=0.1))
    np.testing.assert_allclose(tf_w, [0.9, -1.9, 0.4], rtol=1e-5)
    np.testing.assert_allclose(run(ad, ad.optimizers.Adam(learning_rate=0.1)), tf_w, rtol=1e-6)


# 08_jacobians.py section 3 "One target per call": "its **sources** can be a list (one
# Jacobian per source comes back), but its **target** must be one tensor. Pass a list and it
# refuses with an `AttributeError`, the exception TensorFlow raises (its message says less:
# only that a list has no `.shape`)."
def test_claim_lesson6_jacobian_target_is_one_tensor(tf):
    def run(m):
        x = m.constant([1.0, 2.0])
        with m.GradientTape(persistent=True) as tape:
            tape.watch(x)
            a = x * x
            b = m.reduce_sum(x)
        shapes = [tuple(j.shape) for j in tape.jacobian(a, [x, x])]
        return tape, a, b, x, shapes
    tape, a, b, x, shapes = run(tf)
    assert shapes == [(2, 2), (2, 2)]
    with pytest.raises(AttributeError):
        tape.jacobian([a, b], x)
    tape, a, b, x, shapes = run(ad)
    assert shapes == [(2, 2), (2, 2)]
    with pytest.raises(AttributeError, match="single target tensor"):
        tape.jacobian([a, b], x)
    with pytest.raises(AttributeError, match="single target tensor"):
        tape.batch_jacobian([a, b], x)
