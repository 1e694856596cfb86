"""Einsum: Einstein summation over any number of operands, and its VJP.

The gradient of one operand is itself an einsum: the cotangent ``g`` and the
*other* operands, contracted back to that operand's subscripts. For
``C = einsum('ij,jk->ik', A, B)``:

    dA = einsum('ik,jk->ij', g, B)        dB = einsum('ij,ik->jk', A, g)

Three things need care, all handled by adding constant operands to that
one einsum:

- a letter that occurs only in this operand was summed away; its gradient is
  ``g`` copied along it: an operand ``ones(n)`` puts the letter back;
- a letter repeated in one operand (``'ii->i'`` reads a diagonal) cannot be
  repeated in an einsum's output: the einsum gives the gradient with the
  letter once, and ``EmbedDiagonal`` writes it onto the diagonal, zeros
  elsewhere. (Multiplying by an identity matrix would do the same until a
  NaN or an infinity sits off the diagonal: 0 * NaN is NaN, so the second
  derivative would turn NaN where TensorFlow's, which never reads those
  entries, is 0.) The two ops are each other's gradient: reading a
  diagonal is an einsum with the repeated letter;
- an ellipsis axis of size 1 that broadcast against a larger one is summed
  away and put back as size 1 by a reshape.

Batch axes on ``g`` get fresh letters in front of g's subscripts and of the
result's, so a stack of cotangents passes through the same single einsum.
"""

import functools
import string

from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import convert_to_tensor

__all__ = ["einsum"]

_LETTERS = string.ascii_letters


def _fail(equation, shapes, what):
    raise InvalidArgumentError(
        f"Einsum: {what} (equation '{equation}', operand shapes "
        f"{', '.join(str(tuple(s)) for s in shapes)})")


@functools.lru_cache(maxsize=512)
def parse(equation, shapes, strict=True):
    """Explicit subscripts for ``equation`` applied to operands of ``shapes``.

    Returns ``(terms, output, sizes)``: one subscript string per operand and
    one for the output, with every ``...`` replaced by fresh letters (aligned
    on the right, as broadcasting aligns shapes), and each letter's size.
    ``strict`` (TensorFlow's rule, for users' equations) lets only ellipsis
    axes broadcast; the gradient einsums, whose ellipsis axes have become
    letters, let a size-1 axis of any letter broadcast, as NumPy does.

    >>> from autodiff.ops.einsum import parse
    >>> parse('...ij,jk->...ik', ((5, 2, 3), (3, 4)))
    (('aij', 'jk'), 'aik', {'a': 5, 'i': 2, 'j': 3, 'k': 4})
    """
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    if "->" in out:
        _fail(equation, shapes, "more than one '->'")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        _fail(equation, shapes, f"{len(terms)} input subscripts for {len(shapes)} operands")
    for term in terms + [out]:
        rest = term.replace("...", "", 1)
        if any(c not in _LETTERS for c in rest):
            _fail(equation, shapes, f"invalid subscripts '{term}' (letters and one '...' only)")
    named = {c for c in eq if c in _LETTERS}
    fresh = [c for c in _LETTERS if c not in named]
    n_ellipsis = 0
    for term, shape in zip(terms, shapes):
        n_named = len(term.replace("...", ""))
        if "..." in term:
            n_ellipsis = max(n_ellipsis, len(shape) - n_named)
        if len(shape) < n_named or ("..." not in term and len(shape) != n_named):
            _fail(equation, shapes, f"subscripts '{term}' do not match an operand of rank "
                                    f"{len(shape)}")
    ellipsis = "".join(fresh[:n_ellipsis])
    explicit = []
    for term, shape in zip(terms, shapes):
        k = len(shape) - len(term.replace("...", ""))
        explicit.append(term.replace("...", ellipsis[n_ellipsis - k:] if k else ""))
    sizes = {}
    for term, shape in zip(explicit, shapes):
        for c, d in zip(term, shape):
            known = sizes.get(c)
            may_broadcast = not strict or c in ellipsis
            if known is None or known == 1 and may_broadcast:
                sizes[c] = d
            elif known != d and not (may_broadcast and d == 1):
                _fail(equation, shapes, f"dimension '{c}' has sizes {known} and {d}")
    if arrow:
        if n_ellipsis and "..." not in out:
            _fail(equation, shapes, "the output needs '...' for the ellipsis dimensions")
        output = out.replace("...", ellipsis)
    else:   # implicit mode, as NumPy: letters used once, in alphabetical order
        counts = "".join(explicit)
        output = ellipsis + "".join(sorted(c for c in named if counts.count(c) == 1))
    if len(set(output)) != len(output) or any(c not in sizes for c in output):
        _fail(equation, shapes, f"output subscripts '{out}' must be distinct letters of the inputs")
    return tuple(explicit), output, sizes


def _einsum_forward(xp, *operands, equation):
    parse(equation, tuple(x.shape for x in operands), strict=False)   # messages naming it
    return xp.einsum(equation, *operands)


