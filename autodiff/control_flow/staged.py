"""Staging: a control-flow op becomes one graph node that holds its branches as graphs.

Eagerly, ``ad.cond`` and its siblings are plain Python: they call the
functions they were given. Inside ``ad.function`` that would freeze the
first call's decision, so each op is *staged* instead:

1. every function it was given (a branch, a loop body) is traced into a
   subgraph of its own, on fresh tensors holding example values
   (``trace_function``); tensors it uses from the enclosing function become
   the subgraph's extra arguments (its *captures*);
2. the op becomes one node, a ``StagedOp``: a Primitive whose inputs are the
   op's tensors, the captures and the Variables the subgraphs read, and
   which, when the graph runs, calls the op's eager code again with each
   subgraph standing in for its Python function. ``print(f.get_concrete_
   function(x).graph)`` shows the node and, indented under it, its subgraphs.

Gradients need nothing more. When a traced function runs, a StagedOp runs
its eager code, so a GradientTape (or a ForwardAccumulator) outside sees every
op of the branch taken and of every loop iteration, as if the code had run
eagerly: a while loop's backward pass uses each iteration's values, kept on
the tape (what TensorFlow's accumulators keep). Inside a trace, a tape that
records a StagedOp gets a vector-Jacobian product that is itself a StagedOp
(``StagedOp.gradient_op``): it runs the op again under a tape of its own and
takes the gradient there, so it *recomputes* the forward values. That is also
how second derivatives and ``jacobian`` go through a staged op.

While tracing, the node's output values (the tracer works on real values) come
from running the eager code once with nothing recording (``_run_untraced``);
Variables it assigns get their values back, so tracing has no side effects.
"""

from .. import nest
from .. import tape as _tape
from ..ops.printing import quiet
from ..registry import Primitive
from ..tensor import Tensor, Variable, convert_to_tensor

__all__ = ["current_tracer", "is_staged_value", "trace_function", "Subgraph", "StagedOp",
           "stage", "staged_op", "tensor_leaves", "pack_tensors"]


def current_tracer():
    """The Tracer of ``ad.function`` recording in this thread, or None when running eagerly."""
    from ..tracing.graph import Tracer
    for recorder in _tape.thread_state.active:
        if isinstance(recorder, Tracer):
            return recorder
    return None


def is_staged_value(value):
    """Whether ``value`` is a tensor whose value can change between calls of the traced function
    (so a decision taken on it must become a graph op)."""
    tracer = current_tracer()
    return tracer is not None and isinstance(value, Tensor) and tracer.follows(value)


def tensor_leaves(structure):
    """The tensors among ``structure``'s leaves, in order (None and Python values are skipped)."""
    return [leaf for leaf in nest.flatten(structure) if isinstance(leaf, Tensor)]


def pack_tensors(template, tensors):
    """``template`` with its tensor leaves replaced, in order, by ``tensors``."""
    fresh = iter(tensors)
    return nest.pack_sequence_as(template, [next(fresh) if isinstance(leaf, Tensor) else leaf
                                            for leaf in nest.flatten(template)])


def as_tensors(structure, what):
    """Every leaf as a tensor (None stays None); a clear TypeError names ``what`` otherwise."""
    def convert(leaf):
        if leaf is None or (isinstance(leaf, Tensor) and not isinstance(leaf, Variable)):
            return leaf
        try:
            return convert_to_tensor(leaf)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{what} must return tensors (or values convertible to tensors), "
                            f"got {leaf!r}: {err}") from None
    return nest.map_structure(convert, structure)


class Subgraph:
    """A Python function traced into a graph: ``run(args, captures)`` calls it again.

    Attributes:
        graph: the traced Graph (arguments first, then the captures).
        captures: the enclosing function's tensors the graph uses, in order.
        outputs: what the function returned while tracing (a structure of tensors).
        label: what the function was, for printing (``true_fn``, ``body`` ...).
    """

    def __init__(self, graph, captures, outputs, label):
        self.graph, self.captures, self.outputs, self.label = graph, captures, outputs, label

    def run(self, args, captures):
        return self.graph.run(list(args) + list(captures))

    def variables(self):
        """Every Variable this graph (or a staged op inside it) reads."""
        found = list(self.graph.variables)
        for node in self.graph.nodes:
            for sub in getattr(node.primitive, "subgraphs", ()):
                found += sub.variables()
        return found


