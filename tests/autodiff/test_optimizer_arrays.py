"""The optimizers' array rules equal their op-by-op form, bit for bit.

The built-in optimizers take each variable's step as a few in-place array
operations (``_update_arrays``). Keras 3 writes the same rules with ops, one
``assign`` per slot. Here each rule is also written that way, with this
library's ops, as a subclass overriding ``update_step`` (which is also how a
user's own optimizer plugs in), and both are stepped on generated variables
and gradients: every variable and slot must be equal bit for bit, eager and
compiled.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import autodiff as ad



def _scalar(value, variable):
    """A hyperparameter as Keras casts it: a 0-d tensor of the variable's dtype."""
    if isinstance(value, ad.Tensor):
        return ad.cast(value, variable.dtype)
    return ad.convert_to_tensor(value, dtype=variable.dtype)


class OpsAdam(ad.optimizers.Adam):
    """Keras 3's Adam, written with ops."""

    def update_step(self, gradient, variable, learning_rate):
        step = _scalar(self.iterations + 1, variable)
        one = _scalar(1.0, variable)
        alpha = _scalar(learning_rate, variable) * ad.sqrt(
            one - _scalar(self.beta_2, variable) ** step) / (
            one - _scalar(self.beta_1, variable) ** step)
        m, v = self.slot(variable, "momentum"), self.slot(variable, "velocity")
        m.assign_add((gradient - m) * (1 - self.beta_1))
        v.assign_add((ad.square(gradient) - v) * (1 - self.beta_2))
        if self.amsgrad:
            v_hat = self.slot(variable, "velocity_hat")
            v_hat.assign(ad.maximum(v_hat, v))
            v = v_hat
        variable.assign_sub((m * alpha) / (ad.sqrt(v) + self.epsilon))


class OpsSGD(ad.optimizers.SGD):
    """Keras 3's SGD with (Nesterov) momentum, written with ops."""

    def update_step(self, gradient, variable, learning_rate):
        lr, momentum = _scalar(learning_rate, variable), _scalar(self.momentum, variable)
        m = self.slot(variable, "momentum")
        m.assign(m * momentum - gradient * lr)
        variable.assign_add(m * momentum - gradient * lr if self.nesterov else m)


class OpsRMSprop(ad.optimizers.RMSprop):
    """Keras 3's centered RMSprop with momentum, written with ops."""

    def update_step(self, gradient, variable, learning_rate):
        rho = self.rho
        velocity, average = self.slot(variable, "velocity"), self.slot(variable,
                                                                       "average_gradient")
        velocity.assign(velocity * rho + ad.square(gradient) * (1 - rho))
        average.assign(average * rho + gradient * (1 - rho))
        denominator = velocity - ad.square(average) + self.epsilon
        increment = gradient * _scalar(learning_rate, variable) / ad.sqrt(denominator)
        momentum = self.slot(variable, "momentum")
        momentum.assign(momentum * self.momentum + increment)
        variable.assign_sub(momentum)


PAIRS = {
    "adam": (lambda: ad.optimizers.Adam(0.05), lambda: OpsAdam(0.05)),
    "amsgrad_decay": (lambda: ad.optimizers.AdamW(0.05, amsgrad=True, weight_decay=0.1),
                      lambda: OpsAdam(0.05, amsgrad=True, weight_decay=0.1)),
    "nesterov_schedule": (
        lambda: ad.optimizers.SGD(ad.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5),
                                  momentum=0.8, nesterov=True),
        lambda: OpsSGD(ad.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5),
                       momentum=0.8, nesterov=True)),
    "rmsprop_centered": (lambda: ad.optimizers.RMSprop(0.01, momentum=0.5, centered=True),
                         lambda: OpsRMSprop(0.01, momentum=0.5, centered=True)),
}


def _train(make, shapes, dtype, steps, seed, compiled):
    rng = np.random.default_rng(seed)
    variables = [ad.Variable(rng.normal(size=s).astype(dtype)) for s in shapes]
    grads = [[ad.constant(rng.normal(size=s).astype(dtype)) for s in shapes]
             for _ in range(steps)]
    optimizer = make()

    def step(*gs):
        optimizer.apply_gradients(zip(gs, variables))

    if compiled:
        step = ad.function(step, jit_compile=True)
    for gs in grads:
        step(*gs)
    return [v.numpy() for v in variables + optimizer.variables]


