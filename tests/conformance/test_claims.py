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


# 01_gradients_and_tapes.py:161 "an unwatched constant gives None, not an error and not
# zero ... TensorFlow 2, and this library, return None"; 02_controlling_the_tape.py 5.1
# "unwatched constant: None"; notebooks/README.md:18 "an unwatched constant's gradient is
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


# 02_controlling_the_tape.py:191 (teaching moment "feeding a recorded op is not being
# watched"), README.md:116 "`y = x * c` with only `x` watched: `tape.gradient(y, [x, c])`
# is `[c, None]`", 08_build_your_own_tape.py B3 "gives `[c, None]`", autodiff/tape.py
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


# 02_controlling_the_tape.py:191-224: the predict-then-run cells: `d direct / d [w, data]`
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


# 08_build_your_own_tape.py B1: "`b`, although it is an input of the recorded `Mul`, gets
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


# 03_higher_order_derivatives.py:96 "An older TensorFlow tutorial runs this very pattern (on
# x^3 at x = 1) and expects the second derivative 6.0. TensorFlow 2, and this library, give
# None"; 08_build_your_own_tape.py:312 "In TensorFlow 2 the answer is None"; README.md:112
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


# 08_build_your_own_tape.py:292 "if another tape is recording while `gradient` runs, it
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


# 01_gradients_and_tapes.py:199-203 "`scale` was created with `trainable=False`: frozen
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

# 02_controlling_the_tape.py:237 "In TensorFlow 2, `tf.multiply(1, 3.0)` raises
# `TypeError`: ... `1` becomes an `int32` tensor, and then `3.0` has to become an `int32`
# too, which it cannot"; README.md:116; notebooks/README.md:19.
# ad refuses too, with its own error (the lesson prints the type it gets).
# NOTE for the lead: ad raises InvalidArgumentError (a ValueError) here, TensorFlow a
# TypeError; API.md asks for the same kinds of errors.
def test_claim_multiply_python_int_and_float_is_refused(tf):
    with pytest.raises(TypeError, match="Cannot convert 3.0 to EagerTensor of dtype int32"):
        tf.multiply(1, 3.0)
    with pytest.raises((TypeError, ad.errors.InvalidArgumentError)):
        ad.multiply(1, 3.0)


# 02_controlling_the_tape.py:250 "`multiply(1, constant(3.0))` is a `float32` 3.0";
# README.md:116; 02_controlling_the_tape.py:262 "`2 * ad.constant(3.0)` is a `float32` 6.0";
# README.md:80 "a bare Python number takes its partner's dtype"
def test_claim_python_number_takes_the_tensors_dtype(tf):
    _assert_same(tf.multiply(1, tf.constant(3.0)), ad.multiply(1, ad.constant(3.0)))
    assert tf.multiply(1, tf.constant(3.0)).dtype == tf.float32
    _assert_same(2 * tf.constant(3.0), 2 * ad.constant(3.0))
    _assert_same(tf.constant(3.0, tf.float64) + 1, ad.constant(3.0, ad.float64) + 1)


# README.md:80 "a Python float is float32; `float32 + float64` is an
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

# 02_controlling_the_tape.py:379 "TensorFlow marks such ops [rounding, shuffling]
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


# 04_custom_gradients.py:341 "It is `2.0`, in TensorFlow 2 and here ... A `custom_gradient`
# function becomes a single `IdentityN` record only if some recording tape watches one of
# its inputs ... When no recording tape does ... the function just runs its body as
# ordinary ops"; autodiff/custom_gradient.py:47-55 (the same rule)
def test_claim_square_nested_captured_second_derivative_is_2(tf):
    tf_result = _first_and_second(tf, _square_nested_captured(tf))
    assert [float(t) for t in tf_result] == [6.0, 2.0]
    _assert_same(tf_result, _first_and_second(ad, _square_nested_captured(ad)))


# 04_custom_gradients.py:300 "second derivatives work without any extra effort" and :355
# "Make `x` an input ... the second derivative is computed by *our* rule"
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


# 04_custom_gradients.py:525 "In TensorFlow 2 those calls return `None`: the constants were
# never watched ... A custom gradient does not change what a tape watches";
# 01_gradients_and_tapes.py:162 "the tf.custom_gradient page does; lesson 4 comes back to it"
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


# 04_custom_gradients.py:62 "recorded as one op of type `IdentityN` (the name TensorFlow
# gives it)"; autodiff/custom_gradient.py:23 "IdentityN (TensorFlow's name for it)"
def test_claim_custom_gradient_op_is_identity_n(tf):
    square = _square(tf)
    assert "IdentityN" in _graph_op_types(tf, square, tf.TensorSpec([], tf.float32))
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        _square(ad)(x)
    assert "IdentityN" in [r.op_type for r in tape.records]


# 01_gradients_and_tapes.py:58 "The op types carry TensorFlow's names: `Pow` for `**`, `Mul`
# for `*`, `Sub` for `-`"; 08_build_your_own_tape.py:276 "its TensorFlow op type, "Sin""
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


# 04_custom_gradients.py:362 "register its gradient by the op's type name with
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

# 05_jacobians.py:190 "`experimental_use_pfor=False` ... As in TensorFlow, that needs a
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


# 05_jacobians.py:270 "`batch_jacobian` does not check ... TensorFlow behaves the same way";
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


# 06_hessians_and_second_order.py:15 "two shortcuts TensorFlow does not have (`tape.hessian`,
# `ad.functional.hessian`)"; :72 "TensorFlow stops at the recipe above"; README.md:92
# "`tape.hessian` (TensorFlow has none)"; autodiff/tape.py:429, autodiff/functional.py:27
def test_claim_tensorflow_has_no_hessian_helper(tf):
    assert not hasattr(tf.GradientTape, "hessian")
    assert not hasattr(tf, "hessian") and not hasattr(tf.autodiff, "hessian")
    assert hasattr(ad.GradientTape, "hessian") and hasattr(ad.functional, "hessian")


# README.md:94 "Forward mode: `ad.autodiff.ForwardAccumulator`, nesting as in TensorFlow
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

# README.md:142 "`np.asarray(t)` too, as in TensorFlow"; autodiff/tensor.py:157
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

# README.md:41 "TensorFlow's autodiff guides run with `tf.` replaced by `ad.`";
# 01_gradients_and_tapes.py:11 "write `ad.` where TensorFlow code says `tf.`"
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
