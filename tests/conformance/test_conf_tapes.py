"""GradientTape behaviour, written once and run on ad and on TensorFlow.

Each ``case_*`` below is a function of the module ``m``; ``same_on_both``
turns it into a test comparing the two libraries' results (values, dtypes,
shapes, None-ness, error families). Cases named ``*_raises*`` must raise.
"""

from .harness import same_on_both


@same_on_both
def test_gradient_of_watched_constant(m):
    x = m.constant([1.0, 2.0, 3.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.reduce_sum(m.math.sin(x) * x)
    return t.gradient(y, x)


@same_on_both
def test_gradient_of_unwatched_constant_is_none(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        y = x * x
    return t.gradient(y, x)


@same_on_both
def test_unwatched_operand_gets_none(m):
    # divergence (1): only x is watched; c fed the op directly but is unwatched
    x, c = m.constant(3.0), m.constant(5.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * c
    return t.gradient(y, [x, c])


@same_on_both
def test_trainable_variable_is_watched_untrainable_is_not(m):
    v, w = m.Variable(2.0), m.Variable(3.0, trainable=False)
    with m.GradientTape() as t:
        y = v * v * w
    return [t.gradient(y, [v, w]), [x.name for x in t.watched_variables()]]


@same_on_both
def test_gradient_wrt_intermediate(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        h = x * x
        y = m.math.exp(h) + h
    return t.gradient(y, h)


@same_on_both
def test_nested_targets_and_dict_sources(m):
    a, b = m.Variable([1.0, 2.0]), m.Variable(3.0, dtype=m.float64)
    with m.GradientTape() as t:
        ys = {"p": a * 2.0, "q": [m.square(b), m.cast(m.reduce_sum(a), m.float64)]}
    return t.gradient(ys, {"a": a, "b": (b,)})


@same_on_both
def test_output_gradients_weight_the_target(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient(y, x, output_gradients=m.constant([10.0, -1.0]))


@same_on_both
def test_unconnected_gradients_none_and_zero(m):
    x, z = m.Variable([1.0, 2.0]), m.Variable([[3.0]], dtype=m.float64)
    with m.GradientTape(persistent=True) as t:
        y = x * 3.0
    return [t.gradient(y, [x, z]),
            t.gradient(y, [x, z], unconnected_gradients=m.UnconnectedGradients.ZERO),
            t.gradient(y, z, unconnected_gradients="zero")]


@same_on_both
def test_bad_unconnected_gradients_string_raises(m):
    x = m.Variable(1.0)
    with m.GradientTape() as t:
        y = x * 3.0
    return t.gradient(y, x, unconnected_gradients="sometimes")


@same_on_both
def test_second_gradient_call_on_non_persistent_tape_raises(m):
    x = m.Variable(1.0)
    with m.GradientTape() as t:
        y = x * 3.0
    t.gradient(y, x)
    return t.gradient(y, x)


@same_on_both
def test_persistent_tape_gives_several_gradients(m):
    x = m.constant(3.0)
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = y * y
    return [t.gradient(z, x), t.gradient(y, x), t.gradient(z, y)]


@same_on_both
def test_none_target_raises(m):
    x = m.Variable(1.0)
    with m.GradientTape() as t:
        x * 2.0
    return t.gradient(None, x)


@same_on_both
def test_second_order_nested_tapes(m):
    x = m.Variable(1.5)
    with m.GradientTape() as outer:
        with m.GradientTape() as inner:
            y = x * x * x + m.math.sin(x)
        dy = inner.gradient(y, x)
    return [dy, outer.gradient(dy, x)]


@same_on_both
def test_constant_watched_only_by_inner_tape_has_no_second_derivative(m):
    x = m.constant(2.0)
    with m.GradientTape() as outer:
        with m.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy = inner.gradient(y, x)
    return [dy, outer.gradient(dy, x)]


@same_on_both
def test_third_order_through_three_tapes(m):
    x = m.constant(0.7, dtype=m.float64)
    with m.GradientTape() as t3:
        t3.watch(x)
        with m.GradientTape() as t2:
            t2.watch(x)
            with m.GradientTape() as t1:
                t1.watch(x)
                y = m.math.tanh(x) * m.math.exp(x)
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    return [d1, d2, t3.gradient(d2, x)]


@same_on_both
def test_stop_gradient_blocks_one_path(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x + m.stop_gradient(x * x * x)
    return t.gradient(y, x)


@same_on_both
def test_stop_gradient_output_is_not_watched(m):
    # divergence (8)
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        s = m.stop_gradient(x)
        y = s * 3.0
    return t.gradient(y, [x, s])


@same_on_both
def test_ones_like_of_watched_tensor_is_watched(m):
    # divergence (8)
    x = m.constant([2.0, 3.0])
    with m.GradientTape() as t:
        t.watch(x)
        o = m.ones_like(x)
        y = o * 4.0
    return t.gradient(y, [x, o])


@same_on_both
def test_stop_recording_pauses_the_tape(m):
    x = m.Variable(2.0)
    with m.GradientTape(persistent=True) as t:
        y = x * x
        with t.stop_recording():
            z = x * x * x
        w = y + z
    return [t.gradient(w, x), t.gradient(z, x)]


@same_on_both
def test_reset_forgets_what_was_recorded(m):
    x = m.Variable(2.0)
    with m.GradientTape() as t:
        y = x * x * x
        t.reset()
        z = x * x
    return t.gradient(z + y, x)


@same_on_both
def test_watch_accessed_variables_false_watches_only_what_is_asked(m):
    a, b = m.Variable(2.0), m.Variable(3.0)
    with m.GradientTape(watch_accessed_variables=False) as t:
        t.watch(a)
        y = a * b
    return [t.gradient(y, [a, b]), [v.name for v in t.watched_variables()]]


@same_on_both
def test_assign_ends_the_path(m):
    v = m.Variable(2.0)
    x = m.Variable(5.0)
    with m.GradientTape() as t:
        v.assign(x * 3.0)
        y = v * v
    return [t.gradient(y, [v, x]), v]


@same_on_both
def test_rebinding_variable_to_tensor_loses_watching(m):
    x = m.Variable(2.0)
    for _ in range(2):
        with m.GradientTape() as t:
            y = x * x
        g = t.gradient(y, x)
        x = x + 1.0
    return g


@same_on_both
def test_integer_source_gives_none(m):
    x = m.constant(3)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    return [t.gradient(y, x), y]


@same_on_both
def test_integer_variable_gives_none(m):
    x = m.Variable(3)
    with m.GradientTape() as t:
        y = m.cast(x, m.float32) * 2.0
    return t.gradient(y, x)


@same_on_both
def test_two_tapes_at_once(m):
    x = m.constant(3.0)
    with m.GradientTape() as a, m.GradientTape() as b:
        a.watch(x)
        y = x * x
        b.watch(y)
        z = y * 2.0
    return [a.gradient(z, x), b.gradient(z, [x, y])]


@same_on_both
def test_gradient_of_gather_is_dense(m):
    x = m.constant([1.0, 2.0, 3.0, 4.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.gather(x, [0, 2, 2])
    return t.gradient(y, x)


@same_on_both
def test_float64_gradient_keeps_dtype(m):
    x = m.constant([[1.0, -2.0]], dtype=m.float64)
    with m.GradientTape() as t:
        t.watch(x)
        y = m.reduce_mean(m.nn.softplus(x) * m.math.abs(x))
    return t.gradient(y, x)


@same_on_both
def test_complex_gradient_is_conjugated(m):
    # divergence (11)
    x = m.constant(1.0 + 2.0j, dtype=m.complex64)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient(y, x)


@same_on_both
def test_a_watch_inside_stop_recording_does_nothing(m):
    x, v = m.constant(2.0), m.Variable(3.0)
    with m.GradientTape(persistent=True) as t:
        with t.stop_recording():
            t.watch(x)
        y = x * x
    with m.GradientTape(watch_accessed_variables=False) as quiet:
        with quiet.stop_recording():
            quiet.watch(v)
        z = v * v
    return [t.gradient(y, x), quiet.gradient(z, v), len(quiet.watched_variables())]


@same_on_both
def test_a_watch_between_two_blocks_of_a_persistent_tape_does_nothing(m):
    x = m.constant(2.0)
    t = m.GradientTape(persistent=True)
    with t:
        pass
    t.watch(x)
    with t:
        y = x * x
    return t.gradient(y, x)


@same_on_both
def test_another_tapes_stop_recording_does_not_stop_a_watch(m):
    x = m.constant(2.0)
    with m.GradientTape() as outer:
        with m.GradientTape() as inner:
            with inner.stop_recording():
                outer.watch(x)
            y = x * x
    return outer.gradient(y, x)
