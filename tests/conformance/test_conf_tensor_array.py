"""``ad.TensorArray`` against TensorFlow 2's ``tf.TensorArray`` (issue 33's follow-up).

Each program is written once with ``xp`` standing for ``ad`` or ``tf``: the
same values, dtypes and shapes eagerly, inside ``function`` with a ``None``
size (one trace for every size, on both sides), compiled, and the same
gradients (a tape outside the function and one inside, second order, forward
mode); then TensorFlow's errors for the same mistakes.
"""

import numpy as np
import pytest

import autodiff as ad

from .test_conf_control_flow import _error, second_order_inside


def program_autograph_for(xp, x):
    """TensorFlow's tf.function guide: fill an array in a ``for`` over a tensor range."""
    ta = xp.TensorArray(xp.float32, size=0, dynamic_size=True)
    for i in xp.range(xp.shape(x)[0]):
        ta = ta.write(i, xp.sin(x[i]) * x[i])
    return ta.stack()


def program_rows_backwards(xp, x):
    """A fixed size from the input's shape, known element shape, written back to front."""
    n = xp.shape(x)[0]
    ta = xp.TensorArray(xp.float32, size=n, element_shape=[2])
    for i in xp.range(n):
        ta = ta.write(n - 1 - i, xp.stack([x[i], x[i] * x[i]]))
    return ta.stack()


def program_while_loop_reads(xp, x):
    """``while_loop`` carries the array; each step reads the element written before."""
    ta = xp.TensorArray(xp.float32, size=1, dynamic_size=True).write(0, x[0])

    def body(i, ta):
        return i + 1, ta.write(i, ta.read(i - 1) * x[i] + 1.0)

    _, ta = xp.while_loop(lambda i, ta: i < xp.shape(x)[0], body, (xp.constant(1), ta))
    return ta.stack() * ta.read(0)


def program_autograph_while(xp, x):
    """AutoGraph's ``while`` with an array and a counter; ``size()`` read after the loop."""
    ta = xp.TensorArray(xp.float32, size=0, dynamic_size=True)
    i = xp.constant(0)
    while i < xp.shape(x)[0]:
        ta = ta.write(i, xp.exp(x[i] * 0.5))
        i += 1
    return ta.stack() * xp.cast(ta.size(), xp.float32)


def program_unstack_gather_concat(xp, x):
    """unstack, gather, scatter and concat, all on sizes taken from the input."""
    n = xp.shape(x)[0]
    rows = xp.TensorArray(xp.float32, size=n).unstack(xp.reshape(x, [-1, 1]) * x[0])
    picked = rows.gather(xp.range(n - 1, -1, -1))   # repeated indices: see the test below
    joined = rows.concat()
    moved = xp.TensorArray(xp.float32, size=n + 1).scatter(xp.range(n) + 1, xp.cos(x))
    return xp.reduce_sum(picked) + joined * 2.0, moved.stack(), rows.identity().read(n - 1)


PROGRAMS = [program_autograph_for, program_rows_backwards, program_while_loop_reads,
            program_autograph_while, program_unstack_gather_concat]
SIZES = [3, 5, 1, 4]


def _input(n):
    return np.linspace(-0.7, 1.1, n).astype(np.float32)


def _traced(xp, program, jit_compile=False):
    def f(x):
        return program(xp, x)
    return xp.function(f, input_signature=[xp.TensorSpec([None], xp.float32)],
                       jit_compile=jit_compile)


def _outside(xp, f, x):
    with xp.GradientTape() as tape:
        tape.watch(x)
        out = f(x)
        y = sum(xp.reduce_sum(o * o) for o in (out if isinstance(out, tuple) else (out,)))
    return out, tape.gradient(y, x)


def _flat(value):
    return [np.asarray(v) for v in (value if isinstance(value, (tuple, list)) else (value,))]


