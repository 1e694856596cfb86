"""No aliasing: an op's result is a new tensor wherever TensorFlow's is (issue 33, item 4).

When an op returns its input itself, a gradient with respect to the result
also counts every other use of the input: ``z = 3 * x + op(x)`` gives
``dz/d op(x) = 4`` instead of 1. TensorFlow does that on purpose in a few
places (``cast`` to the same dtype, ``real``/``conj`` of a real tensor,
``dropout`` with rate 0, ``convert_to_tensor``, ``add_n`` of one unnamed tensor); everywhere else its result is
a new tensor. Two tests:

- ``test_result_is_aliased_exactly_where_tensorflow_aliases``: a table of
  calls that leave the value unchanged (the fast paths an engine is tempted to
  take), each run here and in TensorFlow: same ``y is x``, same gradient.
- ``test_no_public_op_returns_its_input``: every public op of ``ad``,
  ``ad.math`` and ``ad.nn`` that accepts one float tensor is called with one;
  its result must not be the input, outside the table's TensorFlow exceptions.
"""

import inspect

import numpy as np
import pytest

import autodiff as ad

# name -> (call on a [2, 3] float32 tensor x, with xp = ad or tf)
UNCHANGED_VALUE_CALLS = {
    "broadcast_to same shape": lambda xp, x: xp.broadcast_to(x, [2, 3]),
    "reshape same shape": lambda xp, x: xp.reshape(x, [2, 3]),
    "transpose identity perm": lambda xp, x: xp.transpose(x, [0, 1]),
    "squeeze nothing": lambda xp, x: xp.squeeze(x),
    "tile ones": lambda xp, x: xp.tile(x, [1, 1]),
    "pad zeros": lambda xp, x: xp.pad(x, [[0, 0], [0, 0]]),
    "slice everything": lambda xp, x: x[:, :],
    "concat of one": lambda xp, x: xp.concat([x], 0),
    "add_n of one": lambda xp, x: xp.add_n([x]),
    "identity": lambda xp, x: xp.identity(x),
    "cast same dtype": lambda xp, x: xp.cast(x, xp.float32),
    "real of real": lambda xp, x: xp.math.real(x),
    "conj of real": lambda xp, x: xp.math.conj(x),
    "dropout rate 0": lambda xp, x: xp.nn.dropout(x, 0.0),
    "convert_to_tensor": lambda xp, x: xp.convert_to_tensor(x),
    "reduce_sum over no axis": lambda xp, x: xp.reduce_sum(x, axis=[]),
    "clip_by_value wide": lambda xp, x: xp.clip_by_value(x, -1e9, 1e9),
    "clip_by_norm large": lambda xp, x: xp.clip_by_norm(x, 1e9),
    "gather all rows": lambda xp, x: xp.gather(x, [0, 1]),
    "reverse no axis": lambda xp, x: xp.reverse(x, []),
    "roll by 0": lambda xp, x: xp.roll(x, 0, 0),
    "einsum ij->ij": lambda xp, x: xp.einsum("ij->ij", x),
    "stop_gradient": lambda xp, x: xp.stop_gradient(x),
    "split in one": lambda xp, x: xp.split(x, 1, 0)[0],
    "stack of unstack": lambda xp, x: xp.stack(xp.unstack(x)),
}

# Where TensorFlow 2 returns the input itself (checked against it below).
TENSORFLOW_ALIASES = {"cast same dtype", "real of real", "conj of real", "dropout rate 0",
                      "convert_to_tensor", "add_n of one"}


def _gradient_of_result(xp, call, x):
    """``d(3x + y)/dy`` for ``y = call(x)``, and whether ``y`` is ``x``."""
    with xp.GradientTape() as tape:
        tape.watch(x)
        y = call(xp, x)
        tape.watch(y)
        z = xp.reduce_sum(3.0 * x + y)
    gradient = tape.gradient(z, y)
    return y is x, None if gradient is None else np.asarray(gradient)


@pytest.mark.parametrize("name", sorted(UNCHANGED_VALUE_CALLS))
def test_result_is_aliased_exactly_where_tensorflow_aliases(tf, name):
    call = UNCHANGED_VALUE_CALLS[name]
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    ours = _gradient_of_result(ad, call, ad.constant(value))
    theirs = _gradient_of_result(tf, call, tf.constant(value))
    assert ours[0] == theirs[0] == (name in TENSORFLOW_ALIASES), (name, ours[0], theirs[0])
    if theirs[1] is None:
        assert ours[1] is None, name
    else:
        np.testing.assert_array_equal(ours[1], theirs[1], err_msg=name)


def _public_ops():
    """``(label, function)`` for every public function of ad, ad.math and ad.nn."""
    seen = {}
    for prefix, module in (("ad", ad), ("ad.math", ad.math), ("ad.nn", ad.nn)):
        for name in sorted(dir(module)):
            function = getattr(module, name)
            if name.startswith("_") or not inspect.isfunction(function):
                continue
            seen.setdefault(function, f"{prefix}.{name}")
    return sorted((label, function) for function, label in seen.items())


# The public functions TensorFlow itself lets return their input unchanged, and
# ad.to_backend (no TensorFlow counterpart: moving a tensor where it already is moves nothing).
ALIASING_FUNCTIONS = {"ad.cast", "ad.math.real", "ad.math.conj", "ad.conj",
                      "ad.convert_to_tensor", "ad.nn.dropout", "ad.add_n", "ad.to_backend"}


def test_no_public_op_returns_its_input():
    x = ad.constant(np.arange(1, 7, dtype=np.float32).reshape(2, 3) / 7)
    called, aliasing = [], []
    for label, function in _public_ops():
        try:
            with ad.GradientTape():
                y = function(x)
        except Exception:  # noqa: BLE001 - this op needs more than one tensor argument
            continue
        called.append(label)
        if y is x and label not in ALIASING_FUNCTIONS:
            aliasing.append(label)
    assert len(called) > 60, f"only {len(called)} public ops took one tensor: {called}"
    assert not aliasing, f"these ops return their input itself: {aliasing}"