def trace_function(fn, example_args, label, convert=as_tensors):
    """Traces ``fn(*example_args)`` into a Subgraph (see the module docstring).

    ``example_args`` is a structure of tensors; ``fn`` receives fresh tensors
    holding the same values, so the graph takes them as arguments. ``convert``
    turns what ``fn`` returns into the graph's outputs (default: every leaf a
    tensor; AutoGraph keeps Python values, which the graph then returns as they are).
    """
    from ..tracing.graph import Tracer, trace
    parent = current_tracer()
    examples = tensor_leaves(example_args)
    placeholders = [Tensor(t._value) for t in examples]
    args = pack_tensors(example_args, placeholders)
    sub = Tracer(placeholders, parent=parent, body=label)
    holder = {}

    def run():
        holder["outputs"] = convert(fn(*args), label)
        return holder["outputs"]

    observers = _tape.thread_state.observers
    saved = list(observers)
    observers[:] = []   # an assign in a branch belongs to the branch, not to the enclosing graph
    try:
        graph = trace(sub, run)
    finally:
        observers[:] = saved
    return Subgraph(graph, list(sub.captures), holder["outputs"], label)


class StagedOp(Primitive):
    """A control-flow op as one graph node (see the module docstring).

    Args:
        name: the op type shown in graphs (``If``, ``While``, ``Scan`` ...).
        run: ``run(*inputs) -> list of output tensors``, the op's eager code with the
            subgraphs standing in for the Python functions.
        subgraphs: the Subgraphs (for printing, compiling and saving the node).
        params: plain data describing the node (shown when printing).
    """

    def __init__(self, name, run, subgraphs=(), params=None):
        super().__init__(name, forward=None, vjp=self._vjp, saves="inputs", dtype_args=(),
                         n_outputs=None, batch_aware=False, register=False,
                         doc=f"the gradient of {name} runs it again under a tape (recomputes)")
        self.run = run
        self.subgraphs = tuple(subgraphs)
        self.params = dict(params or {})
        self.stateful = any(_stateful(sub.graph) for sub in self.subgraphs)
        self._gradient_op = None
        # Which inputs are the op's own tensors and which each subgraph captures, and what the
        # op needs beyond them (``stage`` sets both): what the compiler writes the node from.
        # A gradient op keeps None: the compiler calls it as it is, and ``gradient_of``
        # says whose gradient it is (a saved model stores that).
        self.layout, self.info = None, {}
        self.gradient_of = None   # (the forward StagedOp, (n_inputs, floats, n_gs))

    def __repr__(self):
        return f"<{self.name}>"

    def __call__(self, *inputs):
        inputs = [convert_to_tensor(x) if not isinstance(x, Tensor) or isinstance(x, Variable)
                  else x for x in inputs]
        if current_tracer() is None:
            return tuple(self.run(*inputs))   # eager: every op inside is seen by the tapes
        from ..tracing.graph import Tracer
        outputs = tuple(Tensor(out._value) for out in _run_untraced(self.run, inputs, self))
        for recorder in list(_tape.thread_state.active):
            if outputs or isinstance(recorder, Tracer):   # a node with no outputs has no gradient
                recorder._record(self, inputs, outputs, {})
        return outputs

    def variables(self):
        return [v for sub in self.subgraphs for v in sub.variables()]

    def _vjp(self, g, ans, *inputs):
        gs = list(g) if isinstance(g, tuple) else [g]
        floats = [i for i, x in enumerate(inputs) if x.dtype.is_floating or x.dtype.is_complex]
        grads = self.gradient_op(len(inputs), floats, len(gs))(*inputs, *gs)
        result = [None] * len(inputs)
        for i, grad in zip(floats, grads):
            result[i] = grad
        return result

    def gradient_op(self, n_inputs, floats, n_gs):
        """The StagedOp computing this op's vector-Jacobian product (it recomputes the op)."""
        key = (n_inputs, tuple(floats), n_gs)
        if self._gradient_op is None or self._gradient_op[0] != key:
            forward = self.run

            def run_gradient(*xs_and_gs):
                xs, gs = list(xs_and_gs[:n_inputs]), list(xs_and_gs[n_inputs:])
                sources = [xs[i] for i in floats]
                from ..tape import GradientTape
                with GradientTape() as tape:
                    tape.watch(sources)
                    outputs = list(forward(*xs))
                pairs = [(o, g) for o, g in zip(outputs, gs)
                         if o.dtype.is_floating or o.dtype.is_complex]
                if not pairs or not sources:
                    return [x * 0 for x in sources]
                return tape.gradient([o for o, _ in pairs], sources,
                                     output_gradients=[g for _, g in pairs],
                                     unconnected_gradients="zero")

            op = StagedOp(f"{self.name}Grad", run_gradient, self.subgraphs, self.params)
            op.gradient_of = (self, key)
            self._gradient_op = (key, op)
        return self._gradient_op[1]


