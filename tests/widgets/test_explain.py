""""Why is my gradient None?": one small example per cause, each asserting the reason code.

Every example first checks that the gradient really is None (or not), on a
copy of the same computation or a persistent tape, so a test cannot pass on
a case that does not exist.
"""

import warnings

import numpy as np
import pytest

import autodiff as ad
from autodiff.tensor import Tensor, Variable
from widgets.explain import REASONS, Explanation, explain_none_gradient, record_history


def _gradient(tape, target, source):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ad.AutodiffWarning)
        return tape.gradient(target, source)


def _broken(step):
    return step.status == "blocked" or bool(step.note)


# ---- the source itself ------------------------------------------------------------

def test_a_constant_never_watched_is_not_watched():
    x = ad.constant(3.0)
    with ad.GradientTape(persistent=True) as tape:
        y = x * x
    why = explain_none_gradient(tape, y, x)
    assert why.reason == "not_watched"
    assert "tape.watch(x)" in why.message
    assert _gradient(tape, y, x) is None


def test_a_variable_with_trainable_false_is_named():
    w = ad.Variable(2.0, trainable=False, name="w")
    with ad.GradientTape(persistent=True) as tape:
        y = w * w
    assert explain_none_gradient(tape, y, w).reason == "not_trainable"
    assert _gradient(tape, y, w) is None


def test_an_integer_source_and_an_integer_target_are_named():
    k = ad.constant(3)
    with ad.GradientTape(persistent=True) as tape:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ad.AutodiffWarning)
            tape.watch(k)
        y = k * k
    why = explain_none_gradient(tape, y, k)
    assert why.reason == "integer_dtype" and "int32" in why.message
    assert _gradient(tape, y, k) is None
    x = ad.constant(1.5)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        n = ad.cast(x, ad.int32)
    assert explain_none_gradient(tape, n, x).reason == "integer_dtype"


def test_watch_accessed_variables_false_is_not_watched():
    v = ad.Variable(2.0, name="v")
    with ad.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
        y = v * v
    why = explain_none_gradient(tape, y, v)
    assert why.reason == "not_watched" and "watch_accessed_variables=False" in why.message
    assert _gradient(tape, y, v) is None


def test_a_source_watched_only_by_the_inner_tape_is_named():
    x = ad.constant(1.0)
    with ad.GradientTape() as outer:
        with ad.GradientTape(persistent=True) as inner:
            inner.watch(x)
            y = x ** 3
        dy = inner.gradient(y, x)
    assert explain_none_gradient(outer, dy, x).reason == "watched_by_other_tape"


def test_a_variable_used_through_a_tensor_made_outside_the_tape():
    v = ad.Variable(2.0, name="v")
    x = v + 1.0                     # a Tensor: the tape below never reads v
    with record_history() as history:
        with ad.GradientTape(persistent=True) as tape:
            y = x ** 2
    assert _gradient(tape, y, v) is None
    assert explain_none_gradient(tape, y, v).reason == "variable_not_read"
    assert explain_none_gradient(tape, y, x).reason == "not_watched"
    with record_history() as history:
        x = v + 1.0
        with ad.GradientTape(persistent=True) as tape:
            y = x ** 2
    why = explain_none_gradient(tape, y, v, history=history)
    assert why.reason == "variable_replaced"
    assert why.path[0].op_type == "AddV2" and _broken(why.path[0])


def test_x_equals_x_plus_one_replaces_the_variable_with_a_tensor():
    # The guide's loop: the second time round, x is a Tensor and no tape watches it.
    reasons = []
    with record_history() as history:
        x = ad.Variable(2.0, name="x")
        for epoch in range(2):
            with ad.GradientTape(persistent=True) as tape:
                y = x + 1
            reasons.append((_gradient(tape, y, x) is None,
                            explain_none_gradient(tape, y, x, history=history).reason))
            x = x + 1               # should be x.assign_add(1)
    assert reasons == [(False, "not_none"), (True, "variable_replaced")]


# ---- what the records show -----------------------------------------------------------

