"""GradientTape behaviour (API.md, "Tapes"), each test named for what it pins down.

Jacobians, custom gradients and forward mode have their own test files.
"""

import math
import warnings

import numpy as np
import pytest

import autodiff as ad


def _value(t):
    assert isinstance(t, ad.Tensor), f"expected a Tensor, got {t!r}"
    return t.numpy()


# ---- persistence -----------------------------------------------------------

def test_persistent_tape_allows_several_gradient_calls():
    x = ad.constant(3.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert _value(tape.gradient(z, x)) == 108.0
    assert _value(tape.gradient(y, x)) == 6.0
    assert _value(tape.gradient(z, y)) == 18.0
    assert _value(tape.gradient(z, x)) == 108.0  # the same answer again


def test_second_gradient_call_on_non_persistent_tape_raises():
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert _value(tape.gradient(y, x)) == 6.0
    with pytest.raises(RuntimeError):
        tape.gradient(y, x)


def test_non_persistent_tape_frees_its_records_after_gradient():
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert len(tape.records) == 1
    tape.gradient(y, x)
    with pytest.raises(RuntimeError):
        tape.records


def test_persistent_tape_keeps_its_records_after_gradient():
    x = ad.constant(3.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    assert [r.op_type for r in tape.records] == ["Mul"]


def test_reentering_an_active_tape_raises():
    tape = ad.GradientTape()
    with tape:
        with pytest.raises(ValueError):
            tape.__enter__()


# ---- watching ---------------------------------------------------------------

def test_trainable_variable_read_inside_tape_is_watched():
    x = ad.Variable(3.0)
    with ad.GradientTape() as tape:
        y = x ** 2
    assert _value(tape.gradient(y, x)) == 6.0


def test_constant_is_not_watched_unless_asked():
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None


def test_non_trainable_variable_is_not_watched_unless_asked():
    x = ad.Variable(3.0, trainable=False)
    with ad.GradientTape(persistent=True) as tape:
        y = x * x
    assert tape.gradient(y, x) is None
    assert tape.watched_variables() == ()


def test_watching_a_non_trainable_variable_gives_its_gradient():
    x = ad.Variable(3.0, trainable=False)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert _value(tape.gradient(y, x)) == 6.0


def test_watch_accessed_variables_false_watches_only_what_is_asked():
    a = ad.Variable(3.0, name="a")
    b = ad.Variable(2.0, name="b")
    with ad.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(a)
        y = a ** 2
        z = b ** 3
    assert _value(tape.gradient(y, a)) == 6.0
    assert tape.gradient(z, b) is None
    assert len(tape.watched_variables()) == 1
    assert tape.watched_variables()[0] is a


def test_watch_accepts_nested_structures():
    x = ad.constant(1.0)
    y = ad.constant(2.0)
    z = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch({"x": x, "rest": [y, (z,)]})
        out = x * y * z
    gx, gy, gz = tape.gradient(out, [x, y, z])
    assert (_value(gx), _value(gy), _value(gz)) == (6.0, 3.0, 2.0)


def test_watched_variables_is_a_tuple_in_variable_creation_order():
    first = ad.Variable(1.0, name="first")
    second = ad.Variable(2.0, name="second", trainable=False)
    third = ad.Variable(3.0, name="third")
    unread = ad.Variable(4.0, name="unread")
    with ad.GradientTape() as tape:
        y = third * first        # read in the other order
        tape.watch(second)
    watched = tape.watched_variables()
    assert type(watched) is tuple
    assert [v.name for v in watched] == ["first:0", "second:0", "third:0"]
    assert all(v is w for v, w in zip(watched, (first, second, third)))
    del y, unread


def test_watched_variables_of_a_tape_that_read_nothing_is_empty():
    with ad.GradientTape() as tape:
        ad.constant(1.0) * 2
    assert tape.watched_variables() == ()


# ---- controlling the recording ----------------------------------------------------

def test_stop_recording_leaves_the_block_off_the_tape():
    x = ad.Variable(2.0)
    y = ad.Variable(3.0)
    with ad.GradientTape() as tape:
        x_sq = x * x
        with tape.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    assert [r.op_type for r in tape.records] == ["Mul", "AddV2"]
    grad = tape.gradient(z, {"x": x, "y": y})
    assert _value(grad["x"]) == 4.0
    assert grad["y"] is None


def test_recording_resumes_after_stop_recording():
    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            ignored = x * x
        y = x * x * x
    assert _value(tape.gradient(y, x)) == 12.0
    assert ignored.numpy() == 4.0


def test_stop_recording_on_a_tape_that_is_not_recording_raises():
    tape = ad.GradientTape()
    with pytest.raises(RuntimeError):
        with tape.stop_recording():
            pass


def test_stop_recording_pauses_only_its_own_tape():
    x = ad.constant(2.0)
    with ad.GradientTape() as outer, ad.GradientTape() as inner:
        outer.watch(x)
        inner.watch(x)
        with inner.stop_recording():
            y = x * x
    assert _value(outer.gradient(y, x)) == 4.0
    assert inner.gradient(y, x) is None


def test_reset_forgets_what_was_recorded():
    x = ad.Variable(2.0)
    y = ad.Variable(3.0)
    with ad.GradientTape() as tape:
        y_sq = y * y
        tape.reset()
        z = x * x + y_sq
    grad = tape.gradient(z, {"x": x, "y": y})
    assert _value(grad["x"]) == 4.0
    assert grad["y"] is None


def test_reset_forgets_watched_tensors():
    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        tape.reset()
        y = x * x
    assert tape.gradient(y, x) is None


# ---- several tapes ------------------------------------------------------------------

def test_two_tapes_at_once_each_differentiate_what_they_watch():
    x0 = ad.constant(0.0)
    x1 = ad.constant(0.0)
    with ad.GradientTape(persistent=True) as tape0, ad.GradientTape(persistent=True) as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = ad.sin(x0)
        y1 = ad.sigmoid(x1)
        ys = ad.reduce_sum(y0 + y1)
    assert _value(tape0.gradient(ys, x0)) == pytest.approx(1.0)
    assert _value(tape1.gradient(ys, x1)) == pytest.approx(0.25)
    assert tape0.gradient(ys, x1) is None
    assert tape1.gradient(ys, x0) is None
    ops0 = [r.op_type for r in tape0.records]
    ops1 = [r.op_type for r in tape1.records]
    assert "Sin" in ops0 and "Sigmoid" not in ops0
    assert "Sigmoid" in ops1 and "Sin" not in ops1


def test_nested_tapes_give_the_second_derivative():
    x = ad.constant(3.0)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy_dx = inner.gradient(y, x)
    d2y_dx2 = outer.gradient(dy_dx, x)
    assert _value(dy_dx) == 27.0
    assert _value(d2y_dx2) == 18.0


def test_nested_tapes_give_the_third_derivative():
    x = ad.Variable(2.0)
    with ad.GradientTape() as t3:
        with ad.GradientTape() as t2:
            with ad.GradientTape() as t1:
                y = x ** 4
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert _value(d1) == pytest.approx(32.0)    # 4 x^3
    assert _value(d2) == pytest.approx(48.0)    # 12 x^2
    assert _value(d3) == pytest.approx(48.0)    # 24 x


@pytest.mark.parametrize("x0", [-1.5, 0.5, 3.0])
def test_three_nested_tapes_give_24x_for_x_to_the_fourth(x0):
    x = ad.constant(x0, dtype=ad.float64)
    with ad.GradientTape() as t3:
        t3.watch(x)
        with ad.GradientTape() as t2:
            t2.watch(x)
            with ad.GradientTape() as t1:
                t1.watch(x)
                y = x ** 4
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert _value(d3) == pytest.approx(24.0 * x0)


def test_constant_watched_only_by_inner_tape_has_no_second_derivative():
    x = ad.constant(1.0)
    with ad.GradientTape() as outer:
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy_dx = inner.gradient(y, x)
    assert _value(dy_dx) == 3.0
    assert outer.gradient(dy_dx, x) is None


def test_inner_gradient_is_recorded_on_the_outer_tape():
    x = ad.constant(2.0)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = ad.sin(x)
        n_before = len(outer.records)
        dy_dx = inner.gradient(y, x)
        assert len(outer.records) > n_before
    assert _value(outer.gradient(dy_dx, x)) == pytest.approx(-math.sin(2.0), rel=1e-6)


# ---- what gradient accepts and returns ----------------------------------------------

def _two_inputs():
    x = ad.constant(2.0)
    y = ad.constant(3.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        a = x * y       # da/dx = 3, da/dy = 2
        b = x * x       # db/dx = 4
    return tape, x, y, a, b


def test_list_target_is_summed():
    tape, x, y, a, b = _two_inputs()
    gx, gy = tape.gradient([a, b], [x, y])
    assert (_value(gx), _value(gy)) == (7.0, 2.0)


def test_dict_target_is_summed():
    tape, x, y, a, b = _two_inputs()
    assert _value(tape.gradient({"a": a, "b": b}, x)) == 7.0
    assert _value(tape.gradient({"a": a, "b": [b]}, y)) == 2.0


def test_dict_sources_give_a_dict_of_gradients():
    tape, x, y, a, b = _two_inputs()
    grads = tape.gradient(a, {"x": x, "y": y})
    assert isinstance(grads, dict)
    assert set(grads) == {"x", "y"}
    assert (_value(grads["x"]), _value(grads["y"])) == (3.0, 2.0)


def test_list_of_lists_sources_keep_their_structure():
    tape, x, y, a, b = _two_inputs()
    grads = tape.gradient([a, b], [[x], [y, x]])
    assert isinstance(grads, list) and len(grads) == 2
    assert isinstance(grads[0], list) and len(grads[0]) == 1
    assert isinstance(grads[1], list) and len(grads[1]) == 2
    assert _value(grads[0][0]) == 7.0
    assert _value(grads[1][0]) == 2.0
    assert _value(grads[1][1]) == 7.0


def test_tuple_sources_give_a_tuple_and_single_source_a_tensor():
    tape, x, y, a, b = _two_inputs()
    grads = tape.gradient(a, (x, y))
    assert isinstance(grads, tuple) and len(grads) == 2
    single = tape.gradient(a, x)
    assert type(single) is ad.Tensor
    assert _value(single) == 3.0


def test_nested_dict_of_lists_sources():
    tape, x, y, a, b = _two_inputs()
    grads = tape.gradient(a, {"p": [x, y], "q": {"r": y}})
    assert _value(grads["p"][0]) == 3.0
    assert _value(grads["p"][1]) == 2.0
    assert _value(grads["q"]["r"]) == 2.0


def test_non_scalar_target_is_summed():
    x = ad.constant([1.0, 2.0, 3.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_allclose(_value(tape.gradient(y, x)), [2.0, 4.0, 6.0])


def test_output_gradients_weight_the_target():
    x = ad.constant([1.0, 2.0, 3.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=ad.constant([1.0, 10.0, 100.0]))
    np.testing.assert_allclose(_value(g), [2.0, 40.0, 600.0])


def test_output_gradients_one_per_target():
    tape, x, y, a, b = _two_inputs()
    g = tape.gradient([a, b], x, output_gradients=[ad.constant(2.0), ad.constant(-1.0)])
    assert _value(g) == 2.0 * 3.0 - 1.0 * 4.0


def test_gradient_of_a_source_with_respect_to_itself_is_one():
    x = ad.constant([1.0, 2.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
    np.testing.assert_array_equal(_value(tape.gradient(x, x)), [1.0, 1.0])


def test_gradient_with_respect_to_an_intermediate_value():
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert _value(tape.gradient(z, y)) == 18.0


def test_gradients_are_dense_tensors_shaped_like_sources():
    w = ad.Variable(np.ones((3, 2), np.float32))
    with ad.GradientTape() as tape:
        y = ad.reduce_sum(w * 2.0)
    g = tape.gradient(y, w)
    assert type(g) is ad.Tensor
    assert g.shape == (3, 2)
    assert g.dtype == ad.float32
    np.testing.assert_array_equal(g.numpy(), np.full((3, 2), 2.0))


# ---- unconnected gradients ---------------------------------------------------------------

def _unconnected():
    x = ad.Variable([2.0, 2.0])
    y = ad.Variable(3.0)
    with ad.GradientTape(persistent=True) as tape:
        z = y ** 2
    return tape, x, z


def test_unconnected_source_gives_none_by_default():
    tape, x, z = _unconnected()
    assert tape.gradient(z, x) is None
    assert tape.gradient(z, x, unconnected_gradients=ad.UnconnectedGradients.NONE) is None


def test_unconnected_gradients_zero_gives_zeros_shaped_like_the_source():
    tape, x, z = _unconnected()
    g = tape.gradient(z, x, unconnected_gradients=ad.UnconnectedGradients.ZERO)
    assert g.shape == (2,)
    assert g.dtype == ad.float32
    np.testing.assert_array_equal(_value(g), [0.0, 0.0])


def test_unconnected_gradients_accepts_the_strings_none_and_zero():
    tape, x, z = _unconnected()
    assert tape.gradient(z, x, unconnected_gradients="none") is None
    np.testing.assert_array_equal(_value(tape.gradient(z, x, unconnected_gradients="zero")),
                                  [0.0, 0.0])


def test_unknown_unconnected_gradients_string_raises_value_error():
    tape, x, z = _unconnected()
    with pytest.raises(ValueError):
        tape.gradient(z, x, unconnected_gradients="zeros")


def test_unconnected_gradients_zero_does_not_change_connected_gradients():
    tape, x, z = _unconnected()
    y = tape.watched_variables()[0]
    assert _value(tape.gradient(z, y, unconnected_gradients="zero")) == 6.0


# ---- integer tensors -----------------------------------------------------------------------

def test_integer_source_gradient_is_none_with_a_warning():
    x = ad.constant(3)
    with pytest.warns(ad.AutodiffWarning):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x
    with pytest.warns(ad.AutodiffWarning):
        g = tape.gradient(y, x)
    assert g is None


def test_integer_source_among_float_sources_gets_none():
    x = ad.constant(2.0)
    n = ad.constant(3)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * ad.cast(n, ad.float32)
    with pytest.warns(ad.AutodiffWarning):
        gx, gn = tape.gradient(y, [x, n])
    assert _value(gx) == 3.0
    assert gn is None


def test_warnings_about_integer_tensors_point_at_the_callers_line():
    x = ad.constant(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
    ours = [w for w in caught if issubclass(w.category, ad.AutodiffWarning)]
    assert len(ours) == 2                           # one for watch, one for gradient
    assert [w.filename for w in ours] == [__file__, __file__]


def test_gradient_of_an_integer_target_is_none():
    x = ad.constant(2.7)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.cast(x * 2.0, ad.int32)
    assert y.numpy() == 5
    assert tape.gradient(y, x) is None


def test_integer_variable_is_not_watched_automatically():
    v = ad.Variable(3)
    with ad.GradientTape() as tape:
        y = v * v
    assert y.numpy() == 9
    assert tape.watched_variables() == ()


# ---- gradient inside the tape's own block ------------------------------------------------

def test_gradient_inside_a_persistent_tapes_context_warns_once():
    x = ad.constant(3.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            first = tape.gradient(y, x)
            second = tape.gradient(y, x)
    ours = [w for w in caught if issubclass(w.category, ad.AutodiffWarning)]
    assert len(ours) == 1
    assert "inside the `with` block of a persistent tape" in str(ours[0].message)
    assert (_value(first), _value(second)) == (6.0, 6.0)


def test_gradient_inside_a_persistent_tapes_context_is_recorded():
    x = ad.constant(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x * x
            dy_dx = tape.gradient(y, x)
    assert _value(dy_dx) == 27.0
    assert _value(tape.gradient(dy_dx, x)) == 18.0


def test_gradient_inside_a_non_persistent_tapes_context_does_not_warn():
    x = ad.constant(3.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x
            g = tape.gradient(y, x)
    assert not [w for w in caught if issubclass(w.category, ad.AutodiffWarning)]
    assert _value(g) == 6.0


# ---- the tape is data ----------------------------------------------------------------------

def test_records_hold_index_op_type_ids_params_and_vjp():
    x = ad.constant([[1.0, 2.0], [3.0, 4.0]])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = ad.reduce_sum(y, axis=0)
    records = tape.records
    assert len(records) == 2
    mul, total = records
    assert (mul.index, total.index) == (0, 1)
    assert (mul.op_type, total.op_type) == ("Mul", "Sum")
    assert mul.input_ids == (x.id, x.id)          # both edges of x * x
    assert mul.output_ids == (y.id,)
    assert total.input_ids == (y.id,)
    assert total.output_ids == (z.id,)
    assert mul.params == {}
    assert total.params["axis"] == (0,)
    assert len(mul.vjp) == 2 and all(callable(rule) for rule in mul.vjp)
    assert len(total.vjp) == 1


def test_records_are_in_execution_order():
    x = ad.constant(1.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.exp(ad.sin(x) * 2.0)
    assert [r.op_type for r in tape.records] == ["Sin", "Mul", "Exp"]
    assert [r.index for r in tape.records] == [0, 1, 2]


def test_ops_on_unwatched_tensors_are_not_recorded():
    x = ad.constant(1.0)
    c = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        unrelated = c * c
        y = x + 1.0
    assert [r.op_type for r in tape.records] == ["AddV2"]
    assert unrelated.numpy() == 4.0
    assert y.numpy() == 2.0


def test_str_of_tape_has_one_line_per_record():
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = ad.sin(y)
    lines = str(tape).splitlines()
    assert len(lines) == 1 + 2      # a header, then the records
    assert [line.strip() for line in lines[1:]] == ["v1 = Mul(v0, v0)", "v2 = Sin(v1)"]
    assert z.numpy() == pytest.approx(math.sin(9.0))


def test_backward_trace_visits_records_in_reverse_with_their_cotangents():
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = ad.sin(y)
    trace = tape.backward_trace(z, x)
    assert [step.op_type for step in trace.steps] == ["Sin", "Mul"]
    sin_step, mul_step = trace.steps
    assert len(sin_step.cotangents) == 1
    assert sin_step.cotangents[0].numpy() == 1.0                   # the seed dz/dz
    assert mul_step.cotangents[0].numpy() == pytest.approx(math.cos(9.0), rel=1e-6)
    assert [i for i, _ in mul_step.contributions] == [x.id, x.id]
    for _, c in mul_step.contributions:                            # each edge: g * x
        assert c.numpy() == pytest.approx(3.0 * math.cos(9.0), rel=1e-6)
    assert _value(trace.gradients) == pytest.approx(6.0 * math.cos(9.0), rel=1e-6)
    assert trace.source_ids == (x.id,)


def test_backward_trace_contributions_to_a_source_sum_to_its_gradient():
    x = ad.constant(0.7)
    y = ad.constant(-1.3)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = x * y + ad.sin(x) * x + y * y
    trace = tape.backward_trace(z, [x, y])
    expected = tape.gradient(z, [x, y])
    for source, gradient, traced in zip((x, y), expected, trace.gradients):
        total = sum(float(c) for step in trace.steps
                    for i, c in step.contributions if i == source.id and c is not None)
        assert total == pytest.approx(float(gradient), rel=1e-6)
        assert float(traced) == pytest.approx(float(gradient), rel=1e-6)
    assert float(expected[0]) == pytest.approx(-1.3 + math.sin(0.7) + 0.7 * math.cos(0.7),
                                               rel=1e-6)
    assert float(expected[1]) == pytest.approx(0.7 - 2.6, rel=1e-6)


def test_backward_trace_skips_records_not_on_a_path_to_the_sources():
    x = ad.constant(1.0)
    y = ad.constant(2.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        a = ad.exp(y)
        z = x * 3.0 + a
    trace = tape.backward_trace(z, x)
    assert "Exp" not in [step.op_type for step in trace.steps]
    assert float(trace.gradients) == 3.0


# ---- gradients_function and gradients --------------------------------------------------------

def test_gradients_function_of_square_sin_is_zero_at_half_pi():
    def f(x):
        return ad.square(ad.sin(x))

    assert f(math.pi / 2).numpy() == 1.0
    grad_f = ad.gradients_function(f)
    grads = grad_f(math.pi / 2)
    assert isinstance(grads, list) and len(grads) == 1
    assert abs(grads[0].numpy()) < 1e-7


def _power_by_loop(x, y):
    output = 1
    for _ in range(int(y)):
        output = ad.multiply(output, x)
    return output


def test_multiply_of_python_int_and_python_float_refuses_as_in_tensorflow_2():
    # The old guide called f(3.0, 2) on plain Python numbers: output = 1 starts
    # as int32 and 3.0 as float32, which TensorFlow 2 refuses to mix (a TypeError).
    with pytest.raises(TypeError):
        _power_by_loop(3.0, 2)


def test_gradients_function_gives_none_for_an_integer_argument():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grads = ad.gradients_function(_power_by_loop)(3.0, 2)
    assert len(grads) == 2
    assert grads[0].numpy() == 6.0
    assert grads[1] is None


def test_gradients_function_with_params_and_dy():
    def f(x, y):
        return x * y * y

    assert [g.numpy() for g in ad.gradients_function(f, params=[1])(2.0, 3.0)] == [12.0]
    weighted = ad.gradients_function(f)(2.0, 3.0, dy=ad.constant(0.5))
    assert [g.numpy() for g in weighted] == [4.5, 6.0]


def test_gradients_raises_runtime_error_pointing_to_gradient_tape():
    x = ad.constant(1.0)
    with pytest.raises(RuntimeError, match="GradientTape"):
        ad.gradients(x * x, x)


# ---- where gradients stop -----------------------------------------------------------------------

def test_stop_gradient_gives_none():
    x = ad.Variable(2.0)
    y = ad.Variable(3.0)
    with ad.GradientTape() as tape:
        z = x ** 2 + ad.stop_gradient(y ** 2)
    assert z.numpy() == 13.0
    grad = tape.gradient(z, {"x": x, "y": y})
    assert _value(grad["x"]) == 4.0
    assert grad["y"] is None


def test_stop_gradient_on_one_path_keeps_the_other():
    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * ad.stop_gradient(x)       # d/dx = stop(x) = 2
    assert _value(tape.gradient(y, x)) == 2.0


def test_rebinding_a_variable_to_x_plus_one_gives_a_tensor_the_next_tape_does_not_watch():
    x = ad.Variable(2.0)
    results = []
    for _ in range(2):
        with ad.GradientTape() as tape:
            y = x + 1
        results.append((type(x), tape.gradient(y, x)))
        x = x + 1
    (first_type, first), (second_type, second) = results
    assert first_type is ad.Variable and _value(first) == 1.0
    assert issubclass(second_type, ad.Tensor) and second_type is not ad.Variable
    assert second is None


def test_value_leaving_the_library_through_numpy_breaks_the_path():
    x = ad.Variable([[1.0, 2.0], [3.0, 4.0]])
    with ad.GradientTape() as tape:
        x2 = x ** 2
        y = np.mean(x2.numpy(), axis=0)
        y = ad.reduce_mean(y, axis=0)
    assert y.numpy() == pytest.approx(7.5)
    assert tape.gradient(y, x) is None


def test_numpy_math_on_a_tensor_breaks_the_path():
    x = ad.Variable([[1.0, 2.0], [3.0, 4.0]])
    with ad.GradientTape() as tape:
        x2 = x ** 2
        if ad.get_backend() == "strict":   # a device array: NumPy may not read it implicitly
            with pytest.raises(TypeError, match="Implicit conversion"):
                np.mean(x2, axis=0)
            x2 = x2.numpy()
        y = np.mean(x2, axis=0)          # NumPy computes this, not the library
        y = ad.reduce_mean(y, axis=0)
    assert tape.gradient(y, x) is None


def test_assign_add_inside_the_tape_breaks_the_path():
    x0 = ad.Variable(3.0)
    x1 = ad.Variable(0.0)
    with ad.GradientTape(persistent=True) as tape:
        x1.assign_add(x0)
        y = x1 ** 2
    assert y.numpy() == 9.0
    assert tape.gradient(y, x0) is None
    assert _value(tape.gradient(y, x1)) == 6.0


def test_gradient_of_a_variable_read_twice_adds_both_contributions():
    v = ad.Variable(3.0)
    with ad.GradientTape() as tape:
        a = v * 2.0
        b = v * 5.0
        y = a + b
    assert _value(tape.gradient(y, v)) == 7.0


def test_gradient_of_x_times_x_counts_both_edges():
    v = ad.Variable(3.0)
    with ad.GradientTape() as tape:
        y = v * v
    assert _value(tape.gradient(y, v)) == 6.0


def test_variable_read_before_and_after_assign_sums_both_reads():
    v = ad.Variable(1.0)
    with ad.GradientTape() as tape:
        a = v * 3.0
        v.assign(5.0)
        b = v * v                   # reads the new value: d/dv = 2 * 5
        y = a + b
    assert y.numpy() == 28.0
    assert _value(tape.gradient(y, v)) == 13.0


def test_tensor_ids_are_never_reused():
    ids = []
    for i in range(2000):
        t = ad.constant(float(i))
        u = t * 2.0
        ids.extend([t.id, u.id])
        del t, u
    assert all(b > a for a, b in zip(ids, ids[1:]))
    assert len(set(ids)) == len(ids)


def test_equal_values_have_different_ids():
    a = ad.constant(1.0)
    b = ad.constant(1.0)
    assert a.id != b.id


def test_variable_keeps_its_id_through_reads_and_assign():
    v = ad.Variable(1.0)
    first = v.id
    v.assign(2.0)
    assert v.id == first
    with ad.GradientTape() as tape:
        y = v * 1.0
    assert tape.records[0].input_ids[0] == first
    assert y.numpy() == 2.0


def test_watch_on_a_tape_never_entered_says_to_enter_it():
    tape = ad.GradientTape()
    with pytest.raises(RuntimeError, match="inside its `with` block"):
        tape.watch(ad.constant(1.0))
