"""Signatures: ``ad.TensorSpec``, and turning a call's arguments into a signature key.

``ad.function`` keeps one trace per *signature key*: the structure of the
call's arguments with each tensor replaced by its shape and dtype and each
Python value kept as it is. The key is plain JSON-able data, so a saved
model can store it and a loaded function can pick the trace that matches
a call:

    >>> from autodiff.tracing.signature import bind, describe, describe_text
    >>> describe_text(describe(bind((ad.ones([7, 3]), 2), {}, None, (), "f")))
    '(float32[7, 3], 2)'

With an ``input_signature`` the arguments are first matched to its
TensorSpecs (``bind`` and ``conform``): converted, and checked for dtype and shape,
naming the argument (a TypeError for either, as TensorFlow 2 raises).
"""

import json

import numpy as np

from .. import backend, dtypes, nest
from ..tensor import Tensor, TensorShape, Variable, convert_to_tensor

__all__ = ["TensorSpec", "describe", "describe_text", "key_of", "bind", "conform",
           "is_placeholder", "shape_compatible", "probe_value"]


class TensorSpec:
    """The shape and dtype a tensor argument must have (``tf.TensorSpec``).

    Args:
        shape: a list of ints and None (unknown size), or None (unknown rank).
        dtype: default ``ad.float32``.
        name: optional, for display.

    >>> spec = ad.TensorSpec([None, 3])
    >>> spec.is_compatible_with(ad.zeros([5, 3])), spec.is_compatible_with(ad.zeros([5, 4]))
    (True, False)
    """

    def __init__(self, shape, dtype=dtypes.float32, name=None):
        try:
            self.shape = None if shape is None else TensorShape(shape)
        except (TypeError, ValueError) as err:
            raise type(err)(f"TensorSpec: shape must be a list of ints and None (or None for "
                            f"an unknown rank), got {shape!r} ({err})") from None
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        """The spec of ``tensor`` (its exact shape and dtype)."""
        return cls(tuple(tensor.shape), tensor.dtype, name)

    def is_fully_defined(self):
        return self.shape is not None and None not in self.shape

    def is_compatible_with(self, other):
        """Whether a tensor (or spec) ``other`` fits: same dtype, every known size agrees."""
        shape = other.shape if isinstance(other, TensorSpec) else tuple(other.shape)
        return other.dtype == self.dtype and shape_compatible(self.shape, shape)

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name) == \
            (other.shape, other.dtype, other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype.name, self.name))

    def __repr__(self):
        shape = "<unknown>" if self.shape is None else str(self.shape)
        return f"TensorSpec(shape={shape}, dtype={self.dtype!r}, name={self.name!r})"


def shape_compatible(expected, shape):
    """Whether ``shape`` fits ``expected`` (None: unknown rank; a None size fits any size)."""
    if expected is None or shape is None:
        return True
    return len(expected) == len(shape) and all(e is None or s is None or e == s
                                               for e, s in zip(expected, shape))


def probe_value(spec, size=1):
    """A concrete value for tracing ``spec`` without a call: ``size`` for each unknown size
    (unknown rank: a scalar), filled with fixed pseudo-random numbers (so that tracing does
    not meet log(0) or a singular matrix)."""
    shape = () if spec.shape is None else tuple(size if d is None else d for d in spec.shape)
    dtype = spec.dtype._np
    if spec.dtype.is_floating or spec.dtype.is_complex:
        values = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    else:
        values = np.ones(shape, dtype=dtype)
    return Tensor(backend.xp.asarray(values))


# ---- binding a call to a signature key -----------------------------------------

def describe(structure):
    """The signature key of an argument structure, as JSON-able data.

    Tensors give ``{"tensor": [shape, dtype]}``, Python values ``{"python": value}``;
    a Variable (passed by reference) or another object is identified by ``id``.
    """
    if isinstance(structure, dict):
        return {"dict": [[str(k), describe(structure[k])] for k in sorted(structure)]}
    if isinstance(structure, (list, tuple)):
        return {"list" if isinstance(structure, list) else "tuple": [describe(v) for v in structure]}
    if isinstance(structure, Variable):
        return {"variable": id(structure)}
    if isinstance(structure, Tensor):
        return {"tensor": [list(structure.shape), structure.dtype.name]}
    if structure is None or isinstance(structure, (bool, int, float, str)):
        return {"python": structure}
    return {"object": f"{type(structure).__name__}@{id(structure)}"}


