"""The op table: every registered op type, checked from its own metadata.

Three tests walk ``autodiff.registry.REGISTRY``, so an op family added
later is covered without touching this file:

- ``test_gradients_match_finite_differences``: for every differentiable
  Primitive and every case in its table, float64 inputs from its declared
  ``domain`` (or ``make_inputs``); first and second derivatives against
  central finite differences along random directions (``check_grads``).
- ``test_vjp_rules_accept_leading_batch_axes``: one backward pass with a
  stack of 3 cotangents equals the 3 single passes, stacked (what the
  vectorized ``jacobian`` relies on).
- ``test_primitive_declares_its_metadata`` and
  ``test_api_operation_is_public``: nothing is missing (a VJP or
  NotDifferentiable, a derivative ``doc`` line, a domain, every function
  API.md lists).
"""

import zlib

import numpy as np
import pytest

import autodiff as ad
from autodiff import nest, testing
from autodiff.registry import REGISTRY, NotDifferentiable
from autodiff.backward import backward


def _cases(predicate):
    """pytest params ``(op type, case index)`` for the registered ops matching ``predicate``."""
    params = []
    for name, prim in sorted(REGISTRY.items()):
        if not predicate(prim):
            continue
        try:
            n = len(testing.op_cases(prim))
        except ValueError:
            n = 1  # no usable cases: the test itself reports it
        params += [pytest.param(name, k, id=f"{name}-case{k}") for k in range(n)]
    return params


def _case(name, k):
    """(primitive, input arrays, params, seed) for case ``k`` of op ``name``."""
    prim = REGISTRY[name]
    shapes, params = testing.op_cases(prim)[k]
    seed = zlib.crc32(f"{name}-case{k}".encode())
    arrays = testing.op_inputs(prim, shapes, np.random.default_rng(seed))
    return prim, arrays, dict(params), seed


def _float_outputs(out):
    return [t for t in nest.flatten(out) if t.dtype.is_floating]


@pytest.mark.parametrize("name, k", _cases(lambda p: p.differentiable))
def test_gradients_match_finite_differences(name, k):
    prim, arrays, params, seed = _case(name, k)
    out = prim(*[ad.constant(a) for a in arrays], **params)
    for i, t in enumerate(nest.flatten(out)):
        if t.dtype.is_floating:
            assert t.dtype == ad.float64, f"{name}: output {i} is {t.dtype.name} for float64 inputs"
    assert _float_outputs(out), f"{name} is differentiable but has no floating output"
    testing.check_grads(lambda *xs: prim(*xs, **params), arrays, order=2, seed=seed)


@pytest.mark.parametrize("name, k", _cases(lambda p: p.differentiable and p.batch_aware))
def test_vjp_rules_accept_leading_batch_axes(name, k):
    prim, arrays, params, seed = _case(name, k)
    tensors = [ad.constant(a) for a in arrays]
    sources = [t for t in tensors if t.dtype.is_floating]
    with ad.GradientTape() as tape:
        tape.watch(sources)
        outputs = _float_outputs(prim(*tensors, **params))
    records = tape.records
    assert [r.op_type for r in records] == [name]
    rng = np.random.default_rng(seed)
    stacked = [rng.standard_normal((3,) + tuple(o.shape)) for o in outputs]
    source_ids = {t._id for t in sources}

    def gradients(cotangents, seeded):
        seeds = {outputs[j]._id: ad.constant(np.asarray(cotangents[j])) for j in seeded}
        return backward(records, seeds, source_ids)

    # All outputs seeded; for a multi-output op also each output alone (the tape
    # then fills the others' cotangents with zeros, which have no batch axes).
    seedings = [range(len(outputs))] + ([[j] for j in range(len(outputs))]
                                        if len(outputs) > 1 else [])
    for seeded in seedings:
        batched = gradients(stacked, seeded)
        rows = [gradients([g[b] for g in stacked], seeded) for b in range(3)]
        where = f"{name} (outputs {list(seeded)} seeded)"
        for i, x in enumerate(tensors):
            if x._id not in source_ids:
                continue
            singles = [row.get(x._id) for row in rows]
            got = batched.get(x._id)
            if all(s is None for s in singles):
                assert got is None, f"{where}: input {i} got a batched gradient but no single one"
                continue
            assert got is not None, f"{where}: input {i} got no gradient from the batched cotangent"
            expected = np.stack([np.zeros(x.shape) if s is None else s.numpy() for s in singles])
            assert tuple(got.shape) == expected.shape, (
                f"{where}: with cotangents with a batch axis of 3 in front the rule for input {i} "
                f"returned shape {tuple(got.shape)}, expected {expected.shape}")
            np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12,
                                       err_msg=f"{where}: batched VJP, input {i} != stacked rows")