def _assert_same(ours, theirs, what):
    ours, theirs = _flat(ours), _flat(theirs)
    assert len(ours) == len(theirs), what
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype, (what, a.shape, b.shape, a.dtype)
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_values_and_gradients_eager_traced_and_compiled_equal_tensorflows(tf, program):
    ours = [_traced(ad, program), _traced(ad, program, jit_compile=True)]
    theirs = _traced(tf, program)
    for n in SIZES:
        want = _outside(tf, theirs, tf.constant(_input(n)))
        for label, f in (("eager", lambda x: program(ad, x)), ("traced", ours[0]),
                         ("compiled", ours[1])):
            got = _outside(ad, f, ad.constant(_input(n)))
            _assert_same(got[0], want[0], f"{program.__name__} {label} value at size {n}")
            _assert_same(got[1], want[1], f"{program.__name__} {label} gradient at size {n}")
    assert theirs.experimental_get_tracing_count() == 1
    assert ours[0].experimental_get_tracing_count() == 1
    assert ours[1].experimental_get_tracing_count() == 1


@pytest.mark.parametrize("program", [program_autograph_for, program_while_loop_reads,
                                     program_unstack_gather_concat], ids=lambda p: p.__name__)
def test_a_tape_inside_the_function_second_order_and_forward_mode(tf, program):
    def jvp(xp, f, x):
        with xp.autodiff.ForwardAccumulator(x, xp.ones_like(x) * 0.5) as acc:
            y = _flat_sum(xp, f(x))
        return acc.jvp(y)

    def summed(xp, x):
        return _flat_sum(xp, program(xp, x))

    ours, theirs = second_order_inside(ad, summed), second_order_inside(tf, summed)
    for n in (3, 4):
        _assert_same(ours(ad.constant(_input(n))), theirs(tf.constant(_input(n))), "2nd order")
        want = jvp(tf, tf.function(lambda x: program(tf, x)), tf.constant(_input(n)))
        for f in (lambda x: program(ad, x), ad.function(lambda x: program(ad, x))):
            _assert_same(jvp(ad, f, ad.constant(_input(n))), want, "forward mode")


def _flat_sum(xp, out):
    return sum(xp.reduce_sum(o * o) for o in (out if isinstance(out, tuple) else (out,)))


def test_every_method_gives_tensorflows_values_dtypes_and_shapes_eagerly(tf):
    def use(xp):
        ta = xp.TensorArray(xp.float64, size=3, clear_after_read=True)
        ta = ta.write(0, [1.0, 2.0]).write(2, xp.constant([5.0, 6.0], xp.float64))
        grown = xp.TensorArray(xp.int32, size=0, dynamic_size=True).write(3, 7)
        ints = xp.TensorArray(xp.int32, size=2, element_shape=[None, 2], infer_shape=False)
        ints = ints.write(0, [[1, 2]]).write(1, [[3, 4], [5, 6]])
        empty = xp.TensorArray(xp.float32, size=0)
        out = [ta.stack(), ta.read(1), ta.gather([2, 0]), ta.concat(), ta.size(),
               grown.stack(), grown.size(), ints.concat(), empty.stack(), empty.size(),
               ta.scatter([1], xp.constant([[8.0, 9.0]], xp.float64)).stack(), ta.identity().read(0)]
        return out, (ta.dtype.name, list(ta.element_shape), ta.close())

    ours, theirs = use(ad), use(tf)
    _assert_same(ours[0], theirs[0], "values")
    assert ours[1] == theirs[1]
    assert ad.TensorArray(ad.float32, size=1).element_shape is None   # TF: TensorShape(None)
    assert tf.TensorArray(tf.float32, size=1).element_shape.rank is None