def describe_text(description):
    """A call's key as a reader would write it: ``(float32[7, 3], power=2)``."""
    def text(d):
        ((kind, body),) = d.items()
        if kind == "tensor":
            return f"{body[1]}{body[0]}"
        if kind in ("list", "tuple"):
            inner = ", ".join(map(text, body))
            return f"[{inner}]" if kind == "list" else f"({inner})"
        if kind == "dict":
            return "{" + ", ".join(f"{k!r}: {text(v)}" for k, v in body) + "}"
        return repr(body) if kind == "python" else f"<{kind} {body}>"

    if set(description) == {"list"} and len(description["list"]) == 2:   # [args, kwargs]
        args, kwargs = description["list"]
        parts = [text(a) for a in args.get("list", [])]
        parts += [f"{k}={text(v)}" for k, v in kwargs.get("dict", [])]
        return f"({', '.join(parts)})"
    return text(description)


def key_of(description):
    return json.dumps(description, sort_keys=True)


def is_placeholder(leaf):
    return isinstance(leaf, Tensor) and not isinstance(leaf, Variable)


def bind(args, kwargs, input_signature, arg_names, fn_name):
    """The call as a canonical ``[args, kwargs]`` structure of tensors and Python values.

    Without a signature, NumPy arrays become tensors and everything else is
    kept. With one, the arguments are matched to the specs by position and
    parameter name, converted, and checked.
    """
    if input_signature is None:
        return nest.map_structure(
            lambda v: convert_to_tensor(v) if isinstance(v, (np.ndarray, np.generic)) else v,
            [list(args), dict(kwargs)])
    n = len(input_signature)
    values, kwargs = list(args), dict(kwargs)
    if len(values) > n:
        raise TypeError(f"{fn_name}() takes {n} argument(s) under its input_signature, "
                        f"but {len(values)} were given")
    for name in arg_names[len(values):n]:
        if name not in kwargs:
            raise TypeError(f"{fn_name}() missing required argument {name!r} "
                            f"(input_signature {list(input_signature)})")
        values.append(kwargs.pop(name))
    if kwargs:
        raise TypeError(f"{fn_name}() got unexpected keyword argument(s) {sorted(kwargs)} "
                        f"(input_signature covers {list(arg_names[:n])})")
    names = list(arg_names[:n]) + [f"#{i}" for i in range(len(arg_names), n)]
    return [[conform(v, spec, name, fn_name) for v, spec, name in zip(values, input_signature, names)],
            {}]


def conform(value, spec, arg_name, fn_name):
    """``value`` converted to fit ``spec`` (a TensorSpec or a nested structure of them)."""
    if not isinstance(spec, TensorSpec):
        leaves, specs = nest.flatten(value), nest.flatten(spec)
        if len(leaves) != len(specs):
            raise TypeError(f"{fn_name}: argument {arg_name!r} has {len(leaves)} leaves, but its "
                            f"input_signature entry {spec!r} has {len(specs)}")
        return nest.pack_sequence_as(spec, [conform(v, s, arg_name, fn_name)
                                            for v, s in zip(leaves, specs)])
    if isinstance(value, Tensor):
        tensor = convert_to_tensor(value)  # a Variable is read
        if tensor.dtype != spec.dtype:
            raise TypeError(f"{fn_name}: argument {arg_name!r} has dtype {tensor.dtype.name}, "
                            f"but the input_signature expects {spec!r}")
    else:
        try:
            tensor = convert_to_tensor(value, dtype=spec.dtype)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{fn_name}: argument {arg_name!r} = {value!r} cannot be converted "
                            f"to {spec!r}: {err}") from None
    if not shape_compatible(spec.shape, tuple(tensor.shape)):
        raise TypeError(f"{fn_name}: argument {arg_name!r} has shape {tuple(tensor.shape)}, "
                        f"which is incompatible with the input_signature's {spec!r}")
    return tensor
