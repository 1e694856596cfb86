"""The compiler: a traced graph written out as one straight-line Python program.

``ad.function(f, jit_compile=True)`` hands its trace here. Reading order:
``program.py`` (writing the program, line by line), ``passes.py`` (what is
planned before writing: dead code, shared subexpressions, constants, buffer
reuse), then the rewrites the plan applies: ``seeds.py`` (a Jacobian's
one-hot seeds), ``zeros.py`` (forward mode's zero tangents, behind
finiteness checks), ``concat.py`` (Jacobian chunks written into their
result), ``conv_rows.py`` (a filter gradient reading its convolution's
im2col rows), ``rowwise.py`` (an elementwise op meeting a channel row, run
with a wide inner loop), ``inline.py`` (simple ops as the expressions they compute), and
``control_flow.py`` (branches and loops as ``if``/``while``/``for`` statements
calling their own compiled programs). Last, an optional form: ``fused/``
(``experimental_fuse=True``: the program's elementwise chains as numba loops;
``__init__.py`` finds them, ``kernels.py`` writes and compiles the loops,
``runs.py`` makes the loops called in a row one numba call). Apart:
``blas_warmup.py``, the one larger matrix product a process makes when its
first compiled program runs, so that the small products of a training step
run at OpenBLAS's full speed from the start (a timing aid; no value changes).

May import: the engine and the graph it compiles (``autodiff.tracing.graph``);
numba, in ``fused/`` only, when it is installed (the ``[fast]`` extra).
It never imports ``tracing.function``, which calls it, and the engine never
imports it.
"""

from .program import STAGES, Program, compile_graph

__all__ = ["compile_graph", "Program", "STAGES"]
