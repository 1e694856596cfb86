"""ad.function's trace cache: bounded, warns on frequent retracing, holds Variables weakly.

TensorFlow 2.21, checked: ``f(x, 0.0)``, ``f(x, 1.0)``, ... trace once per
distinct Python float (12 values, 12 traces) and log a warning on the 5th
and 6th trace ("5 out of the last 5 calls ... triggered tf.function
retracing"), then no more. ``ad.function`` does the same, as a Python
warning in its own words.
"""

import gc
import tracemalloc
import warnings
import weakref

import pytest

import autodiff as ad
from autodiff.tape import AutodiffWarning
from autodiff.tracing import function as function_module



def _scale(x, a):
    return x * a


def test_python_floats_retrace_like_tensorflow_and_warn_twice():
    f = ad.function(_scale)
    x = ad.constant(1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(12):
            assert f(x, float(i)).numpy() == float(i)
    retracing = [w for w in caught if issubclass(w.category, AutodiffWarning)]
    assert f.experimental_get_tracing_count() == 12
    assert len(retracing) == 2
    message = str(retracing[0].message)
    assert "'_scale' has been traced 5 times" in message
    assert "5 of its last 5 calls" in message
    assert "Python number" in message and "new Variable" in message
    assert "TensorSpec" in message and "tensors" in message


def test_calls_that_reuse_traces_do_not_warn():
    f = ad.function(_scale)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AutodiffWarning)
        for i in range(4):                   # four traces, then many cached calls
            f(ad.constant(1.0), float(i))
        for _ in range(20):
            f(ad.constant(2.0), 0.0)
    assert f.experimental_get_tracing_count() == 4


def test_the_trace_cache_is_bounded_and_keeps_the_recently_used():
    f = ad.function(_scale)
    x = ad.constant(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AutodiffWarning)
        for i in range(function_module.MAX_TRACES + 10):
            f(x, float(i))
            f(x, 0.0)                         # used all along: never the least recent
    assert len(f.concrete_functions) == function_module.MAX_TRACES
    count = f.experimental_get_tracing_count()
    f(x, 0.0)
    f(x, float(function_module.MAX_TRACES + 9))
    assert f.experimental_get_tracing_count() == count   # both still cached
    f(x, 1.0)                                             # evicted long ago: traced again
    assert f.experimental_get_tracing_count() == count + 1


def test_memory_stays_bounded_over_two_thousand_python_floats():
    f = ad.function(lambda x, a: ad.sin(x * a) + ad.ones([64, 64]))
    x = ad.ones([64, 64])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AutodiffWarning)
        for i in range(100):
            f(x, float(i))
        gc.collect()
        tracemalloc.start()
        for i in range(100, 2000):
            f(x, float(i))
        gc.collect()
        current = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    assert len(f.concrete_functions) == function_module.MAX_TRACES
    assert current < 4 * 2 ** 20   # 2,000 unbounded traces held about 200 MiB


def _double(v):
    return v * 2.0


def test_a_trace_keyed_by_a_variable_does_not_keep_it_alive():
    f = ad.function(_double)
    v = ad.Variable([1.0, 2.0])
    assert f(v).numpy().tolist() == [2.0, 4.0]
    assert len(f.concrete_functions) == 1
    dead = weakref.ref(v)
    del v
    gc.collect()
    assert dead() is None
    assert f.concrete_functions == []     # its trace went with it


def test_a_trace_keyed_by_a_variable_still_works_and_differentiates():
    f = ad.function(_double)
    v = ad.Variable(3.0)
    for _ in range(2):
        with ad.GradientTape() as tape:
            y = f(v)
        assert tape.gradient(y, v).numpy() == 2.0
    v.assign(5.0)
    assert f(v).numpy() == 10.0
    assert f.experimental_get_tracing_count() == 1


def test_a_custom_gradient_inside_a_variable_keyed_trace_holds_it_weakly():
    @ad.custom_gradient
    def scaled(x):
        return x * 1.0, lambda dy: dy * 3.0

    f = ad.function(lambda v: scaled(v * v))
    v = ad.Variable(2.0)
    with ad.GradientTape() as tape:
        y = f(v)
    assert tape.gradient(y, v).numpy() == 12.0
    dead = weakref.ref(v)
    del v, tape, y
    gc.collect()
    assert dead() is None