def _stateful(graph):
    return any(node.primitive.stateful for node in graph.nodes)


def _run_untraced(run, inputs, op):
    """``run(*inputs)`` with nothing recording, for the values a tracer goes on with; the
    Variables the op's subgraphs assign get their values back afterwards."""
    state = _tape.thread_state
    active, observers = list(state.active), list(state.observers)
    saved = [(v, v._value) for v in op.variables()]
    state.active[:], state.observers[:] = [], []
    try:
        with quiet():   # ad.print in a branch or body prints when the graph runs, not now
            return list(run(*inputs))
    finally:
        state.active[:], state.observers[:] = active, observers
        for variable, value in saved:
            variable._value = value


def stage(name, run, tensors, subgraphs, out_template, params=None, info=None):
    """Calls a control-flow op as one StagedOp node (see the module docstring).

    Args:
        name: the op type.
        run: ``run(tensors, callables) -> structure like out_template``: the op's eager
            code; ``callables`` are the subgraphs, callable with their arguments.
        tensors: the op's own tensor inputs (a flat list).
        subgraphs: the traced functions, in the order ``run`` expects them.
        out_template: a structure whose tensor leaves the outputs replace.
        params: plain data shown with the node.
        info: plain data the compiler needs to write the node as a loop
            (``compiler/control_flow.py``): how many of ``tensors`` are elements, ...

    Returns:
        ``out_template`` with the node's outputs in place of its tensors.
    """
    variables = []
    for sub in subgraphs:
        for v in sub.variables():
            if all(v is not seen for seen in variables):
                variables.append(v)
    reads = [_tape.read_variable(v) for v in variables]   # so tapes see what the branches read
    # One input per tensor (by tape id): a tensor two branches capture, or a loop variable
    # the body also captures, must not get its gradient twice.
    inputs, position = [], {}

    def positions(role):
        found = []
        for t in role:
            if t._id not in position:
                position[t._id] = len(inputs)
                inputs.append(t)
            found.append(position[t._id])
        return found

    own = positions(list(tensors))
    per_subgraph = [positions(sub.captures) for sub in subgraphs]
    positions(reads)

    op = staged_op(name, run, subgraphs, (own, per_subgraph), params, info)
    outputs = op(*inputs)
    return pack_tensors(out_template, outputs)


def staged_op(name, run, subgraphs, layout, params=None, info=None):
    """The StagedOp whose inputs are laid out as ``layout`` (what ``stage`` makes, and what a
    saved model's loader rebuilds from plain data).

    Args:
        name, run, subgraphs, params, info: as for ``stage``.
        layout: ``(own, captures)``: the positions among the node's inputs of the op's own
            tensors, and for each subgraph the positions of the values it captures.
    """
    own, per_subgraph = layout

    def run_node(*values):
        callables = [_bound(sub, [values[k] for k in where])
                     for sub, where in zip(subgraphs, per_subgraph)]
        return tensor_leaves(run([values[k] for k in own], callables))

    op = StagedOp(name, run_node, subgraphs, params)
    op.layout, op.info = (list(own), [list(w) for w in per_subgraph]), dict(info or {})
    return op


def _bound(sub, captures):
    def call(*args):
        return sub.run(tensor_leaves(list(args)), captures)
    call.subgraph = sub
    return call
