"""Traced functions: ``ad.function`` runs Python once per signature and keeps the graph.

Reading order: ``function.py`` (tracing, the trace cache, finding a call's trace),
``concrete_function.py`` (one trace, and running it: replayed, compiled or fused),
``signature.py`` (how a call's arguments become a cache key; ``ad.TensorSpec``),
``polymorphic.py`` (one trace for every size a ``None`` dimension allows),
``graph.py`` (the graph: its nodes, the Tracer that records them, replay),
``graph_custom_gradient.py`` (an ``ad.custom_gradient`` inside a graph),
``body_scope.py`` (a tensor a loop or branch body made may not leave it but as a result).

May import: the engine (``autodiff``'s top-level modules and ``ops/``), and
the compiler (``autodiff.compiler``) for ``jit_compile=True``. The engine
never imports this package: a tracer plugs into the tape's observer list
(``tape.thread_state.observers``) instead.
"""

from .function import CompileError, ConcreteFunction, Function
from .signature import TensorSpec

# ``ad.function``, the decorator, is ``function.function``; here ``function``
# stays the module's name, so ``autodiff.tracing.function.MAX_TRACES`` reads.
__all__ = ["Function", "ConcreteFunction", "CompileError", "TensorSpec"]
