"""Control flow as TensorFlow has it: ``cond``, ``switch_case``, ``while_loop``, ``scan``,
``map_fn``, ``foldl``, ``foldr``, and ``TensorArray``, the list a loop fills.

Reading order: ``staged.py`` (how a control-flow op becomes one graph node
holding its functions as subgraphs, and how gradients go through it),
``cond.py`` (``cond``, ``switch_case``), ``while_loop.py``, ``sequences.py``
(``scan``, ``map_fn``, ``foldl``, ``foldr``), ``tensor_array.py`` (``TensorArray``, carried
through a loop as one buffer tensor), ``branch_arrays.py`` (an array returned by the
branches of a staged ``if``), then ``loaded.py`` (the nodes
rebuilt from a saved model's plain data).

Eagerly every op here is a Python ``if`` or loop; inside ``ad.function`` it is
one node that decides on every call. AutoGraph (``autodiff/autograph``) turns
a Python ``if``/``while``/``for`` on a tensor into these ops.

May import: the engine (``autodiff``'s top-level modules and ``ops/``) and
``autodiff.tracing`` (a subgraph is traced with its Tracer). The tracing
package does not import this one.
"""

from .cond import cond, switch_case
from .sequences import foldl, foldr, map_fn, scan
from .tensor_array import TensorArray
from .while_loop import while_loop

__all__ = ["TensorArray", "cond", "switch_case", "while_loop", "scan", "map_fn", "foldl", "foldr"]
