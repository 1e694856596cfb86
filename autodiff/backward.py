"""Seeding and the reverse sweep: turning a tape's records into gradients.

``make_seeds`` gives each target its starting cotangent (ones shaped like
the target, so a non-scalar target is summed, or the user's
``output_gradients``).

Given the records in execution order and a cotangent for each target
(``seeds``), walk the records backwards. Each record hands the cotangent of
its output to its op's VJP rules, one per input, and the results are *added*
into a dict keyed by tensor id. Two sweeps keep the work minimal:

- forward, from the sources: only records that read something depending on
  a source can carry gradient to a source (``live`` ids);
- backward, from the targets: a record whose output received no cotangent
  is skipped.

The cotangents may carry leading batch axes (a stack of Jacobian rows);
nothing here needs to know, since every rule is batch-ready.
"""

import contextlib
import gc

from . import backend, nest
from .indexed_slices import IndexedSlices
from .records import BackwardStep
from .tensor import Tensor
from .registry import NotDifferentiable

__all__ = ["backward", "make_seeds", "on_backend_of"]


def on_backend_of(target):
    """The backward pass runs where the tape's values live.

    A tape recorded under ``ad.use_backend("cupy")`` may be asked for
    gradients after the block: the VJP rules (and the numbers they meet,
    like the 0.5 in ``g * 0.5``) must then still run on CuPy.
    """
    for t in nest.flatten(target):
        if isinstance(t, Tensor):
            name = backend.backend_of(t._value)
            if name is not None and name != backend.get_backend():
                return backend.use_backend(name)
            break
    return contextlib.nullcontext()


def make_seeds(targets, output_gradients):
    """The starting cotangents: ones shaped like each target, or the user's."""
    if output_gradients is not None:
        output_gradients = nest.flatten(output_gradients)
        if len(output_gradients) != len(targets):
            raise ValueError(f"output_gradients has {len(output_gradients)} entries for "
                             f"{len(targets)} targets")
    seeds = {}
    for i, t in enumerate(targets):
        if t is None:
            raise TypeError("a target of None cannot be differentiated")
        if not isinstance(t, Tensor):
            t = ops.convert_to_tensor(t)
        if not t.dtype.is_differentiable:
            continue  # integer targets have no gradient
        given = None if output_gradients is None else output_gradients[i]
        if given is None:
            # Not ops.ones_like: the seed is made from the shape alone, so no
            # tape that is recording meanwhile watches it (TensorFlow's seed).
            seed = Tensor(backend.xp.ones(t._value.shape, dtype=t._value.dtype))
        else:
            seed = ops.convert_to_tensor(given, dtype=t.dtype)
            if tuple(seed.shape) != tuple(t.shape):
                raise ValueError(f"output_gradients[{i}] has shape {tuple(seed.shape)}, but "
                                 f"target {i} has shape {tuple(t.shape)}")
        previous = seeds.get(t._id)
        seeds[t._id] = seed if previous is None else ops.add(previous, seed)
    return seeds


def backward(records, seeds, source_ids, trace=None, n_batch=0):
    """The reverse sweep over ``records``: returns ``{tensor id: gradient}``.

    Args:
        records: TapeRecords in execution order.
        seeds: ``{target id: cotangent}`` to start from.
        source_ids: ids whose gradients are wanted. Only inputs that depend on
            a source get a VJP computed.
        trace: a list to append one BackwardStep per record visited, or None.
        n_batch: how many leading batch axes the seeds carry (1 for a
            vectorized Jacobian). Rules that are not batch-aware (a user's
            custom gradient) are then applied one row at a time.
    """
    # Forward sweep: which records read (directly or not) a source? Only those
    # can carry gradient to a source, and only their inputs in `live` need one.
    live = set(source_ids)
    relevant = []
    for rec in records:
        if not live.isdisjoint(rec.input_ids):
            relevant.append(rec)
            live.update(rec.output_ids)

    # Reverse sweep: pull each record's cotangent, push it through the VJP.
    # The sweep makes many short-lived tensors and no reference cycles, so the
    # cycle collector only costs time here; it runs again afterwards.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        grads = dict(seeds)
        for rec in reversed(relevant):
            _index, primitive, inputs, outputs, params, input_ids, output_ids, _scope = rec
            if len(output_ids) == 1:
                oid = output_ids[0]
                g = grads.get(oid) if oid in source_ids else grads.pop(oid, None)
                ans = outputs[0]
            else:
                g = _cotangents_of_outputs(rec, grads)
                ans = outputs
            if g is None:
                continue  # nothing flows back through this record
            if type(g) is IndexedSlices:   # only a source keeps its slices; VJPs get tensors
                g = g._to_dense_tensor()
            rules = primitive.vjp
            if n_batch and not primitive.batch_aware:
                contributions = _row_by_row(rec, rules, g, ans, live, n_batch)
            elif type(rules) is tuple:   # one rule per input: call only those needed
                contributions = []
                for rule, x_id in zip(rules, input_ids):
                    contributions.append(rule(g, ans, *inputs, **params) if x_id in live else None)
            else:
                contributions = _apply_other_rules(rec, rules, g, ans, live)
            for x_id, contribution in zip(input_ids, contributions):
                if contribution is not None:
                    previous = grads.get(x_id)
                    grads[x_id] = contribution if previous is None else previous + contribution
            if trace is not None:
                trace.append(BackwardStep(
                    rec, g if isinstance(g, tuple) else (g,), list(zip(input_ids, contributions)),
                    {x_id: grads.get(x_id) for x_id in input_ids}))
    finally:
        if gc_was_enabled:
            gc.enable()
    return grads


