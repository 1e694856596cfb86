"""Custom gradients, run on ad and on TensorFlow (each body a function of ``m``)."""

from .harness import same_on_both


def _clip_grad(m):
    @m.custom_gradient
    def clip_gradient(x):
        def grad(dy):
            return m.clip_by_value(dy, -0.5, 0.5)
        return m.identity(x), grad
    return clip_gradient


@same_on_both
def test_custom_gradient_replaces_the_rule(m):
    f = _clip_grad(m)
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = f(x * 3.0)
    return [y, t.gradient(y, x)]


@same_on_both
def test_custom_gradient_stable_log1pexp(m):
    @m.custom_gradient
    def log1pexp(x):
        e = m.exp(x)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return m.math.log(1 + e), grad

    x = m.constant([0.0, 100.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = log1pexp(x)
    return t.gradient(y, x)


@same_on_both
def test_custom_gradient_with_captured_variable(m):
    v = m.Variable(2.0)

    @m.custom_gradient
    def scale(x):
        def grad(dy, variables=None):
            return dy * v * 10.0, [dy * x * 100.0]
        return x * v, grad

    x = m.constant(3.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = scale(x)
    return t.gradient(y, [x, v])


@same_on_both
def test_custom_gradient_reading_variables_without_variables_arg_raises(m):
    v = m.Variable(2.0)

    @m.custom_gradient
    def scale(x):
        def grad(dy):
            return dy * v
        return x * v, grad

    x = m.constant(3.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = scale(x)
    return t.gradient(y, x)


@same_on_both
def test_nested_custom_gradients_with_captured_variables(m):
    v = m.Variable(1.5)
    w = m.Variable(-2.0)

    @m.custom_gradient
    def inner(x):
        def grad(dy, variables=None):
            return dy * w * 2.0, [dy * 7.0]
        return x * w, grad

    @m.custom_gradient
    def outer(x):
        y = inner(x) * v

        def grad(dy, variables=None):
            return dy * 3.0, [dy * 5.0 for _ in variables]
        return y, grad

    x = m.constant(4.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = outer(x)
    return [y, t.gradient(y, [x, v, w])]


@same_on_both
def test_custom_gradient_second_order(m):
    @m.custom_gradient
    def square(x):
        def grad(dy):
            return dy * 2.0 * x
        return x * x, grad

    x = m.constant(3.0)
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = square(x)
        g = inner.gradient(y, x)
    return [g, outer.gradient(g, x)]


@same_on_both
def test_custom_gradient_where_no_tape_watches_inputs(m):
    # divergence (2): nothing watches x, so the custom op is not recorded;
    # the ops inside run as usual and the tape that watches c records them
    c = m.constant(2.0)

    @m.custom_gradient
    def f(x):
        def grad(dy):
            return dy * 1000.0
        return x * c, grad

    x = m.constant(3.0)
    with m.GradientTape() as t:
        t.watch(c)
        y = f(x)
    return t.gradient(y, [c, x])


@same_on_both
def test_custom_gradient_multiple_inputs_and_outputs(m):
    @m.custom_gradient
    def two(a, b):
        def grad(da, db):
            return da + db, da - db
        return [a * b, a + b], grad

    a, b = m.constant(2.0), m.constant(5.0)
    with m.GradientTape() as t:
        t.watch([a, b])
        p, s = two(a, b)
        y = p * 2.0 + s
    return t.gradient(y, [a, b])


@same_on_both
def test_custom_gradient_in_jacobian(m):
    f = _clip_grad(m)
    x = m.constant([1.0, 2.0, 3.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = f(x * x)
    return t.jacobian(y, x)
