"""``ConcreteFunction``: one trace of an ``ad.function``, and how it runs.

A trace is a graph for one signature key (``signature.py``). Called, it replays the graph
op by op (``graph.py``); with ``jit_compile=True`` it runs the graph written out as a
program (``compiler/program.py``) whenever no tape records, and with ``experimental_fuse``
that program's numba form (``compiler/fused/``). A trace that serves every size
(``polymorphic.py``) compiles one program per size it meets, as XLA compiles per shape.

A trace keyed by a Variable holds it weakly (``hold_weakly``): the trace must not keep a
model's weights alive; ``function.py`` drops the trace when the Variable goes.

    >>> f = ad.function(lambda x: x * x)
    >>> concrete = f.get_concrete_function(ad.TensorSpec([2]))
    >>> concrete(ad.constant([1.0, 3.0])).numpy()
    array([1., 9.], dtype=float32)
"""

import warnings
import weakref

from .. import nest
from .. import tape as _tape
from ..compiler import compile_graph
from ..tape import AutodiffWarning
from ..tensor import Tensor
from .graph import Tracer, trace
from .polymorphic import fits
from .signature import bind, describe, describe_text, is_placeholder, key_of

__all__ = ["ConcreteFunction", "CompileError", "hold_weakly"]

MAX_SIZED_PROGRAMS = 32   # per trace that serves every size: programs kept for other sizes


class CompileError(RuntimeError):
    """``jit_compile=True`` could not write a trace out as a program (see ``compiler/program.py``)."""


class ConcreteFunction:
    """One trace: a graph for one signature key. Call it with matching arguments.

    Attributes:
        graph: the Graph (``print(concrete.graph)`` shows its ops).
        name: the Python function's name.
        structured_input_signature: the key, as data (see ``describe``).
    """

    def __init__(self, graph, name, description, jit_compile=False, arg_names=(), fuse=False):
        self.graph = graph
        self._fuse = bool(fuse)   # experimental_fuse: run the program's numba form
        self.name = name
        self.structured_input_signature = description
        self._key = key_of(description)
        self._jit_compile = bool(jit_compile)
        self._arg_names = arg_names
        self._program = None   # the compiled Program, or the error compiling it raised
        self._fast = None      # experimental_fuse: its one-call function, False if none
        self._sized = {}       # other sizes' programs, when the trace serves every size
        self._warned = False
        self.serves_any_size = False   # True once checked to serve every size (polymorphic.py)

    def serve_any_size(self, general):
        """Marks this trace as serving every size its signature's None dimensions allow."""
        self.serves_any_size = True
        self.structured_input_signature = general

    def _run(self, flat_tensors):
        # A compiled program computes on raw arrays, which no tape could record:
        # while anything records in this thread, replay the graph op by op instead.
        if self._jit_compile and not _tape.thread_state.active:
            if self._fast:   # the traced shapes, fused: one Python function (fused/fast.py)
                results = self._fast(flat_tensors)
                if results is not None:
                    return results
            program = self._program
            if program is None or isinstance(program, Exception):
                program = self._compiled_or_none()
            if program is not None and self.serves_any_size:
                program = self._sized_program(flat_tensors, program)
            if program is not None:
                results = program.run(flat_tensors, fuse=self._fuse)
                if self._fuse and self._fast is None and program is self._program:
                    self._fast = program.fused_call() or False
                return results
        return self.graph.run(flat_tensors)

    def _sized_program(self, flat_tensors, program):
        """The program for these arguments' sizes, in a trace that serves every size.

        A program is written for the sizes it was traced at (a buffer reused for a result
        of the same shape, zeros of a known shape), as XLA compiles once per shape: for
        other sizes the graph is replayed once under a tracer at those sizes (the same
        ops, no retrace of the Python function) and that graph compiled. None (run op
        by op) if it cannot be.
        """
        shapes = tuple(tuple(t._value.shape) for t in flat_tensors)
        if shapes == tuple(tuple(shape) for shape, _ in self.graph.arg_specs):
            return program
        if shapes not in self._sized:
            try:
                placeholders = [Tensor(t._value) for t in flat_tensors]
                graph = trace(Tracer(placeholders), lambda: self.graph.run(placeholders))
                self._sized[shapes] = compile_graph(graph, self.name, self._arg_names)
            except Exception:  # noqa: BLE001 - the graph op by op is always right
                self._sized[shapes] = None
            while len(self._sized) > MAX_SIZED_PROGRAMS:
                self._sized.pop(next(iter(self._sized)))
        return self._sized[shapes]

    def program(self):
        """This trace written out as Python (``compiler/program.py``), compiled on first use.

        Raises:
            CompileError: what could not be compiled, and why.
        """
        if self._program is None:
            try:
                self._program = compile_graph(self.graph, self.name, self._arg_names)
            except Exception as err:  # noqa: BLE001 - reported as one error type
                self._program = err
        if isinstance(self._program, Exception):
            raise CompileError(f"ad.function {self.name!r}: its trace could not be compiled "
                               f"({type(self._program).__name__}: {self._program})") \
                from self._program
        return self._program

    def _compiled_or_none(self):
        """The program; or None, with a warning once, when the trace cannot be compiled."""
        try:
            return self.program()
        except CompileError as err:
            if not self._warned:
                self._warned = True
                warnings.warn(f"{err}; running the traced graph op by op instead (same "
                              f"results, without the compiled speed)", AutodiffWarning,
                              stacklevel=4)
            return None

    def __call__(self, *args, **kwargs):
        structure = bind(args, kwargs, None, (), self.name)
        if key_of(describe(structure)) != self._key and not (
                self.serves_any_size and fits(self.structured_input_signature,
                                               describe(structure))):
            raise TypeError(f"{self.name}: arguments {describe_text(describe(structure))} do "
                            f"not match this concrete function's "
                            f"{describe_text(self.structured_input_signature)}")
        return self._run([t for t in nest.flatten(structure) if is_placeholder(t)])

    def __str__(self):
        return f"ConcreteFunction {self.name}{describe_text(self.structured_input_signature)}" \
               f"\n{self.graph}"

    def __repr__(self):
        return f"<ConcreteFunction {self.name}: {len(self.graph.nodes)} ops>"



class _WeakVariables(list):
    """A graph's captured-Variable list holding some entries through weakrefs."""

    def __init__(self, variables, weak_ids):
        super().__init__(weakref.ref(v) if id(v) in weak_ids else v for v in variables)

    @staticmethod
    def _strong(entry):
        if not isinstance(entry, weakref.ref):
            return entry
        variable = entry()
        if variable is None:
            raise ReferenceError("a Variable this trace was called with no longer exists")
        return variable

    def __getitem__(self, index):
        entry = super().__getitem__(index)
        return list(map(self._strong, entry)) if isinstance(index, slice) else self._strong(entry)

    def __iter__(self):
        return map(self._strong, super().__iter__())


def hold_weakly(graph, weak_ids):
    """Makes ``graph`` (and its custom-gradient graphs) hold those Variables weakly."""
    if any(id(v) in weak_ids for v in graph.variables):
        graph.variables = _WeakVariables(list(graph.variables), weak_ids)
    for node in graph.nodes:
        if node.custom is not None and node.custom.graph is not None:
            hold_weakly(node.custom.graph, weak_ids)