def _cotangents_of_outputs(rec, grads):
    """For a multi-output record: each output's cotangent, zeros where none arrived.

    The zeros get the same leading batch axes as the cotangents that did arrive.
    """
    gs = [grads.get(oid) for oid in rec.output_ids]
    present = [(x, o) for x, o in zip(gs, rec.outputs) if x is not None]
    if not present:
        return None
    x, o = present[0]
    batch = x._value.shape[:x._value.ndim - o._value.ndim]
    return tuple(_zeros_like(o, batch) if g is None else g for g, o in zip(gs, rec.outputs))


def _zeros_like(o, batch):
    if not batch and o._value.ndim and ops.open_sizes.open_sized(o):
        return ops.zeros(ops.open_sizes.dims(o), dtype=o.dtype)   # sizes read in the graph
    return ops.zeros(batch + o._value.shape, dtype=o.dtype)


def _apply_rules(rec, rules, g, ans, live):
    """All of a record's VJP contributions (None for inputs that need none)."""
    if type(rules) is tuple:
        return [rule(g, ans, *rec.inputs, **rec.params) if x_id in live else None
                for rule, x_id in zip(rules, rec.input_ids)]
    return _apply_other_rules(rec, rules, g, ans, live)


def _row_by_row(rec, rules, g, ans, live, n_batch):
    """Applies rules that expect one cotangent to each row of a batch, then stacks.

    ``g`` has ``n_batch`` leading axes; they are flattened into one, each row
    goes through the rules on its own, and the results are stacked back.
    """
    gs = g if isinstance(g, tuple) else (g,)
    batch = gs[0]._value.shape[:n_batch]
    rows = 1
    for d in batch:
        rows *= d
    flat = [ops.reshape(x, (rows,) + x._value.shape[n_batch:]) for x in gs]
    per_row = []
    for i in range(rows):
        row = tuple(x[i] for x in flat)
        per_row.append(_apply_rules(rec, rules, row if isinstance(g, tuple) else row[0], ans, live))
    contributions = []
    for k, x in enumerate(rec.inputs):
        column = [r[k] for r in per_row]
        if all(c is None for c in column):
            contributions.append(None)
            continue
        column = [ops.zeros(x._value.shape, dtype=x.dtype) if c is None else c for c in column]
        stacked = ops.stack(column) if rows else ops.zeros((0,) + x._value.shape, dtype=x.dtype)
        contributions.append(ops.reshape(stacked, batch + x._value.shape))
    return contributions


def _apply_other_rules(rec, rules, g, ans, live):
    """VJPs that are not one-rule-per-input: not registered, non-differentiable, variadic."""
    if rules is None:
        raise LookupError(f"No gradient defined for operation '{rec.op_type}' "
                          f"(op type: {rec.op_type})")
    if rules is NotDifferentiable:
        return [None] * len(rec.inputs)
    all_grads = rules(g, ans, *rec.inputs, **rec.params)
    return [c if x_id in live else None for c, x_id in zip(all_grads, rec.input_ids)]


from . import ops  # noqa: E402
