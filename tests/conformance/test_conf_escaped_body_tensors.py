"""Tensors that leave a loop or branch body other than through its results, against TensorFlow.

Inside ``function`` a body is traced once. A tensor it puts in a Python list,
dict, attribute or nonlocal holds that trace's value; used outside the body (as
an op's input or as the function's result) TensorFlow raises
InaccessibleTensorError (a ValueError), and so does ad (``tracing/body_scope.py``),
where it used to return the trace's value on every call. What a body returns,
loop variables AutoGraph carries, outer tensors a body reads, and Python loops
that unroll keep working, with TensorFlow's values. Each program is written once
with ``xp`` standing for ``ad`` or ``tf``.
"""

import numpy as np
import pytest

import autodiff as ad

from .test_conf_control_flow import _error


class _Box:
    """An object a branch sets an attribute on."""


# ---- tensors escaping a body: refused ----------------------------------------------------------
def escape_append(xp, n):
    out = []
    for i in xp.range(n):
        out.append(i)
    return out


def escape_append_used(xp, n):
    out = []
    for i in xp.range(n):
        out.append(i * 2)
    return out[0] + 1


def escape_cond_dict(xp, n):
    x = xp.cast(n, xp.float32)
    found = {}

    def true_fn():
        found["y"] = x * 2.0
        return x

    xp.cond(x > 0, true_fn, lambda: x)
    return found["y"]


def escape_cond_attribute(xp, n):
    x = xp.cast(n, xp.float32)
    box = _Box()

    def true_fn():
        box.y = x * 2.0
        return x

    def false_fn():
        box.y = x * 3.0
        return x

    return xp.cond(x > 0, true_fn, false_fn) + box.y


def escape_while_nonlocal(xp, n):
    kept = None

    def body(i):
        nonlocal kept
        kept = i * 10
        return (i + 1,)

    xp.while_loop(lambda i: i < n, body, (xp.constant(0),))
    return kept


def escape_map_fn(xp, n):
    seen = []

    def fn(e):
        seen.append(e * 2)
        return e

    xp.map_fn(fn, xp.range(n))
    return seen[0]


def escape_scan(xp, n):
    seen = []

    def fn(a, e):
        seen.append(a + e)
        return a + e

    xp.scan(fn, xp.range(n))
    return seen[0]


def escape_switch_case(xp, n):
    seen = []

    def branch(k):
        def fn():
            seen.append(n + k)
            return n
        return fn

    xp.switch_case(n % 2, [branch(1), branch(2)])
    return seen[-1]


def escape_if_in_loop(xp, n):
    out = []
    for i in xp.range(n):
        if i > 0:
            out.append(i * 2)
    return out[0]


def escape_into_a_second_loop(xp, n):
    out = []
    for i in xp.range(n):
        out.append(i * 2)
    total = xp.constant(0)
    for _ in xp.range(n):
        total = total + out[0]
    return total


ESCAPES = [escape_append, escape_append_used, escape_cond_dict, escape_cond_attribute,
           escape_while_nonlocal, escape_map_fn, escape_scan, escape_switch_case,
           escape_if_in_loop, escape_into_a_second_loop]


@pytest.mark.parametrize("jit_compile", [False, True], ids=["traced", "compiled"])
@pytest.mark.parametrize("program", ESCAPES, ids=lambda p: p.__name__)
def test_a_tensor_escaping_a_body_is_refused_as_in_tensorflow(tf, program, jit_compile):
    ours = _error(lambda: ad.function(lambda n: program(ad, n),
                                      jit_compile=jit_compile)(ad.constant(3)))
    theirs = _error(lambda: tf.function(lambda n: program(tf, n),
                                        jit_compile=jit_compile)(tf.constant(3)))
    assert type(theirs).__name__ == "InaccessibleTensorError", theirs
    assert isinstance(ours, ad.errors.InaccessibleTensorError), ours
    assert isinstance(ours, ValueError) and isinstance(theirs, ValueError)


