"""The replay dict from snapshots of tapes and a ``BackwardTrace``: the nodes (every
tensor and op, with previews, numbers and tooltip statistics), the edges, the flags
(source, target, unconnected ...), the frames, the scope groups and the layout.
``replay.py`` takes the snapshots and runs the backward pass; ``Builder`` puts what
they report into the plain, JSON-able model the tape player draws.
"""

from numpy import ndarray

from autodiff import nest
from autodiff.tensor import ArraySpec, Tensor, Variable

from ..tape_names import expand_names
from .data.frames import Frames
from .data.looks import look_many
from .data.nodes import dtype_words as _dtype_words, params_text as _params_text, \
    tape_groups as _tape_groups
from .data.scopes import debug_marks, scope_groups
from .data.sentences import rule_text
from .data.statistics import many_stats
from .layout.graph_layout import graph_layout as _graph_layout

__all__ = ["Builder"]


class Builder:
    """Turns snapshots of tapes plus a BackwardTrace into the replay dict."""

    def __init__(self, snapshots, tape_names, user_names):
        self.snapshots = snapshots
        self.tape_names = tape_names
        self.tensors = {}      # tid -> node dict
        self.kinds = {}        # tid -> NumPy dtype kind ('f', 'i', ...)
        self.ops = {}          # output ids -> op node dict
        self.op_records = {}   # output ids -> a TapeRecord of it
        self.key_of = {}       # op node id -> output ids
        self.edges = []
        self.edge_span = {}    # op node id -> (index of its first edge, inputs, outputs)
        self.unmeasured = []   # (node, tensor) whose value take_stats has yet to look at
        self.looked = set()    # tids whose value is looked at (or about to be)
        self.names = self._names(user_names)

    # ---- names --------------------------------------------------------------
    def _names(self, user_names):
        names = dict(self.snapshots[0]["names"])
        numbered = [int(n[1:]) for n in names.values() if n[:1] == "v" and n[1:].isdigit()]
        fresh = iter(range(max(numbered, default=-1) + 1, 1 << 30))
        for snap in self.snapshots[1:]:
            for tid, name in snap["names"].items():
                if tid not in names:
                    names[tid] = name if tid in snap["variables"] else f"v{next(fresh)}"
        self._fresh = fresh
        for name, tensor in expand_names(user_names).items():
            names[tensor._id] = name
        return names

    def name(self, tensor):
        tid = tensor._id
        if tid not in self.names:
            self.names[tid] = tensor.name.split(":")[0] if isinstance(tensor, Variable) \
                else f"v{next(self._fresh)}"
        return self.names[tid]

    # ---- nodes and edges ----------------------------------------------------
    def tensor(self, tensor, tape_index=None):
        tid = tensor._id
        node = self.tensors.get(tid)
        if node is None:
            spec = tensor._value
            kind, dtype_name = _dtype_words(spec.dtype)
            self.kinds[tid] = kind
            name = self.names.get(tid)
            # an ndarray's shape holds Python ints already (a placeholder's may not)
            shape = list(spec.shape) if spec.__class__ is ndarray else list(map(int, spec.shape))
            node = self.tensors[tid] = {
                "id": f"t{tid}", "type": "tensor", "tid": tid,
                "name": self.name(tensor) if name is None else name,
                "shape": shape, "dtype": dtype_name,
                "preview": None, "data": None, "stats": None, "flags": [], "tapes": []}
        # A tensor is seen once per record that reads it; its value is looked at once
        # (a placeholder's is not there: a later record may hold it), all at once in
        # take_stats.
        if tid not in self.looked and not isinstance(tensor._value, ArraySpec):
            self.looked.add(tid)
            self.unmeasured.append((node, tensor))
        if tape_index is not None and tape_index not in node["tapes"]:
            node["tapes"].append(tape_index)
        return node

    def take_stats(self):
        """Every new tensor node's preview and numbers (``look_many``) and tooltip stats
        (``many_stats``), each in one batch."""
        pending, self.unmeasured = self.unmeasured, []
        tensors = [t for _, t in pending]
        looks = look_many(tensors, checks=False)       # a node keeps a preview and small numbers
        for (node, _), (value, *_), stats in zip(pending, looks, many_stats(tensors)):
            node["preview"], node["data"], node["stats"] = value["preview"], value["data"], stats

    def collect_records(self):
        ops, op_records = self.ops, self.op_records
        kinds = {}      # Primitive -> (op type, doc, differentiable): read once per op type
        for t, snap in enumerate(self.snapshots):
            for rec in snap["records"] or ():
                key = tuple(rec[6])                 # rec.output_ids (a record is a tuple)
                op = ops.get(key)
                if op is None:
                    primitive, params, scope = rec[1], rec[4], rec[7]
                    kind = kinds.get(primitive)
                    if kind is None:
                        kind = kinds[primitive] = (primitive.name, primitive.doc or "",
                                                   bool(primitive.differentiable))
                    op = ops[key] = {
                        "id": None, "type": "op", "op_type": kind[0], "label": None,
                        "doc": kind[1], "records": [], "differentiable": kind[2],
                        "params": _params_text(params) if params else "", "tapes": [],
                        "flags": [], "scope": scope if scope.__class__ is str and scope
                        else str(scope or "")}
                    op_records[key] = rec
                op["records"].append([t, rec[0]])
                op["tapes"].append(t)
        # Tensor ids grow as ops run, so the smallest output id orders ops across tapes.
        names, edges, tensors, looked = self.names, self.edges, self.tensors, self.looked
        key_of, tensor = self.key_of, self.tensor
        for k, key in enumerate(sorted(ops, key=min)):
            op = ops[key]
            op_id = op["id"] = f"op{k}"
            op["order"] = k
            key_of[op_id] = key
            rec = op_records[key]
            inputs, outputs, input_ids = rec[2], rec[3], rec[5]
            for t in op["tapes"]:
                for x in inputs + outputs:
                    node = tensors.get(x._id)
                    # seen before, on this tape, its value looked at (or a placeholder
                    # again, with no value to look at): nothing new
                    if node is None or t not in node["tapes"] or (
                            x._id not in looked and not isinstance(x._value, ArraySpec)):
                        tensor(x, t)
            op["label"] = rec.label(names)
            op["rule"] = rule_text(op["doc"], [names[i] for i in input_ids])
            if not op["differentiable"]:
                op["flags"].append("stopped")
            n = len(edges)
            self.edge_span[op_id] = (n, len(inputs), len(outputs))
            for slot, x in enumerate(inputs):
                tid = f"t{x._id}"
                edges.append({"id": f"e{n}", "from": tid, "to": op_id, "kind": "in",
                              "slot": slot, "op": op_id, "tensor": tid})
                n += 1
            for slot, y in enumerate(outputs):
                tid = f"t{y._id}"
                edges.append({"id": f"e{n}", "from": op_id, "to": tid, "kind": "out",
                              "slot": slot, "op": op_id, "tensor": tid})
                n += 1

    def flag(self, tid, flag):
        node = self.tensors[tid]
        if flag not in node["flags"]:
            node["flags"].append(flag)

    def set_flags(self, targets, sources, gradients):
        produced = {tid for key in self.ops for tid in key}
        watched = set().union(*(s["watched"] for s in self.snapshots))
        variables = set().union(*(s["variables"] for s in self.snapshots))
        for key, op in self.ops.items():
            if not op["differentiable"]:
                for tid in key:
                    self.flag(tid, "stopped")
        for tid in self.tensors:
            if tid in variables:
                self.flag(tid, "variable")   # a watched variable
            elif tid not in produced:
                self.flag(tid, "watched" if tid in watched else "constant")
            if self.kinds[tid] not in "fc":   # integers and bools carry no gradient
                self.flag(tid, "integer")
        for t in targets:
            self.flag(t._id, "target")
        for s, g in zip(sources, gradients):
            self.flag(s._id, "source")
            if g is None and "integer" not in self.tensors[s._id]["flags"]:
                self.flag(s._id, "unconnected")

    # ---- the whole model ------------------------------------------------------
    def build(self, trace, targets, sources, output_gradients, geometry=True, words=True):
        self.collect_records()
        for t in list(targets) + list(sources):
            if isinstance(t, Tensor):
                self.tensor(t)
        self.take_stats()
        gradients = nest.flatten(trace.gradients)
        self.set_flags([t for t in targets if isinstance(t, Tensor)], sources, gradients)
        ops = sorted(self.ops.values(), key=lambda op: op["order"])
        nodes = self._ordered_nodes(ops)
        maker = Frames(self, trace, targets, sources, gradients, output_gradients, words)
        frames, self.square_sums = maker.build(), maker.square_sums    # health reads them
        layout = _graph_layout(nodes, self.edges, geometry=geometry)
        groups = scope_groups(nodes, self.edges, layout,
                              {op["id"]: op["scope"] for op in ops})
        return {
            "version": 1,
            "tapes": [{"index": i, "name": n, "records": len(s["records"] or ()),
                       "freed": s["records"] is None, "text": s["text"]}
                      for i, (n, s) in enumerate(zip(self.tape_names, self.snapshots))],
            "tape_groups": _tape_groups(ops),
            "nodes": nodes, "edges": self.edges, "frames": frames,
            "layout": layout, "groups": groups,
            "debug": debug_marks(frames, groups, maker.forward_bad, maker.backward_bad,
                                 maker.norms),
        }

    def _ordered_nodes(self, ops):
        """Tensors and ops in execution order: inputs, op, outputs, then the rest."""
        order, seen = [], set()      # tensors seen by id; each op comes once
        tensors, records, key_of = self.tensors, self.op_records, self.key_of
        for op in ops:
            rec = records[key_of[op["id"]]]
            for x in rec.inputs:
                if x._id not in seen:
                    seen.add(x._id)
                    order.append(tensors[x._id])
            order.append(op)
            for y in rec.outputs:
                if y._id not in seen:
                    seen.add(y._id)
                    order.append(tensors[y._id])
        order += [tensors[tid] for tid in sorted(tensors) if tid not in seen]
        return order
