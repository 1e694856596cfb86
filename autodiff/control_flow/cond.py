"""``ad.cond`` and ``ad.switch_case``: run one of several functions, chosen by a tensor.

    >>> x = ad.constant(3.0)
    >>> float(ad.cond(x > 0, lambda: x * 2, lambda: -x))
    6.0
    >>> ad.switch_case(ad.constant(1), [lambda: 10.0, lambda: 20.0])   # eagerly: what ran
    20.0

Eagerly they are Python's ``if``: only the chosen function runs. Inside
``ad.function`` both (or all) functions are traced into subgraphs and the
choice becomes one ``If`` (``Case``) node that decides on every call
(``staged.py``); the branches must then return the same structure of
tensors with the same dtypes (shapes may differ), as in TensorFlow.
Gradients flow through the branch that ran, in every mode and order.
"""

from .. import backend, dtypes, nest
from ..tensor import Tensor, convert_to_tensor
from .branch_arrays import arrays_again, trace_branches
from .staged import current_tracer, is_staged_value, stage, trace_function

__all__ = ["cond", "switch_case"]


def cond(pred, true_fn=None, false_fn=None, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()`` (``tf.cond``).

    Args:
        pred: a scalar boolean tensor (or a Python bool).
        true_fn, false_fn: functions of no arguments returning tensors
            (nested structures allowed); inside ``ad.function`` both must
            return the same structure and dtypes.

    Raises:
        TypeError: a function is not callable; inside ``ad.function``, ``pred`` is
            not boolean or the branches return different dtypes.
        ValueError: inside ``ad.function``, ``pred`` is not a scalar, or the
            branches return different structures.
    """
    for arg, fn in (("true_fn", true_fn), ("false_fn", false_fn)):
        if not callable(fn):
            raise TypeError(f"'{arg}' must be callable.")
    if not is_staged_value(pred):
        return true_fn() if _truth(pred, "cond") else false_fn()
    pred = _scalar_bool(pred, "cond", "pred")
    fns, labels = (true_fn, false_fn), ("true_fn", "false_fn")
    branches, arrays = trace_branches(   # a TensorArray leaves a branch as its buffer
        lambda k, finish: trace_function(lambda: finish(fns[k]()), (), labels[k]), 2)
    _same_outputs(branches, "cond", "true_fn and false_fn arguments to ad.cond")
    return arrays_again(arrays, stage(
        "If", lambda tensors, fns: fns[0]() if _truth(tensors[0], "If") else fns[1](),
        [pred], branches, branches[0].outputs))


def switch_case(branch_index, branch_fns, default=None, name=None):
    """Runs ``branch_fns[branch_index]()`` (``tf.switch_case``).

    Args:
        branch_index: a scalar int32 or int64 tensor.
        branch_fns: a list of functions, or a dict ``{int: function}`` whose keys
            are ``0 .. n-1``, or a list of ``(int, function)`` pairs.
        default: run when the index is out of range; without it the last branch runs
            (as in TensorFlow).

    Raises:
        TypeError: ``branch_index`` is not an integer tensor, or a branch is not callable.
        ValueError: no branches, or keys that are not ``0 .. n-1``.

    >>> ad.switch_case(ad.constant(7), [lambda: 1.0, lambda: 2.0])   # out of range
    2.0
    """
    if not isinstance(branch_index, Tensor):
        raise TypeError(f"'branch_index' must be a Tensor, got {type(branch_index)}")
    if not branch_index.dtype.is_integer:
        raise TypeError(f"'branch_index' must be an integer Tensor, got {branch_index.dtype!r}")
    fns = _branch_list(branch_fns)
    if default is not None:
        if not callable(default):
            raise TypeError("default must be callable.")
        fns = fns + [default]
    if tuple(branch_index.shape) != ():
        raise ValueError(f"switch_case: branch_index must be a scalar, got shape "
                         f"{tuple(branch_index.shape)}")
    if current_tracer() is None or not is_staged_value(branch_index):
        return fns[_chosen(branch_index, len(fns))]()
    branches = [trace_function(fn, (), f"branch {k}") for k, fn in enumerate(fns)]
    _same_outputs(branches, "switch_case", "branch_fns arguments to ad.switch_case")
    return stage("Case", lambda tensors, calls: calls[_chosen(tensors[0], len(calls))](),
                 [branch_index], branches, branches[0].outputs)


def _branch_list(branch_fns):
    if isinstance(branch_fns, dict):
        items = sorted(branch_fns.items())
    elif isinstance(branch_fns, (list, tuple)) and branch_fns and \
            all(isinstance(b, (list, tuple)) and len(b) == 2 for b in branch_fns):
        items = sorted(branch_fns)
    elif isinstance(branch_fns, (list, tuple)):
        items = list(enumerate(branch_fns))
    else:
        raise TypeError(f"branch_fns must be a list, tuple, or dict, got {branch_fns!r}")
    if not items:
        raise ValueError("Must provide at least one item in branch_fns")
    keys = [k for k, _ in items]
    if keys != list(range(len(items))):
        raise ValueError(f"branch indices (keys) must form contiguous range of [0 to "
                         f"{len(items)}) but found {keys}")
    for k, fn in items:
        if not callable(fn):
            raise TypeError(f"br_fn must be callable. (branch {k}: {fn!r})")
    return [fn for _, fn in items]


def _chosen(index, n):
    """The branch to run: ``index``, or the last one (the default) when out of range."""
    k = int(index)
    return k if 0 <= k < n else n - 1


def _truth(pred, op):
    """``pred`` as a Python bool (a tensor must have exactly one element)."""
    if isinstance(pred, Tensor):
        if pred._value.size != 1:
            raise ValueError(f"{op}: the truth value of a tensor with more than one element is "
                             f"ambiguous (pred has shape {tuple(pred.shape)}); reduce it with "
                             f"ad.reduce_all or ad.reduce_any")
        return bool(backend.host_scalar(pred._value))   # one value to the host
    return bool(pred)


def _scalar_bool(pred, op, arg):
    pred = convert_to_tensor(pred)
    if pred.dtype != dtypes.bool:
        raise TypeError(f"{op}: {arg} must be a boolean tensor inside ad.function, got "
                        f"{pred.dtype.name} (compare it: x > 0)")
    if tuple(pred.shape) != ():
        raise ValueError(f"{op}: {arg} must be a scalar inside ad.function, got shape "
                         f"{tuple(pred.shape)}; reduce it with ad.reduce_all or ad.reduce_any")
    return pred


def _same_outputs(branches, op, who):
    """TensorFlow's check that staged branches return alike: structure (ValueError), dtypes
    (TypeError); shapes may differ."""
    first = branches[0]
    for other in branches[1:]:
        described = f"{first.label} output: {first.outputs!r}\n{other.label} output: " \
                    f"{other.outputs!r}"
        try:
            same = _structure(first.outputs) == _structure(other.outputs)
        except TypeError:
            same = False
        if not same:
            raise ValueError(f"{op}: {who} must have the same number, type, and overall "
                             f"structure of return values.\n{described}")
        for a, b in zip(nest.flatten(first.outputs), nest.flatten(other.outputs)):
            if (a is None) != (b is None) or (a is not None and a.dtype != b.dtype):
                raise TypeError(f"{op}: {who} must have the same number, type, and overall "
                                f"structure of return values (dtypes differ: "
                                f"{_dtype(a)} and {_dtype(b)}).\n{described}")


def _structure(structure):
    """The shape of a nested structure with its leaves blanked (for comparing two)."""
    return nest.pack_sequence_as(structure, ["." if leaf is not None else None
                                             for leaf in nest.flatten(structure)]) \
        if nest.flatten(structure) != [structure] else ("leaf" if structure is not None else None)


def _dtype(t):
    return "None" if t is None else t.dtype.name