def test_the_error_has_tensorflows_classes_and_says_what_to_do(tf):
    theirs = _error(lambda: tf.function(lambda n: escape_append(tf, n))(tf.constant(3)))
    assert [c.__name__ for c in type(theirs).__mro__[:3]] == \
        ["InaccessibleTensorError", "ValueError", "Exception"]
    assert ad.errors.InaccessibleTensorError.__mro__[1:3] == (ValueError, Exception)
    ours = _error(lambda: ad.function(lambda n: escape_append_used(ad, n))(ad.constant(3)))
    message = str(ours)
    for words in ("Mul", "shape ()", "int32", "inside a loop or branch body",
                  "Return it from the body", "loop variable", "ad.TensorArray"):
        assert words in message, (words, message)


def test_the_tensorflow_error_comes_on_every_call_not_a_kept_value():
    traced = ad.function(lambda n: escape_append(ad, n))
    for n in (3, 5):
        with pytest.raises(ad.errors.InaccessibleTensorError, match="Placeholder"):
            traced(ad.constant(n))


def test_an_escaped_tensor_that_is_never_used_is_not_an_error(tf):
    def program(xp, n):
        out = []
        for i in xp.range(n):
            out.append(i)
        return n * 2

    for xp in (ad, tf):
        assert int(xp.function(lambda n: program(xp, n))(xp.constant(3))) == 6


def test_a_dict_item_set_in_a_tensor_if_is_refused_not_kept():
    # TensorFlow's AutoGraph carries ``d["y"]`` out of the if (6.0 for x = 3); ad's AutoGraph
    # carries local names only, so it refuses the branch's tensor instead of returning the
    # else branch's traced value (9.0 before).
    def program(x):
        d = {}
        if x > 0:
            d["y"] = x * 2.0
        else:
            d["y"] = x * 3.0
        return d["y"]

    with pytest.raises(ad.errors.InaccessibleTensorError, match="body"):
        ad.function(program)(ad.constant(3.0))


# ---- what must keep working --------------------------------------------------------------------
def legit_python_range(xp, n):
    x = xp.cast(n, xp.float32)
    out = []
    for i in range(3):          # a Python range: unrolled while tracing
        out.append(x * i)
    return out


def legit_carried(xp, n):
    s = xp.constant(0.0)
    last = xp.constant(0.0)
    for _ in xp.range(n):
        s = s + 1.0
        last = s * 2
    return last


def legit_captured(xp, n):
    y = xp.cast(n, xp.float32) * 1.5
    s = xp.constant(0.0)
    for _ in xp.range(n):
        s = s + y
    return s


def legit_tensor_array(xp, n):
    values = xp.TensorArray(xp.int32, size=n)   # (XLA gives a dynamic_size array back empty)
    for i in xp.range(n):
        values = values.write(i, i * 2)
    return values.stack()


def legit_branch_results(xp, n):
    x = xp.cast(n, xp.float32)
    found = {}

    def true_fn():
        found["y"] = x * 2.0
        return found["y"]        # leaves through the branch's result

    return xp.cond(x > 0, true_fn, lambda: x)


LEGIT = [legit_python_range, legit_carried, legit_captured, legit_tensor_array,
         legit_branch_results]


@pytest.mark.parametrize("jit_compile", [False, True], ids=["traced", "compiled"])
@pytest.mark.parametrize("program", LEGIT, ids=lambda p: p.__name__)
def test_results_loop_variables_and_captures_equal_tensorflow(tf, program, jit_compile):
    ours = ad.function(lambda n: program(ad, n), jit_compile=jit_compile)
    theirs = tf.function(lambda n: program(tf, n), jit_compile=jit_compile)
    for n in (3, 5):
        got, want = ours(ad.constant(n)), theirs(tf.constant(n))
        got, want = ad.nest.flatten(got), tf.nest.flatten(want)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b))
    assert ours.experimental_get_tracing_count() == 1


def test_the_carried_value_is_tensorflows_six():
    assert float(ad.function(lambda n: legit_carried(ad, n))(ad.constant(3))) == 6.0


@pytest.mark.parametrize("program", [escape_cond_dict, escape_while_nonlocal],
                         ids=lambda p: p.__name__)
def test_eagerly_a_body_is_plain_python_in_both(tf, program):
    ours, theirs = program(ad, ad.constant(3)), program(tf, tf.constant(3))
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs))
