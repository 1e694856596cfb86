"""``ad.slice`` with bounds read when it runs (``autodiff/ops/traced_slice.py``) on every backend:
eager == traced == compiled, values and gradients, and the box checked in each."""

import numpy as np
import pytest

import autodiff as ad


def window(x, begin, size):
    return ad.slice(x, begin, size) * 2.0


def column_sum(x, i):
    return ad.reduce_sum(ad.slice(x, [0, i], [-1, 1]) ** 2)


SIGNATURES = {window: [ad.TensorSpec([None, None], ad.float64), ad.TensorSpec([2], ad.int32),
                       ad.TensorSpec([2], ad.int32)],
              column_sum: [ad.TensorSpec([None, None], ad.float64), ad.TensorSpec([], ad.int32)]}
CALLS = {window: [((3, 4), [[1, 1], [2, -1]]), ((5, 2), [[0, 1], [-1, 1]]),
                  ((2, 2), [[2, 2], [0, 0]])],
         column_sum: [((3, 4), [3]), ((2, 5), [0]), ((4, 1), [0])]}


def _arguments(shape, others):
    x = np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape)
    return [ad.constant(x)] + [ad.constant(np.asarray(a, np.int32)) for a in others]


def _value_and_gradient(f, args):
    with ad.GradientTape() as tape:
        tape.watch(args[0])
        y = f(*args)
        loss = ad.reduce_sum(ad.sin(y))
    return y.numpy(), tape.gradient(loss, args[0]).numpy()


@pytest.mark.parametrize("program", [window, column_sum], ids=lambda p: p.__name__)
def test_eager_traced_and_compiled_give_the_same_values_and_gradients(program, engine_backend):
    traced = ad.function(program, input_signature=SIGNATURES[program])
    compiled = ad.function(program, input_signature=SIGNATURES[program], jit_compile=True)
    for shape, others in CALLS[program]:
        want = _value_and_gradient(program, _arguments(shape, others))
        for f in (traced, compiled):
            got = _value_and_gradient(f, _arguments(shape, others))
            for g, w in zip(got, want):
                assert g.shape == w.shape and np.array_equal(g, w), (program, shape, others)
    assert traced.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("jit_compile", [False, True], ids=["traced", "compiled"])
def test_a_box_that_does_not_fit_raises_when_it_runs(jit_compile, engine_backend):
    f = ad.function(window, input_signature=SIGNATURES[window], jit_compile=jit_compile)
    assert f(*_arguments((3, 4), [[3, 4], [0, -1]])).shape == (0, 0)   # empty, at the end
    for begin, size, words in (([0, 5], [1, 1], r"begin\[1\] in \[0, 4\], but got 5"),
                               ([2, 0], [2, 1], r"size\[0\] in \[0, 1\], but got 2"),
                               ([0, 0], [1, -3], r"size\[1\] in \[0, 4\], but got -3")):
        with pytest.raises(ad.errors.InvalidArgumentError, match=words):
            f(*_arguments((3, 4), [begin, size]))


def test_begin_and_size_must_be_as_long_as_the_rank(engine_backend):
    f = ad.function(lambda x, b: ad.slice(x, b, [-1]))
    with pytest.raises(ad.errors.InvalidArgumentError, match="1-D tensors of size 2"):
        f(ad.ones([2, 3]), ad.constant([0, 1]))


def test_a_function_calling_a_traced_slice_saves_and_checks_each_call(tmp_path, engine_backend):
    # saving traces the outer signature with probe values (ones, sizes of 1): a box that
    # does not fit them must not stop the trace, and the saved graph must still check
    inner = ad.function(lambda x, i: ad.slice(x, [0, i], [-1, 1]))
    outer = ad.function(lambda x, i: inner(x, i) * 2.0,
                        input_signature=[ad.TensorSpec([None, None], ad.float64),
                                         ad.TensorSpec([], ad.int32)])
    module = ad.Module()
    module.f = outer
    ad.saved_model.save(module, str(tmp_path / "nested"))
    loaded = ad.saved_model.load(str(tmp_path / "nested"))
    (x,) = _arguments((3, 4), [])
    for f in (outer, loaded.f):
        np.testing.assert_array_equal(f(x, ad.constant(3)).numpy(), 2.0 * x.numpy()[:, 3:])
        with pytest.raises(ad.errors.InvalidArgumentError, match=r"size\[1\] in \[0, 0\]"):
            f(x, ad.constant(4))


def test_a_box_of_numbers_known_while_tracing_is_checked_at_once(engine_backend):
    inner = ad.function(lambda x, i: ad.slice(x, [0, i], [-1, 1]))
    outer = ad.function(lambda y: inner(ad.ones([3, 4]), ad.constant(7)) + y)
    with pytest.raises(ad.errors.InvalidArgumentError, match=r"begin\[1\] in \[0, 4\], but got 7"):
        outer(ad.constant(1.0))
