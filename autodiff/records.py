"""What a tape stores and what a traced backward pass reports: plain data.

``TapeRecord`` is one line of a tape (one op that ran). ``BackwardStep`` is
one VJP applied during ``tape.backward_trace``. The widgets and lessons
read these; nothing here computes a derivative.
"""

import operator

__all__ = ["TapeRecord", "BackwardStep", "BackwardTrace"]

_RECORD_FIELDS = ("index", "primitive", "inputs", "outputs", "params", "input_ids", "output_ids",
                  "scope")


class TapeRecord(tuple):
    """One recorded op: a line of the tape (a Wengert list entry). Frozen.

    Attributes:
        index: position on its tape.
        primitive: the op's Primitive (``record.op_type`` is its name).
        inputs, outputs: tuples of Tensors. Only what the op's VJP needs keeps
            its data; the rest are shape-and-dtype placeholders with the same ids.
        params: the op's non-tensor arguments (axis, perm, ...).
        input_ids, output_ids: tuples of tensor ids (``x * x`` keeps both edges).
        scope: the ``ad.name_scope`` the op ran in (``'sequential/dense'``, or
            ``''``); views group records by it.

    A tuple underneath: recording one costs about half of a regular object.
    """

    __slots__ = ()

    def __new__(cls, index, primitive, inputs, outputs, params, input_ids, output_ids, scope=""):
        return tuple.__new__(cls, (index, primitive, inputs, outputs, params, input_ids, output_ids,
                                   scope))

    index = property(operator.itemgetter(0))
    primitive = property(operator.itemgetter(1))
    inputs = property(operator.itemgetter(2))
    outputs = property(operator.itemgetter(3))
    params = property(operator.itemgetter(4))
    input_ids = property(operator.itemgetter(5))
    output_ids = property(operator.itemgetter(6))
    scope = property(operator.itemgetter(7))

    def _asdict(self):
        return dict(zip(_RECORD_FIELDS, self))

    @property
    def op_type(self):
        return self.primitive.name

    @property
    def vjp(self):
        """The op's VJP rule(s), as declared in its Primitive."""
        return self.primitive.vjp

    def label(self, names=None):
        """A readable form such as ``'v0 * v1'`` (names: id -> display name)."""
        names = names or {}
        # by position (a record is a tuple): primitive, params, input ids
        args = [names[i] if i in names else f"v{i}" for i in self[5]]
        template = self[1].label
        if template is None:
            return f"{self[1].name}({', '.join(args)})"
        return template.format(*args, **self[4]) if self[4] else template.format(*args)

    def __repr__(self):
        outs = ", ".join(f"v{i}" for i in self.output_ids)
        ins = ", ".join(f"v{i}" for i in self.input_ids)
        return f"<TapeRecord {self.index}: {outs} = {self.op_type}({ins})>"


class BackwardStep:
    """What one record did during a traced backward pass (``tape.backward_trace``).

    Attributes:
        record: the TapeRecord visited.
        cotangents: gradient arriving at each output (None where nothing arrived).
        contributions: ``(input_id, contribution)`` pairs, in input order;
            contribution is None where the input gets no gradient.
        totals: ``input_id -> accumulated gradient`` right after this step.
    """

    __slots__ = ("record", "cotangents", "contributions", "totals")

    def __init__(self, record, cotangents, contributions, totals):
        self.record = record
        self.cotangents = cotangents
        self.contributions = contributions
        self.totals = totals

    @property
    def op_type(self):
        return self.record.op_type

    def __repr__(self):
        sent = ", ".join(f"v{i}" for i, c in self.contributions if c is not None)
        return f"<BackwardStep {self.record.op_type} #{self.record.index} -> {sent or 'nothing'}>"


class BackwardTrace:
    """The result of ``tape.backward_trace``.

    Attributes:
        gradients: what ``gradient`` would have returned.
        steps: one BackwardStep per record visited, in the order visited.
        seeds: ``{target id: starting cotangent}``.
        source_ids: the ids of the sources, in the order given.
    """

    __slots__ = ("gradients", "steps", "seeds", "source_ids")

    def __init__(self, gradients, steps, seeds, source_ids):
        self.gradients = gradients
        self.steps = steps
        self.seeds = seeds
        self.source_ids = source_ids

    def __repr__(self):
        return f"<BackwardTrace: {len(self.steps)} steps>"