def _operand_grad(i, g, operands, terms, output, sizes, fresh):
    """The gradient of operand ``i``: one einsum of g, the others and constants."""
    x = operands[i]
    batch = "".join(next(fresh) for _ in range(g._value.ndim - len(output)))
    subs = [batch + output] + [t for j, t in enumerate(terms) if j != i]
    args = [g] + [o for j, o in enumerate(operands) if j != i]
    result = ""                             # x's letters, each once, that the gradient keeps
    for c, d in zip(terms[i], x._value.shape):
        if c in result or (d == 1 and sizes[c] != 1):   # a diagonal, or a broadcast axis
            continue
        result += c
    covered = set("".join(subs))
    for c in result:
        if c not in covered:                # summed away inside this operand only
            subs.append(c)
            args.append(ones((sizes[c],), dtype=g.dtype))
            covered.add(c)
    equation = ",".join(subs) + "->" + batch + result
    grad = g if equation == f"{batch + result}->{batch + result}" else EINSUM(*args,
                                                                              equation=equation)
    shape = g._value.shape[:len(batch)] + x._value.shape
    if len(set(terms[i])) < len(terms[i]):  # a repeated letter: onto the diagonal
        return EMBED_DIAGONAL(grad, source=batch + result, target=batch + terms[i], shape=shape)
    return grad if grad._value.shape == shape else reshape(grad, shape)


def _embed_diagonal_forward(xp, v, source, target, shape):
    """Zeros of ``shape`` with ``v`` written where the ``target`` letters agree."""
    out = xp.zeros(shape, dtype=v.dtype)
    index = []
    for c, d in zip(target, shape):
        if c not in source:                 # a broadcast axis of size 1
            index.append(0)
            continue
        k = source.index(c)
        index.append(xp.arange(d).reshape([-1 if j == k else 1 for j in range(len(source))]))
    out[tuple(index)] = v
    return out


def _embed_diagonal_vjp(g, ans, v, source, target, shape):
    """Read the diagonal back: an einsum with the repeated letters (batch axes in front)."""
    fresh = (c for c in _LETTERS if c not in target)
    batch = "".join(next(fresh) for _ in range(g._value.ndim - len(shape)))
    return [EINSUM(g, equation=f"{batch + target}->{batch + source}")]


def _einsum_vjp(g, ans, *operands, equation):
    terms, output, sizes = parse(equation, tuple(x._value.shape for x in operands), strict=False)
    grads = []
    for i in range(len(operands)):
        fresh = iter(c for c in _LETTERS if c not in sizes)
        grads.append(_operand_grad(i, g, operands, terms, output, sizes, fresh))
    return grads


EINSUM = Primitive(
    "Einsum", _einsum_forward, _einsum_vjp, saves="inputs", domain=(-2.0, 2.0),
    label="einsum('{equation}', ...)",
    cases=[(((2, 3), (3, 4)), {"equation": "ij,jk->ik"}), (((3,), (3,)), {"equation": "i,i->"}),
           (((2, 3),), {"equation": "ij->ji"}), (((3, 3),), {"equation": "ii->i"}),
           (((3, 3),), {"equation": "ii->"}), (((2, 3),), {"equation": "ij->i"}),
           (((2, 2, 3), (2, 3, 2)), {"equation": "bij,bjk->bik"}),
           (((2, 3, 2, 2),), {"equation": "bxby->bxy"}),
           (((2, 2, 3), (3, 2)), {"equation": "...ij,...jk->...ik"}),
           (((1, 2, 3), (2, 3, 2)), {"equation": "...ij,...jk->...ik"}),
           (((2, 3), (3,), (3, 2)), {"equation": "ij,j,jk->ik"}),
           (((2,), (3,)), {"equation": "i,j"})],
    doc="linear in each operand: its gradient contracts g with the other operands")


EMBED_DIAGONAL = Primitive(
    "EmbedDiagonal", _embed_diagonal_forward, _embed_diagonal_vjp, saves="shapes",
    domain=(-2.0, 2.0), label="embed_diagonal('{source}->{target}', {0})",
    cases=[(((3,),), {"source": "i", "target": "ii", "shape": (3, 3)}),
           (((2, 3, 4),), {"source": "bxy", "target": "bxby", "shape": (2, 3, 2, 4)}),
           (((2, 3),), {"source": "ij", "target": "jiij", "shape": (3, 2, 2, 3)})],
    doc="einsum's gradient for a repeated letter: the cotangent's diagonal comes back")


def einsum(equation, *inputs, **kwargs):
    """Einstein summation: products of the operands, summed over the letters not in the output.

    Args:
        equation: subscripts such as ``'ij,jk->ik'``; a letter repeated in one
            operand takes a diagonal, ``...`` stands for broadcast leading
            axes; without ``->`` the output is the letters used once, sorted.
        *inputs: the operands, all of one dtype.

    Returns:
        The result, shaped by the output subscripts.

    Raises:
        InvalidArgumentError: a malformed equation or mismatched dimensions;
            the message names the equation and the operand shapes.

    >>> ad.einsum('ij,jk->ik', ad.ones([2, 3]), ad.ones([3, 4])).shape
    TensorShape([2, 4])
    >>> ad.einsum('bxby->bxy', ad.ones([7, 6, 7, 5])).shape    # diagonal over b
    TensorShape([7, 6, 5])
    """
    if not isinstance(equation, str):
        raise TypeError(f"einsum: equation must be a string, not {type(equation).__name__}")
    if not inputs:
        raise InvalidArgumentError(f"Einsum: no operands for equation '{equation}'")
    first = convert_to_tensor(inputs[0])
    operands = [first] + [convert_to_tensor(x, dtype_hint=first.dtype) for x in inputs[1:]]
    equation = equation.replace(" ", "")
    parse(equation, tuple(x._value.shape for x in operands))
    return EINSUM(*operands, equation=equation)


from .creation import ones  # noqa: E402
from .shape import reshape  # noqa: E402