ERRORS = {
    "write_past_end": lambda xp: xp.TensorArray(xp.float32, size=2).write(2, 1.0),
    "write_negative": lambda xp: xp.TensorArray(xp.float32, size=2).write(-1, 1.0),
    "write_dtype": lambda xp: xp.TensorArray(xp.float32, size=2).write(
        0, xp.constant(1.0, xp.float64)),
    "write_float_into_int": lambda xp: xp.TensorArray(xp.int32, size=2).write(0, 1.5),
    "write_shape": lambda xp: xp.TensorArray(xp.float32, size=2).write(0, [1.0, 2.0]).write(
        1, [1.0]),
    "element_shape": lambda xp: xp.TensorArray(xp.float32, size=2, element_shape=[3]).write(
        0, [1.0, 2.0]),
    "read_past_end": lambda xp: xp.TensorArray(xp.float32, size=2).write(0, 1.0).read(5),
    "read_negative": lambda xp: xp.TensorArray(xp.float32, size=2).write(0, 1.0).read(-1),
    "unstack_too_many": lambda xp: xp.TensorArray(xp.float32, size=1).unstack([1.0, 2.0]),
    "scatter_past_end": lambda xp: xp.TensorArray(xp.float32, size=3).scatter([4], [5.0]),
    "no_size": lambda xp: xp.TensorArray(xp.float32),
    "concat_scalars": lambda xp: xp.TensorArray(xp.float32, size=2).write(0, 1.0).write(
        1, 2.0).concat(),
    "stack_unknown_unwritten": lambda xp: xp.TensorArray(xp.float32, size=2).stack(),
    "traced_write_past_end": lambda xp: xp.function(
        lambda x: xp.TensorArray(xp.float32, size=2).write(xp.shape(x)[0], 1.0).stack(),
        input_signature=[xp.TensorSpec([None], xp.float32)])(xp.constant([1.0, 2.0])),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_are_tensorflows(tf, case):
    ours, theirs = _error(lambda: ERRORS[case](ad)), _error(lambda: ERRORS[case](tf))
    assert ours is not None and theirs is not None, (case, ours, theirs)
    if type(theirs).__module__.startswith("tensorflow"):   # tf.errors: the same class name
        assert type(ours).__name__ == type(theirs).__name__, (case, ours, theirs)
    else:
        assert type(ours) is type(theirs), (case, ours, theirs)


def test_a_repeated_gather_index_gets_both_gradients_as_in_tensorflow_eagerly(tf):
    """TensorFlow 2.21's traced TensorListGather drops one of two repeated indices' gradients;
    its eager TensorArray and finite differences count both, and so does this one."""
    def program(xp, x):
        return x[0] * xp.TensorArray(x.dtype, size=1).unstack(x * x).gather([0, 0])

    x = _input(1)
    want_eager = _outside(tf, lambda v: program(tf, v), tf.constant(x))[1]
    want_traced = _outside(tf, _traced(tf, program), tf.constant(x))[1]

    def value(v):   # float64 central differences
        return float(_flat_sum(ad, program(ad, ad.constant(v, ad.float64))).numpy())
    h, x64 = 1e-5, x.astype(np.float64)
    fd = (value(x64 + h) - value(x64 - h)) / (2 * h)
    for f in (lambda v: program(ad, v), _traced(ad, program), _traced(ad, program, True)):
        got = _outside(ad, f, ad.constant(x))[1]
        _assert_same(got, want_eager, "gradient against TensorFlow's eager TensorArray")
        np.testing.assert_allclose(got.numpy(), [fd], rtol=1e-4)
    assert not np.allclose(want_traced.numpy(), want_eager.numpy())   # TensorFlow's traced gap


def test_a_saved_model_with_an_array_filled_in_a_loop_serves_every_size(tf, tmp_path):
    def module(xp):
        class Doubler(xp.Module):
            @xp.function(input_signature=[xp.TensorSpec([None], xp.float32)])
            def __call__(self, x):
                return program_autograph_for(xp, x)
        return Doubler()

    loaded = {}
    for name, xp in (("ad", ad), ("tf", tf)):
        xp.saved_model.save(module(xp), str(tmp_path / name))
        loaded[name] = xp.saved_model.load(str(tmp_path / name))
    for n in (4, 1, 6):
        _assert_same(loaded["ad"](ad.constant(_input(n))), loaded["tf"](tf.constant(_input(n))),
                     f"saved model at size {n}")


def test_an_array_written_under_a_tensor_if_is_carried_as_in_tensorflow(tf):
    """TensorFlow's AutoGraph `if` carries the array; so does this one (branch_arrays.py;
    more in test_conf_tensor_array_cond.py)."""
    def odd_ones(xp, x):
        ta = xp.TensorArray(xp.float32, size=2, element_shape=[])
        if xp.reduce_sum(x) > 0:
            ta = ta.write(0, x)
        return ta.stack()

    theirs = tf.function(lambda x: odd_ones(tf, x))
    ours = ad.function(lambda x: odd_ones(ad, x))
    for x, want in ((2.0, [2.0, 0.0]), (-2.0, [0.0, 0.0])):
        np.testing.assert_array_equal(theirs(tf.constant(x)).numpy(), want)
        np.testing.assert_array_equal(ours(ad.constant(x)).numpy(), want)
    assert ours.experimental_get_tracing_count() == 1
