"""AutoGraph (``autodiff/autograph``): Python control flow on tensors inside ``ad.function``.

Every program runs eagerly and traced on several inputs after one trace;
the traced results (and gradients) must equal the eager ones on every call,
which is what "no first call's value kept" means. TensorFlow's side is in
``tests/conformance/test_conf_control_flow.py``.
"""

import numpy as np
import pytest

import autodiff as ad


def collatz_steps(n):
    steps = ad.constant(0)
    while n > 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def positive_row_sums(x):
    total = ad.constant(0.0)
    for row in x:
        if ad.reduce_sum(row) < 0:
            continue
        total += ad.reduce_sum(row) * ad.reduce_sum(row)
    return total


def first_index_above(x, n):
    found = ad.constant(-1)
    for i in ad.range(n):
        if x[i] > 10.0:
            found = i
            break
    return found


def early_return(x):
    i = ad.constant(0)
    while i < 10:
        if x * ad.cast(i, ad.float32) > 5.0:
            return x * ad.cast(i, ad.float32)
        i += 1
    return -x


def python_loop_stays_python(x):
    for k in range(3):          # a Python range: unrolled while tracing, as in TensorFlow
        if k == 1:
            x = x * 2.0
        x = x + 1.0
    return x if k == 2 else -x


def boolean_operators(x):
    if x > 0 and not x > 5:
        return x * x
    elif x < -5 or x == 0:
        return x * 0.0
    return x if x > 100 else -x


def helper_with_an_if(x):
    if x > 0:
        return x * 3.0
    return x * -1.0


def calls_a_helper(x):
    return helper_with_an_if(x) + 1.0


@pytest.mark.parametrize("program, inputs", [
    (collatz_steps, [6, 7, 27, 1]),
    (positive_row_sums, [[[1.0, 2.0], [-5.0, 1.0], [3.0, 3.0]], [[-1.0, 0.0], [2.0, 2.0],
                                                                 [1.0, -3.0]]]),
    (early_return, [1.0, 2.0, 0.0, -1.0]),
    (python_loop_stays_python, [1.0, -4.0]),
    (boolean_operators, [3.0, 7.0, -7.0, 0.0, -2.0]),
    (calls_a_helper, [2.0, -2.0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_traced_equals_eager_on_every_call(program, inputs):
    traced = ad.function(program)
    compiled = ad.function(program, jit_compile=True)   # if/while statements in the program
    for value in inputs:
        x = ad.constant(np.array(value, np.float32 if isinstance(value, (float, list))
                                 else np.int32))
        np.testing.assert_allclose(traced(x).numpy(), program(x).numpy(), err_msg=str(value))
        np.testing.assert_array_equal(compiled(x).numpy(), traced(x).numpy(), err_msg=str(value))
        if x.dtype.is_floating:
            grads = []
            for f in (program, traced):
                with ad.GradientTape() as tape:
                    tape.watch(x)
                    y = f(x)
                grads.append(tape.gradient(y, x))
            np.testing.assert_allclose(grads[1].numpy(), grads[0].numpy())
    assert traced.experimental_get_tracing_count() == len({np.shape(v) for v in inputs})


def test_compiled_case_and_scan_read_their_tests_explicitly(engine_backend):
    # on a device a branch index or loop test is copied to the host on purpose (the
    # strict backend refuses the hidden copy of ``if array:``)
    def program(x, k):
        picked = ad.switch_case(k, [lambda: x * 2.0, lambda: x - 1.0])
        n = ad.constant(0)
        while n < k + 2:
            picked, n = picked + 1.0, n + 1
        return ad.scan(lambda a, v: a + v, picked)

    compiled = ad.function(program, jit_compile=True)
    x = ad.constant([1.0, 2.0, 3.0])
    for k in (0, 1, 5):
        k = ad.constant(k)
        np.testing.assert_array_equal(compiled(x, k).numpy(), program(x, k).numpy())
    source = compiled.experimental_get_compiler_ir(x, ad.constant(0))()
    assert "= int(_host(" in source and "while _host(" in source


def test_a_tensor_range_with_break():
    traced = ad.function(first_index_above)
    for values, want in (([1.0, 20.0, 30.0], 1), ([1.0, 2.0, 30.0], 2), ([1.0, 2.0, 3.0], -1)):
        assert int(traced(ad.constant(values), ad.constant(3))) == want
    assert int(traced(ad.constant([1.0, 2.0, 30.0]), ad.constant(2))) == -1
    assert traced.experimental_get_tracing_count() == 1


def test_the_if_becomes_one_if_node_and_to_code_shows_it():
    traced = ad.function(helper_with_an_if)
    graph = traced.get_concrete_function(ad.constant(1.0)).graph
    assert [n.op_type for n in graph.nodes].count("If") == 2   # the if, and the guarded rest
    code = ad.autograph.to_code(traced)
    assert "ag__.if_stmt(" in code and "retval_" in code
    compile(code, "<to_code>", "exec")


def test_without_autograph_a_tensor_if_is_refused_not_frozen():
    traced = ad.function(helper_with_an_if, autograph=False)
    with pytest.raises(ad.errors.OperatorNotAllowedInGraphError, match="Python `bool`"):
        traced(ad.constant(1.0))


def test_a_decorated_function_is_called_as_it_is():
    @ad.custom_gradient
    def clipped(x):
        def grad(dy):
            return ad.clip_by_value(dy, -0.5, 0.5)
        return x * 1.0, grad

    def f(x):
        if x > 0:
            return clipped(x) * 4.0
        return x
    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.function(f)(x)
    assert float(tape.gradient(y, x)) == 0.5   # the upstream 4, clipped by the custom gradient


def test_a_variable_defined_in_one_branch_only_is_an_error():
    def f(x):
        if x > 0:
            y = x * 2.0
        return y
    with pytest.raises(ValueError, match="'y' must also be initialized in the else branch"):
        ad.function(f)(ad.constant(1.0))


def test_a_loop_variable_must_be_defined_before_a_tensor_loop():
    def f(x):
        while x < 10.0:
            z = x
            x = x * 2.0
        return z
    with pytest.raises(ValueError, match="'z' must be defined before the loop"):
        ad.function(f)(ad.constant(1.0))


def test_a_lambda_is_converted():
    traced = ad.function(lambda x: x * 2.0 if x > 0 else -x)
    assert float(traced(ad.constant(3.0))) == 6.0
    assert float(traced(ad.constant(-3.0))) == 3.0


def test_a_variable_assigned_in_a_branch_is_assigned_on_every_call():
    v = ad.Variable(0.0)

    @ad.function
    def step(x):
        if x > 0:
            v.assign_add(1.0)
        else:
            v.assign_sub(1.0)
        return v * 1.0

    for x, want in ((1.0, 1.0), (1.0, 2.0), (-1.0, 1.0)):
        assert float(step(ad.constant(x))) == want
    assert float(v) == 1.0


def test_a_bound_method_keeps_its_self():
    class Scaler:
        factor = 3.0

        def step(self, x, y):
            if x > y:
                return x * self.factor
            return y

    traced = ad.function(Scaler().step)
    assert float(traced(ad.constant(2.0), ad.constant(1.0))) == 6.0
    assert float(traced(ad.constant(0.0), ad.constant(1.0))) == 1.0