@settings(max_examples=25, deadline=None)
@given(pair=st.sampled_from(sorted(PAIRS)), dtype=st.sampled_from(["float32", "float64"]),
       shapes=st.lists(st.sampled_from([(), (3,), (2, 3), (4, 1)]), min_size=1, max_size=3),
       steps=st.integers(1, 4), seed=st.integers(0, 2**16), compiled=st.booleans())
def test_array_rules_equal_the_op_by_op_rules_bit_for_bit(pair, dtype, shapes, steps, seed,
                                                          compiled):
    arrays, ops = PAIRS[pair]
    got = _train(arrays, shapes, dtype, steps, seed, compiled)
    want = _train(ops, shapes, dtype, steps, seed, compiled=False)
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b, err_msg=f"{pair}: variable #{k}")


def test_a_subclass_update_step_is_the_rule_that_runs():
    class Halving(ad.optimizers.SGD):
        def update_step(self, gradient, variable, learning_rate):
            variable.assign(variable * 0.5)

    w = ad.Variable([4.0, -2.0])
    Halving(0.1).apply_gradients([(ad.constant([1.0, 1.0]), w)])
    np.testing.assert_array_equal(w.numpy(), [2.0, -1.0])


def test_a_snapshot_read_before_a_step_keeps_its_value():
    w = ad.Variable([1.0, 2.0])
    before = w.read_value()
    optimizer = ad.optimizers.Adam(0.1)
    optimizer.apply_gradients([(ad.constant([1.0, 1.0]), w)])
    slot_before = optimizer.variables[-1].read_value()
    optimizer.apply_gradients([(ad.constant([1.0, 1.0]), w)])
    np.testing.assert_array_equal(before.numpy(), [1.0, 2.0])
    assert not np.array_equal(slot_before.numpy(), optimizer.variables[-1].numpy())
    np.testing.assert_allclose(w.numpy(), [0.8, 1.8], rtol=1e-5)


def test_values_and_slots_assigned_between_steps_are_the_ones_stepped():
    """A group's next step reads the last step's flat arrays only while every value and
    slot is still its view (flat_step.py): a value and a slot assigned in between
    (``assign``, ``assign_add``: each stores a new array) step as the op-by-op rule
    steps them."""
    def run(make):
        a, b = ad.Variable([1.0, -2.0, 0.5]), ad.Variable([[3.0], [0.25]])
        optimizer = make()
        grads = [ad.constant([0.1, 0.2, -0.3]), ad.constant([[1.0], [-1.0]])]
        optimizer.apply_gradients(zip(grads, [a, b]))
        optimizer.apply_gradients(zip(grads, [a, b]))      # reads the flat arrays
        a.assign([5.0, 6.0, 7.0])                           # a new value
        optimizer.slot(b, "momentum").assign([[0.5], [0.5]])
        b.assign_add([[1.0], [1.0]])
        optimizer.apply_gradients(zip(grads, [a, b]))
        optimizer.apply_gradients(zip(grads, [a, b]))
        return [v.numpy() for v in [a, b] + optimizer.variables]

    got, want = run(lambda: ad.optimizers.Adam(0.1)), run(lambda: OpsAdam(0.1))
    assert len(got) == len(want)
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(got[0], [5.0, 6.0, 7.0])    # the steps after it moved a



def test_an_optimizer_stepping_ever_new_groups_keeps_a_bounded_number_of_them():
    """The flat arrays are kept per group of variables (flat_step.py); a model stepping
    many groups in turn (more than are kept), or ever new variables, holds only the last
    KEPT_GROUPS groups, and its steps still equal the op-by-op rule's."""
    from autodiff.models.optimizers.flat_step import KEPT_GROUPS

    def run(make):
        variables = [ad.Variable([float(k), -1.0]) for k in range(KEPT_GROUPS + 3)]
        optimizer = make()
        for step in range(3):
            for k in range(len(variables) - 1):   # pairs (k, k+1): each its own group
                pair = variables[k:k + 2]
                optimizer.apply_gradients([(ad.constant([0.5, -0.25 * step]), v) for v in pair])
        return optimizer, [v.numpy() for v in variables] + [v.numpy() for v in optimizer.variables]

    (optimizer, got), (_, want) = run(lambda: ad.optimizers.Adam(0.1)), run(lambda: OpsAdam(0.1))
    assert len(optimizer._flat_views) == KEPT_GROUPS
    assert len(got) == len(want)
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)