def test_stop_gradient_on_the_path_is_found_and_marked():
    x = ad.constant(2.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = ad.sin(ad.stop_gradient(x * x)) + 1.0
    why = explain_none_gradient(tape, y, x)
    assert why.reason == "stop_gradient"
    # The tape records StopGradient but does not watch its output (TensorFlow's
    # rule), so Sin and AddV2 are not on the tape: the path ends in a gap.
    assert [r.op_type for r in tape.records] == ["Mul", "StopGradient"]
    assert [s.op_type for s in why.path] == ["Mul", "StopGradient", None]
    assert [_broken(s) for s in why.path] == [False, True, True]
    assert why.path_text().startswith("x ─Mul→ ") and "StopGradient ✗" in why.path_text()
    assert _gradient(tape, y, x) is None


def test_a_non_differentiable_op_on_the_path_is_named():
    x = ad.constant(2.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = ad.round(x * 3.0) * 2.0
    why = explain_none_gradient(tape, y, x)
    assert why.reason == "not_differentiable" and "Round" in why.message
    assert _gradient(tape, y, x) is None


def test_a_custom_gradient_returning_none_is_named():
    @ad.custom_gradient
    def doubled(a):
        return a * 2.0, lambda dy: None

    x = ad.constant(2.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = doubled(x) + 1.0
    why = explain_none_gradient(tape, y, x)
    assert why.reason == "vjp_returned_none" and "doubled" in why.message
    assert _gradient(tape, y, x) is None


def test_a_connected_source_is_reported_as_not_none():
    x = ad.constant(2.0)
    w = ad.Variable(3.0, name="w")
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = ad.sin(x) * w
    why = explain_none_gradient(tape, y, x)
    assert why.reason == "not_none"
    assert _gradient(tape, y, x) is not None


def test_explaining_does_not_use_up_a_non_persistent_tape():
    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert explain_none_gradient(tape, y, x).reason == "not_none"
    assert float(tape.gradient(y, x)) == 4.0     # still usable once
    assert explain_none_gradient(tape, y, x).reason == "tape_used"


def test_a_watched_variable_that_only_fed_an_assign_is_a_stateful_assignment():
    # The guide's example: x1.assign_add(x0) reads x0, then computes outside every tape.
    x0 = ad.Variable(3.0, name="x0")
    x1 = ad.Variable(0.0, name="x1")
    with record_history() as history:
        with ad.GradientTape(persistent=True) as tape:
            x1.assign_add(x0)
            y = x1 ** 2
    assert _gradient(tape, y, x0) is None
    assert explain_none_gradient(tape, y, x0).reason == "stateful_assignment"
    why = explain_none_gradient(tape, y, x0, history=history)
    assert why.reason == "stateful_assignment" and "x1" in why.message
    assert [s.op_type for s in why.path] == ["assign", "Pow"]


# ---- gaps the tape cannot explain alone, and what a History adds ---------------------------

def _watched_constant():
    return ad.constant([1.0, 2.0])


def test_stop_recording_is_named_with_a_history():
    x = _watched_constant()
    with record_history() as history:
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            with tape.stop_recording():
                y = x * x
            z = y + 1.0
    assert _gradient(tape, z, x) is None
    plain = explain_none_gradient(tape, z, x)
    assert plain.reason == "not_recorded" and "stop_recording" in plain.candidates
    why = explain_none_gradient(tape, z, x, history=history)
    assert why.reason == "stop_recording"
    assert [(s.op_type, _broken(s)) for s in why.path] == [("Mul", True), ("AddV2", False)]


def test_reset_is_named_with_a_history():
    v = ad.Variable(3.0, name="v")
    with record_history() as history:
        with ad.GradientTape(persistent=True) as tape:
            y = v * v
            tape.reset()
            z = y + 1.0
    assert _gradient(tape, z, v) is None
    assert explain_none_gradient(tape, z, v, history=history).reason == "reset"


def test_a_trip_through_numpy_is_named_with_a_history():
    x = _watched_constant()
    with record_history() as history:
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            print(x)                # printing is not leaving the library
            y = ad.constant(np.sin(x.numpy())) * 2.0
    assert _gradient(tape, y, x) is None
    assert explain_none_gradient(tape, y, x).reason == "not_recorded"
    why = explain_none_gradient(tape, y, x, history=history)
    assert why.reason == "left_library" and ".numpy()" in why.message
    line = _line_of("y = ad.constant(np.sin(x.numpy())) * 2.0")
    assert why.where == f".numpy() at test_explain.py:{line}: y = ad.constant(np.sin(x.numpy())) * 2.0"
    assert f"(.numpy() at test_explain.py:{line}: y = " in why.message


def _line_of(code):
    """The line number of ``code`` in this file (the History names the user's line)."""
    with open(__file__) as source:
        return next(n for n, text in enumerate(source, 1) if text.strip() == code)


_CAST_LINE = "y = ad.cast(ad.cast(ad.sin(x) * 10.0, ad.int32), ad.float32) * 2.0"


def test_an_integer_cast_on_the_path_is_named_with_a_history():
    x = _watched_constant()
    with record_history() as history:
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = ad.cast(ad.cast(ad.sin(x) * 10.0, ad.int32), ad.float32) * 2.0
    assert _gradient(tape, y, x) is None
    plain = explain_none_gradient(tape, y, x)
    assert plain.reason == "not_recorded"
    assert [s.op_type for s in plain.path[:2]] == ["Sin", "Mul"]  # what the tape did see
    why = explain_none_gradient(tape, y, x, history=history)
    assert why.reason == "integer_dtype" and "int32" in why.message
    assert why.where.startswith(f"test_explain.py:{_line_of(_CAST_LINE)}: y = ad.cast(")
    assert [(s.op_type, s.status) for s in why.path] == [
        ("Sin", "recorded"), ("Mul", "recorded"), ("Cast", "missing"), ("Cast", "missing"),
        ("Mul", "missing")]
    assert [_broken(s) for s in why.path] == [False, False, True, False, False]


def test_a_branch_not_taken_is_named_with_a_history():
    x = ad.constant(-1.0)
    c = ad.Variable(5.0, name="c")
    with record_history() as history:
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            if x > 0:
                y = x * x
            else:
                y = c * 2.0
    assert _gradient(tape, y, x) is None
    assert explain_none_gradient(tape, y, x, history=history).reason == "branch_not_taken"


def test_watching_after_use_and_computing_after_the_block_are_named():
    x = ad.constant(2.0)
    with record_history() as history:
        with ad.GradientTape(persistent=True) as tape:
            y = x * x
            tape.watch(x)
    assert _gradient(tape, y, x) is None
    assert explain_none_gradient(tape, y, x, history=history).reason == "watched_too_late"
    with record_history() as history:
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
        y = x * x
    assert _gradient(tape, y, x) is None
    assert explain_none_gradient(tape, y, x, history=history).reason == "outside_tape"


def test_an_unconnected_target_is_named_with_a_history():
    x = ad.constant(2.0)
    w = ad.Variable(1.0, name="w")
    with record_history() as history:
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = w * 3.0
    assert _gradient(tape, y, x) is None
    assert explain_none_gradient(tape, y, x, history=history).reason == "unconnected"


# ---- the Explanation and the recorder themselves ----------------------------------------------

def test_explanation_renders_as_text_and_html_with_the_callers_names():
    weight = ad.constant(1.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(weight)
        loss = ad.stop_gradient(weight) * 2.0
    why = explain_none_gradient(tape, loss, weight)
    assert isinstance(why, Explanation) and why.title == REASONS["stop_gradient"]
    text = str(why)
    assert text.startswith("Gradient of loss with respect to weight: stop_gradient on the path.")
    assert "Path: weight ─StopGradient ✗→" in text
    html = why._repr_html_()
    assert "<code>stop_gradient</code>" in html and "loss ← weight" in html
    renamed = explain_none_gradient(tape, loss, weight, source_name="w", target_name="L")
    assert str(renamed).startswith("Gradient of L with respect to w")


def test_explanation_prints_plain_text_and_shows_quoted_code_as_code_in_html():
    data = ad.constant(1.0)
    with ad.GradientTape(persistent=True) as tape:
        y = data * 2.0
    why = explain_none_gradient(tape, y, data)
    assert "`" not in str(why) and "`" not in why.message    # printed: plain text, no Markdown
    assert "inside the with block" in why.message
    assert "`with`" in why.markdown                         # the Markdown form keeps the quotes
    html = why._repr_html_()
    assert "`" not in html and "<code>with</code>" in html


def test_record_history_nests_and_leaves_no_recorder_or_observer():
    from autodiff import tape as tape_module
    with record_history() as outer:
        with record_history() as inner:
            x = ad.constant(1.0)
            y = ad.sin(x)
            float(y)
            print(y)  # printing is not the value leaving the library
        assert outer in tape_module.observers and inner not in tape_module.observers
    assert outer not in tape_module.active and inner not in tape_module.active
    assert not tape_module.observers
    assert [op.op_type for op in inner.ops] == ["Sin"] == [op.op_type for op in outer.ops]
    assert [kind for _, _, kind in inner.conversions] == ["float"]


def test_explain_rejects_what_is_not_a_tensor():
    with ad.GradientTape() as tape:
        pass
    with pytest.raises(TypeError, match="source"):
        explain_none_gradient(tape, ad.constant(1.0), 1.0)
    with pytest.raises(TypeError, match="target"):
        explain_none_gradient(tape, None, ad.constant(1.0))


DEVICE_BACKENDS = [pytest.param(n, marks=pytest.mark.gpu) if n == "cupy" else n
                   for n in ad.backend.available_backends() if n != "numpy"]


@pytest.mark.parametrize("name", DEVICE_BACKENDS)
def test_explaining_a_device_tape_after_its_backend_block(name):
    with ad.use_backend(name):
        x = ad.constant([1.0, 2.0])
        with record_history() as history:
            with ad.GradientTape(persistent=True) as tape:
                tape.watch(x)
                y = ad.sin(x)
                z = ad.stop_gradient(x) * 2.0
                w = ad.constant(np.cos(x.numpy()))
    assert explain_none_gradient(tape, y, x).reason == "not_none"    # runs a sweep on `name`
    assert explain_none_gradient(tape, z, x).reason == "stop_gradient"
    assert explain_none_gradient(tape, w, x, history=history).reason == "left_library"
