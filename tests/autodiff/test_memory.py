"""``ad.debugging.tape_memory``: what a tape keeps, counted from its records."""

import numpy as np
import pytest

import autodiff as ad


def test_counts_what_each_op_saves_once():
    x = ad.ones([1000])
    with ad.GradientTape() as tape:
        tape.watch(x)
        s = ad.sin(x)          # keeps its input x
        e = ad.exp(s)          # keeps its output
        m = s * e              # keeps both inputs: s is new, e already kept
        ad.reduce_sum(m + x)   # AddV2 and Sum keep shapes only
    memory = ad.debugging.tape_memory(tape)
    assert memory.records == 5
    assert memory.per_record == (4000, 4000, 4000, 0, 0)
    assert (memory.arrays, memory.bytes) == (3, 12000)
    assert str(memory) == "5 records keep 3 arrays, 12,000 bytes"


def test_grows_with_depth():
    x = ad.ones([250])
    sizes = []
    for depth in (1, 2, 4):
        with ad.GradientTape() as tape:
            tape.watch(x)
            h = x
            for _ in range(depth):
                h = ad.sin(h)
        sizes.append(ad.debugging.tape_memory(tape).bytes)
    assert sizes == [1000, 2000, 4000]


def test_a_custom_gradient_record_keeps_the_results():
    @ad.custom_gradient
    def double(x):
        return x * 2.0, lambda dy: dy * 2.0

    x = ad.ones([100])
    with ad.GradientTape() as tape:
        tape.watch(x)
        double(x)
    memory = ad.debugging.tape_memory(tape)
    # The Mul inside is recorded too (as in TensorFlow) and keeps x and 2.0; the call's
    # record keeps its result.
    assert [r.op_type for r in tape.records] == ["Mul", "double"]
    assert memory.per_record == (404, 400)


def test_an_empty_tape_keeps_nothing():
    with ad.GradientTape() as tape:
        pass
    assert tuple(ad.debugging.tape_memory(tape)) == (0, 0, 0, ())


def test_a_used_non_persistent_tape_cannot_be_counted():
    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="freed"):
        ad.debugging.tape_memory(tape)


def test_variables_read_by_a_matmul_count_once():
    w = ad.Variable(np.ones((10, 10), np.float32))
    x = ad.ones([4, 10])
    with ad.GradientTape() as tape:
        ad.matmul(ad.matmul(x, w), w)
    memory = ad.debugging.tape_memory(tape)
    assert memory.per_record == (160 + 400, 160)
