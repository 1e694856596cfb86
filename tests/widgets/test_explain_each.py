"""``explain_each``: the lost-gradient explanations of several sources of one tape,
with the sweeps they share made once, answer exactly what ``explain_none_gradient``
answers source by source: the same reason, sentence and path, and the same names
(the caller's, when none are given)."""

import warnings

import autodiff as ad
from widgets.explain import explain_none_gradient
from widgets.explain.none_gradient import explain_each


def _gradient(tape, target, source):
    with warnings.catch_warnings():   # (a None gradient warns; here it is expected)
        warnings.simplefilter("ignore", ad.AutodiffWarning)
        return tape.gradient(target, source)


def test_explain_each_answers_what_explain_none_gradient_answers_source_by_source():
    # one tape, several None gradients for different reasons: the sweeps shared between
    # the sources must not change any answer
    w = ad.Variable([1.0, 2.0], name="w")
    frozen = ad.Variable(1.0, name="frozen", trainable=False)
    cut = ad.Variable(3.0, name="cut")
    cut2 = ad.Variable(4.0, name="cut2")
    stopped = ad.Variable(0.5, name="stopped")
    x = ad.constant(2.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = ad.reduce_sum(w * x) + frozen
        back = ad.constant((cut * 1.0).numpy() * 2.0)      # the value left the library
        back2 = ad.constant((cut2 + 1.0).numpy())
        y = h * back * back2 + ad.stop_gradient(stopped * 3.0) + ad.constant(1.0)
    sources = [frozen, cut, stopped, cut2, w, x, "not a tensor"]
    names = ["f", "c", "s", "c2", "w", "x", "?"]
    got = explain_each(tape, y, sources, source_names=names, target_name="loss")
    for source, name, answer in zip(sources, names, got):
        try:
            want = explain_none_gradient(tape, y, source, source_name=name, target_name="loss")
        except TypeError as exc:
            assert isinstance(answer, TypeError) and str(answer) == str(exc)
            continue
        assert (answer.reason, answer.message, answer.path) == (want.reason, want.message,
                                                                 want.path)
    reasons = [a.reason for a in got[:6]]
    assert reasons == ["not_trainable", "not_recorded", "stop_gradient", "not_recorded",
                       "not_none", "not_none"]
    assert "c2" in got[3].message and isinstance(got[6], TypeError)
    assert _gradient(tape, y, cut) is None and _gradient(tape, y, stopped) is None


def test_unnamed_sources_and_target_take_the_callers_names_as_one_by_one():
    weight = ad.Variable([1.0, 2.0], trainable=False)
    cut = ad.Variable(3.0)
    with ad.GradientTape(persistent=True) as tape:
        loss = ad.reduce_sum(weight * 2.0) + ad.constant((cut * 1.0).numpy())
    got = explain_each(tape, loss, [weight, cut])
    want = [explain_none_gradient(tape, loss, weight), explain_none_gradient(tape, loss, cut)]
    assert [(a.reason, a.message) for a in got] == [(b.reason, b.message) for b in want]
    assert got[0].message.startswith("weight is a Variable created with trainable=False")
    assert "cut" in got[1].message and "loss" in got[1].message