# ---- completeness --------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_primitive_declares_its_metadata(name):
    prim = REGISTRY[name]
    problems = []
    if not callable(prim.forward):
        problems.append("forward is not callable")
    rules = prim.vjp
    if rules is None:
        problems.append("vjp is None (differentiating raises LookupError): give rules, "
                        "or NotDifferentiable when the gradient is None")
    elif isinstance(rules, tuple):
        if not all(callable(r) for r in rules):
            problems.append("a VJP rule is not callable")
    elif rules is not NotDifferentiable and not callable(rules):
        problems.append(f"vjp {rules!r} is neither a tuple of rules nor a function")
    if not (isinstance(prim.doc, str) and prim.doc.strip()):
        problems.append("no `doc` line stating the derivative")
    if prim.domain is None and getattr(prim, "make_inputs", None) is None:
        problems.append("neither a `domain` nor `make_inputs`")
    try:
        cases = testing.op_cases(prim)
    except ValueError as err:
        problems.append(str(err))
        cases = []
    for shapes, params in cases:
        if not (isinstance(shapes, tuple) and isinstance(params, dict)):
            problems.append(f"case {(shapes, params)!r} is not (input_shapes_tuple, params_dict)")
        elif isinstance(rules, tuple) and len(shapes) != len(rules):
            problems.append(f"case with {len(shapes)} inputs, but {len(rules)} VJP rules")
        else:
            try:
                testing.op_inputs(prim, shapes, np.random.default_rng(0))
            except ValueError as err:
                problems.append(str(err))
    assert not problems, f"{name}: " + "; ".join(problems)


# Every operation API.md's "Operations" section lists, by namespace.
API_OPERATIONS = {
    "math": ["add", "subtract", "multiply", "divide", "negative", "pow", "square", "sqrt", "exp",
             "log", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "abs", "sign", "round",
             "floor", "maximum", "minimum", "reduce_sum", "reduce_mean", "reduce_max",
             "reduce_min", "reduce_prod", "reduce_logsumexp", "cumsum", "softplus"],
    "": ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
         "reduce_logsumexp", "add", "multiply", "square", "exp", "matmul", "einsum", "reshape",
         "transpose", "expand_dims", "squeeze", "concat", "stack", "pad", "gather", "where",
         "tile", "broadcast_to", "clip_by_value", "clip_by_norm", "norm", "eye", "ones", "zeros",
         "ones_like", "zeros_like", "fill", "linspace", "range", "identity", "size", "shape",
         "cast", "stop_gradient"],
    "nn": ["relu", "elu", "selu", "sigmoid", "tanh", "softmax", "log_softmax", "softplus",
           "leaky_relu", "gelu", "l2_loss"],
    "linalg": ["matmul", "solve", "inv", "det", "slogdet", "cholesky", "norm", "trace",
               "diag_part", "eye"],
    "random": ["set_seed", "normal", "uniform", "shuffle"],
}


@pytest.mark.parametrize("namespace, name", [
    pytest.param(ns, name, id=f"ad.{ns + '.' if ns else ''}{name}")
    for ns, names in API_OPERATIONS.items() for name in names])
def test_api_operation_is_public(namespace, name):
    module = getattr(ad, namespace) if namespace else ad
    where = f"ad.{namespace + '.' if namespace else ''}{name}"
    function = getattr(module, name, None)
    assert callable(function), f"{where} is missing (API.md lists it)"
    assert (function.__doc__ or "").strip(), f"{where} has no docstring"


def test_pad_takes_constant_values():
    x = ad.constant([1.0, 2.0], dtype=ad.float64)
    padded = ad.pad(x, [[1, 1]], constant_values=3.0)
    np.testing.assert_array_equal(padded.numpy(), [3.0, 1.0, 2.0, 3.0])


def test_einsum_covers_the_guides_bxby_to_bxy(rng):
    jacobian = rng.standard_normal((2, 3, 2, 4))  # (batch, out, batch, in), as in the guide
    out = ad.einsum("bxby->bxy", ad.constant(jacobian))
    np.testing.assert_allclose(out.numpy(), np.einsum("bxby->bxy", jacobian))
    testing.check_grads(lambda j: ad.einsum("bxby->bxy", j), [jacobian], order=2)


def test_random_shuffle_is_not_differentiable():
    x = ad.constant([1.0, 2.0, 3.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.random.shuffle(x)
    assert tape.gradient(y, x) is None
