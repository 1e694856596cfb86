"""Values an op needs on the host (indices, shapes, masks) inside ``ad.function``.

A trace runs the Python function once; a value read on the host while tracing
would be frozen for every later call. ``gather`` keeps tensor indices computed
from the arguments as an input of its op (``GatherTake``), so each call gathers
its own; the other ops that read a value (shapes, masks, scalar indices, range
bounds, paddings) refuse such a value with a TypeError naming the op, instead
of silently reusing the first call's.
"""

import numpy as np
import pytest

import autodiff as ad


@pytest.mark.parametrize("jit", [False, True])
def test_gather_with_indices_from_the_arguments_uses_each_calls_indices(jit):
    table = ad.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], name="table")

    @ad.function(jit_compile=jit)
    def step(ids):
        with ad.GradientTape() as tape:
            rows = ad.gather(table, ids)
            loss = ad.reduce_sum(rows * rows)
        return rows, tape.gradient(loss, table)

    for ids in ([0, 2, 2], [1, 1, 0], [2]):
        rows, grad = step(ad.constant(ids))
        want_rows = table.numpy()[ids]
        want_grad = np.zeros((3, 2), np.float32)
        np.add.at(want_grad, ids, 2 * want_rows)
        np.testing.assert_array_equal(rows.numpy(), want_rows)
        np.testing.assert_array_equal(grad.numpy(), want_grad)


def test_a_traced_gather_is_differentiated_by_an_outer_tape_and_checks_its_range():
    f = ad.function(lambda x, ids: ad.gather(x, ids, axis=1) ** 2)
    x = ad.constant([[1.0, 2.0, 3.0]])
    for ids in ([2, 0], [1, 1]):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = f(x, ad.constant(ids))
        want = np.zeros((1, 3), np.float32)
        np.add.at(want[0], ids, 2 * x.numpy()[0, ids])
        np.testing.assert_array_equal(tape.gradient(y, x).numpy(), want)
    if ad.get_backend() == "numpy":   # on the host, as TensorFlow's CPU kernel: an error
        with pytest.raises(ad.errors.InvalidArgumentError, match=r"not in \[0, 3\)"):
            f(x, ad.constant([3]))
    else:   # on a device, as TensorFlow's GPU kernel (no copy to the host): gathered as 0
        np.testing.assert_array_equal(f(x, ad.constant([3, 1])).numpy(), [[0.0, 4.0]])


@pytest.mark.parametrize("make", [
    lambda n: ad.boolean_mask(ad.constant([1.0, 2.0]), ad.equal(n, 0) | ad.constant([True, False])),
    lambda n: ad.pad(ad.constant([1.0]), ad.reshape(ad.stack([n, n]), [1, 2])),
], ids=["boolean_mask", "pad"])
def test_other_host_values_from_the_arguments_are_refused_by_name(make):
    f = ad.function(make)
    with pytest.raises(TypeError, match="computed from the arguments of the ad.function"):
        f(ad.constant(2))


@pytest.mark.parametrize("make, expected", [
    (lambda n: ad.zeros(n), lambda n: np.zeros(n, np.float32)),
    (lambda n: ad.range(n), lambda n: np.arange(n, dtype=np.int32)),
    (lambda n: ad.ones([n, 2]), lambda n: np.ones((n, 2), np.float32)),
    (lambda n: ad.fill(ad.stack([n, 1]), 2.5), lambda n: np.full((n, 1), 2.5, np.float32)),
    (lambda n: ad.constant([1.0, 2.0, 3.0, 4.0, 5.0])[n:], lambda n: np.arange(n + 1, 6, dtype=np.float32)),
    (lambda n: ad.tile(ad.constant([1.0, 2.0]), ad.stack([n])), lambda n: np.tile(np.float32([1, 2]), n)),
    (lambda n: ad.slice(ad.constant([1.0, 2.0, 3.0, 4.0, 5.0]), ad.stack([n]), [-1]),
     lambda n: np.arange(n + 1, 6, dtype=np.float32)),
], ids=["zeros", "range", "ones", "fill", "getitem", "tile", "slice"])
def test_sizes_from_the_arguments_are_read_on_each_call(make, expected):
    # as TensorFlow's Fill and Range, the sizes are an input of the op (ops/dynamic_shape.py)
    f = ad.function(make)
    for n in (2, 0, 5):
        got = f(ad.constant(n))
        assert got.numpy().dtype == expected(n).dtype
        np.testing.assert_array_equal(got.numpy(), expected(n))
    assert f.experimental_get_tracing_count() == 1


def test_a_scalar_index_from_the_arguments_reads_each_calls_index():
    x = ad.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    for jit in (False, True):
        f = ad.function(lambda i: x[i] * 10.0, jit_compile=jit)
        for i, row in ((0, [10.0, 20.0]), (2, [50.0, 60.0]), (-1, [50.0, 60.0]), (1, [30.0, 40.0])):
            np.testing.assert_array_equal(f(ad.constant(i)).numpy(), row)


def test_the_same_calls_work_eagerly_and_with_python_values_inside_a_function():
    assert ad.zeros(ad.constant(2)).shape == (2,)
    assert float(ad.constant([1.0, 2.0, 3.0])[ad.constant(1)]) == 2.0
    f = ad.function(lambda x: ad.zeros(3) + x[1])
    np.testing.assert_array_equal(f(ad.constant([1.0, 2.0])).numpy(), [2.0, 2.0, 2.0])


def test_reading_a_traced_value_on_the_host_raises_instead_of_keeping_it():
    f = ad.function(lambda x: x * 2.0 if float(x) > 0 else -x)
    with pytest.raises(TypeError, match=r"float\(\) of a traced ad.Tensor"):
        f(ad.constant(1.0))
    g = ad.function(lambda x: ad.constant(x.numpy() * 3.0))
    with pytest.raises(AttributeError, match=r"\.numpy\(\) of a traced ad.Tensor"):
        g(ad.constant(1.0))


def test_reading_constants_while_tracing_and_tensors_eagerly_does_not_warn():
    import warnings
    c = ad.constant(2.0)
    f = ad.function(lambda x: x * float(c))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(f(ad.constant(3.0))) == 6.0
        assert float(ad.constant(1.5)) == 1.5 and ad.constant([1.0]).numpy()[0] == 1.0


@pytest.mark.parametrize("jit", [False, True])
def test_a_power_with_a_traced_exponent_neither_warns_nor_freezes_it(jit):
    # Pow's forward reads a scalar exponent on the host to pick a cheaper ufunc; that
    # read is of the array its forward was given, every call, so nothing is kept.
    import warnings
    f = ad.function(lambda x, y: x ** y, jit_compile=jit)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for y, want in ((2.5, 2.0 ** 2.5), (3.0, -8.0), (2.0, 4.0), (-1.0, -0.5)):
            x = 2.0 if y == 2.5 else -2.0
            np.testing.assert_allclose(float(f(ad.constant(x), ad.constant(y))), want, rtol=1e-6)
