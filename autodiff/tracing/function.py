"""``ad.function`` and ``ad.TensorSpec``: trace a Python function once, then replay its graph.

    >>> @ad.function
    ... def f(x):
    ...     print("tracing")           # a Python side effect: runs only while tracing
    ...     return ad.sin(x) * x
    >>> y = f(ad.constant(1.0))            # first call: traces, then runs the graph
    tracing
    >>> y = f(ad.constant(2.0))            # same shape and dtype: replays the graph, no print
    >>> y = f(ad.constant([1.0, 2.0]))     # a new shape: a new trace
    tracing
    >>> f.experimental_get_tracing_count()
    2

How it works (the graph is described in ``graph.py``, keys in ``signature.py``):

1. **Binding.** The call's arguments become a *signature key*: the shape
   and dtype of every tensor argument, and the value of every Python
   argument (``f(x, 2)`` and ``f(x, 3)`` are two traces, as in TensorFlow).
   With ``input_signature`` the arguments must fit those TensorSpecs
   (a TypeError, as in TensorFlow 2, for an incompatible shape, a wrong
   dtype or number of arguments, naming the argument); Python numbers are
   converted to the spec's dtype.
2. **Tracing** (once per key). The function runs on fresh placeholder
   tensors holding the call's values, while a Tracer records every op and
   the tapes that were recording are paused. The result is a
   ``ConcreteFunction``: one graph for one key.
3. **Running.** The graph's ops are replayed on the call's tensors through
   the op registry. A tape recording outside sees those ops, so
   differentiating a traced function is exactly differentiating eager code
   (a custom gradient inside is traced too: see ``graph.py``).

Differences from TensorFlow, all from tracing on concrete values: a trace
is made at the first call's sizes, and a signature with ``None`` dimensions
serves every size only once a second trace at another size has shown that
nothing depended on the size (``polymorphic.py``; TensorFlow traces such a
signature once, symbolically); reading a traced value on the host with
``float()``, ``.numpy()`` or ``np.asarray()`` raises TensorFlow's error for it
(``traced_reads.py``; using it as a Python bool raises too, and
AutoGraph converts ``if``/``while``/``for``: ``autodiff/autograph``); a Variable passed
as an argument without ``input_signature`` is captured by reference (one
trace per variable).

Traces are kept in a bounded cache (``MAX_TRACES`` per function, least
recently used dropped first), and a trace keyed by a Variable holds it
weakly: the trace goes when the Variable does. As TensorFlow does, when 5
of the last 10 calls traced again, a warning says so (twice at most per
function): Python numbers and new Variables in the arguments are the usual
cause; pass tensors, or give an ``input_signature``.
"""

import collections
import functools
import inspect
import warnings
import weakref

from .. import nest
from .. import tape as _tape
from ..tape import AutodiffWarning
from ..tensor import Tensor, Variable
from ..compiler import STAGES
from .concrete_function import CompileError, ConcreteFunction, hold_weakly
from .graph import Tracer, trace
from .polymorphic import general_description, general_key, same_graph
from .signature import TensorSpec, bind, describe, is_placeholder, key_of, probe_value

__all__ = ["TensorSpec", "function", "Function", "ConcreteFunction", "CompileError"]

MAX_TRACES = 32            # traces kept per Function; the least recently used goes first
RETRACE_WINDOW = 10        # like TensorFlow: warn when, of the last 10 calls,
RETRACE_THRESHOLD = 5      # at least 5 traced,
RETRACE_MAX_WARNINGS = 2   # and at most twice per function


class Function:
    """What ``ad.function`` returns: a callable that traces once per signature key.

    Also a descriptor: on a class (``ad.Module`` methods), each instance gets
    its own bound Function with its own traces.
    """

    def __init__(self, python_function, input_signature=None, name=None, instance=None,
                 jit_compile=False, autograph=True, experimental_fuse=False):
        if input_signature is not None:
            input_signature = tuple(input_signature)
            for spec in nest.flatten(input_signature):
                if not isinstance(spec, TensorSpec):
                    raise TypeError(f"input_signature must be a list of ad.TensorSpec (nested "
                                    f"lists allowed), got {spec!r}")
        self._python_function = python_function
        self._autograph = bool(autograph)
        self._traced_function = None   # the AutoGraph-converted function, made on first trace
        self._jit_compile = bool(jit_compile)
        if experimental_fuse and not jit_compile:
            raise ValueError("ad.function: experimental_fuse=True fuses the program that "
                             "jit_compile=True writes; pass jit_compile=True too")
        self._fuse = bool(experimental_fuse)
        self._input_signature = input_signature
        self._instance = instance
        self._name = name or getattr(python_function, "__name__", "function")
        self._concrete = collections.OrderedDict()  # key -> ConcreteFunction, LRU order
        self._tracing_count = 0
        self._recent = collections.deque(maxlen=RETRACE_WINDOW)  # did each recent call trace?
        self._keys_by_shapes = {}   # tensor-only calls: ((shape, dtype), ...) -> signature key
        self._by_general = {}       # a key with None sizes -> the first trace made for it
        self._retrace_warnings = 0
        self._fast = None   # the last call's trace's fused one-call function (see __call__)
        functools.update_wrapper(self, python_function, updated=())
        try:
            names = list(inspect.signature(python_function).parameters)
        except (TypeError, ValueError):
            names = []
        self._arg_names = tuple(names[1:] if instance is not None else names)

    @property
    def python_function(self):
        return self._python_function

    @property
    def input_signature(self):
        return self._input_signature

    @property
    def concrete_functions(self):
        """The traces made so far, oldest first (one that serves every size once)."""
        return list({id(c): c for c in self._concrete.values()}.values())

    def experimental_get_tracing_count(self):
        """How many times the Python function has been traced."""
        return self._tracing_count

    def __get__(self, instance, owner=None):
        if instance is None or self._instance is not None:
            return self
        try:  # kept on the instance: its traces live and die with it
            cache = instance.__dict__.setdefault("_ad_functions", {})
        except AttributeError:  # a class with __slots__
            cache = self.__dict__.setdefault("_ad_slotted", weakref.WeakKeyDictionary()) \
                .setdefault(instance, {})
        bound = cache.get(id(self))
        if bound is None:
            bound = cache[id(self)] = Function(self._python_function, self._input_signature,
                                               self._name, instance, self._jit_compile,
                                               self._autograph, self._fuse)
        return bound

    def __call__(self, *args, **kwargs):
        fast = self._fast
        if fast is not None and not kwargs and not _tape.thread_state.active:
            # The same trace as the last call's, fused (compiler/fused/fast.py): its function
            # checks every argument (Tensors of the traced shapes and dtypes) or returns None.
            # Nothing else was looked up since, so the trace is the most recently used.
            try:
                results = fast(args)
            except BaseException:
                self._recent.append(False)   # as the path below would have noted the call
                raise
            if results is not None:
                self._recent.append(False)
                return results
        shapes = None
        if not kwargs and self._input_signature is None:
            # The commonest call, f(x, y) on tensors: found by shapes and dtypes alone,
            # without building the call's structure and signature key (W1, W5, W6).
            shapes = []
            for a in args:
                if type(a) is not Tensor:
                    shapes = None
                    break
                shapes.append((a._value.shape, a._value.dtype))
        if shapes is not None:
            shapes = tuple(shapes)
            key = self._keys_by_shapes.get(shapes)
            concrete = self._concrete.get(key) if key is not None else None
            if concrete is not None:
                self._concrete.move_to_end(key)
                self._recent.append(False)   # _note_call(traced=False): nothing to warn
                results = concrete._run(args)
                self._fast = None if concrete.serves_any_size else (concrete._fast or None)
                return results
        structure = bind(args, kwargs, self._input_signature, self._arg_names, self._name)
        count = self._tracing_count
        concrete = self._concrete_for(structure)
        self._note_call(traced=self._tracing_count > count)
        if shapes is not None:
            if len(self._keys_by_shapes) >= 4 * MAX_TRACES:
                self._keys_by_shapes.clear()
            self._keys_by_shapes[shapes] = concrete._key
        return concrete._run([t for t in nest.flatten(structure) if is_placeholder(t)])

    def _note_call(self, traced):
        """Warns (as TensorFlow does) when most recent calls traced again."""
        self._recent.append(traced)
        if traced and sum(self._recent) >= RETRACE_THRESHOLD and \
                self._retrace_warnings < RETRACE_MAX_WARNINGS:
            self._retrace_warnings += 1
            warnings.warn(
                f"ad.function {self._name!r} has been traced {self._tracing_count} times; "
                f"{sum(self._recent)} of its last {len(self._recent)} calls traced it again. "
                f"Tracing is slow, and each trace is kept (up to {MAX_TRACES}). Retracing comes "
                f"from arguments that make a new signature key: each distinct Python number "
                f"(f(x, 0.1), f(x, 0.2), ...), each new Variable, each new shape. Pass tensors "
                f"(ad.constant(0.1)) instead of Python numbers, or give the function an "
                f"input_signature of ad.TensorSpec, so that one trace serves every call.",
                AutodiffWarning, stacklevel=3)

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments (tensors, values, or TensorSpecs), tracing if needed.

        With no arguments, the ``input_signature``'s; unknown sizes are traced
        as 1 and an unknown rank as a scalar.
        """
        if not args and not kwargs and self._input_signature is not None:
            args = nest.map_structure(probe_value, list(self._input_signature))
        else:
            args, kwargs = nest.map_structure(
                lambda v: probe_value(v) if isinstance(v, TensorSpec) else v, [list(args), kwargs])
        return self._concrete_for(bind(args, kwargs, self._input_signature, self._arg_names,
                                       self._name))

    def check_any_size(self):
        """Traces an ``input_signature`` with None sizes at two sizes (1 and 2), so that a
        trace serving every size is known as such (``polymorphic.py``; saving does this)."""
        if self._input_signature is None:
            return
        for size in (1, 2):
            args = nest.map_structure(lambda spec: probe_value(spec, size),
                                      list(self._input_signature))
            self._concrete_for(bind(args, {}, self._input_signature, self._arg_names, self._name))

    def _concrete_for(self, structure):
        self._fast = None   # the cache may change: the next call looks its trace up
        description = describe(structure)
        key = key_of(description)
        concrete = self._concrete.get(key)
        if concrete is not None:
            self._concrete.move_to_end(key)
            return concrete
        general = general_key(self._input_signature, description)
        known = self._by_general.get(general) if general is not None else None
        if known is not None and known.serves_any_size:
            concrete = known           # one trace serves every size (polymorphic.py)
        else:
            concrete = self._trace(structure, description, key)
            concrete._key = key
            if known is not None and same_graph(known.graph, concrete.graph):
                self._tracing_count -= 1   # a check that the first trace serves this size too
                known.serve_any_size(general_description(self._input_signature, description))
                concrete = known
            elif general is not None and known is None:
                self._by_general[general] = concrete
        self._concrete[key] = concrete
        while len(self._concrete) > MAX_TRACES:
            self._concrete.popitem(last=False)
        return concrete

    def _trace(self, structure, description, key):
        flat = nest.flatten(structure)
        placeholders = [Tensor(leaf._value) for leaf in flat if is_placeholder(leaf)]
        fresh = iter(placeholders)
        args, kwargs = nest.pack_sequence_as(
            structure, [next(fresh) if is_placeholder(leaf) else leaf for leaf in flat])
        if self._instance is not None:
            args = [self._instance] + list(args)
        self._tracing_count += 1
        python_function = self._function_to_trace()
        open_sizes = general_key(self._input_signature, description) is not None
        graph = trace(Tracer(placeholders, open_sizes=open_sizes),
                      lambda: python_function(*args, **kwargs))
        concrete = ConcreteFunction(graph, self._name, description, self._jit_compile,
                                    self._placeholder_names(structure), self._fuse)
        # Objects in the key are keyed by id, so the trace must keep them alive: except
        # Variables, held weakly (a trace must not keep a model's weights alive); when
        # one dies, its traces go, before its id can be reused.
        concrete._keepalive = [leaf for leaf in flat
                               if not is_placeholder(leaf) and not isinstance(leaf, Variable)]
        arguments = [leaf for leaf in flat if isinstance(leaf, Variable)]
        if arguments:
            evict = _evictor(weakref.ref(self), key)
            concrete._variable_refs = [weakref.ref(v, evict) for v in arguments]
            hold_weakly(graph, {id(v) for v in arguments})
        return concrete

    def _function_to_trace(self):
        """The Python function, converted by AutoGraph when ``autograph=True``."""
        if not self._autograph:
            return self._python_function
        if self._traced_function is None:
            from .. import autograph
            self._traced_function = autograph.convert(self._python_function)
        return self._traced_function

    def _placeholder_names(self, structure):
        """A name per tensor argument, for compiled source: ``x``, or ``x_0, x_1`` in a list."""
        args, kwargs = structure
        names = []
        for name, value in list(zip(self._arg_names, args)) + sorted(kwargs.items()):
            leaves = [leaf for leaf in nest.flatten(value) if is_placeholder(leaf)]
            names += [name] if len(leaves) == 1 else [f"{name}_{k}" for k in range(len(leaves))]
        return tuple(names)

    def experimental_get_compiler_ir(self, *args, **kwargs):
        """The compiled form of the trace for these arguments (TensorFlow's method).

        Returns a function ``ir(stage="python")``: ``"python"`` gives the
        straight-line program ``jit_compile=True`` runs (``compiler/program.py``),
        ``"graph"`` the traced graph. It works with or without ``jit_compile``.

        >>> f = ad.function(lambda x: ad.sin(x) * x, jit_compile=True)
        >>> print(f.experimental_get_compiler_ir(ad.constant(1.0))(stage="python"))
        def f_lambda(xp, x):
            v0 = xp.sin(x)
            v1 = v0 * x
            del v0
            return (v1,)
        """
        concrete = self.get_concrete_function(*args, **kwargs)

        def ir(stage="python", device_name=None, platform_name=None):
            if stage == "python":
                return concrete.program().source
            if stage == "graph":
                return str(concrete.graph)
            raise ValueError(f"experimental_get_compiler_ir: unknown stage {stage!r}; this "
                             f"engine compiles to {' or '.join(map(repr, STAGES))}")
        return ir

    def __repr__(self):
        return f"<ad.function {self._name}: {self._tracing_count} trace(s)>"


def _evictor(function_ref, key):
    def evict(_):
        fn = function_ref()
        if fn is not None:
            fn._concrete.pop(key, None)
            fn._fast = None
    return evict


def function(func=None, input_signature=None, autograph=True, jit_compile=None,
             reduce_retracing=False, name=None, experimental_fuse=False):
    """Compiles ``func`` into a traced graph (``tf.function``); also a decorator.

    Args:
        func: the Python function (or method) to trace.
        input_signature: a list of ``ad.TensorSpec`` (nested lists allowed),
            one per argument; calls must fit it.
        jit_compile: True writes each trace out as a straight-line Python
            program over the backend's arrays (``compiler/program.py``) and runs that
            when no tape records; ``f.experimental_get_compiler_ir(*args)()``
            shows it. Results equal the uncompiled ones.
        autograph: True (the default, as in TensorFlow) traces a converted copy
            of the function in which a Python ``if``/``while``/``for`` on a tensor
            becomes ``ad.cond``/``ad.while_loop`` (``autodiff/autograph``;
            ``ad.autograph.to_code(f)`` shows it). False traces it as written,
            and a traced tensor used as a Python bool raises
            ``ad.errors.OperatorNotAllowedInGraphError``.
        reduce_retracing: accepted for TensorFlow compatibility; it changes nothing here.
        name: a name for the traces (default: the function's).
        experimental_fuse: with ``jit_compile=True``, run the program's elementwise
            chains as numba loops (``compiler/fused/``; the ``[fast]`` extra), one
            loop per chain instead of one NumPy call per op. An extension (TensorFlow
            has no such argument): ``experimental_get_compiler_ir`` still shows the
            NumPy program, which runs instead when numba is missing (with a warning)
            or the backend is not NumPy. Arithmetic is the same bit for bit; sin,
            cos, exp, log and tanh may differ from NumPy's in the last bit. The first
            call compiles (seconds for a long chain).

    Returns:
        A ``Function``.

    >>> @ad.function(input_signature=[ad.TensorSpec([None])])
    ... def double(x):
    ...     return 2.0 * x
    >>> double([1.0, 2.0]).numpy()
    array([2., 4.], dtype=float32)
    """
    if func is None:
        return lambda f: Function(f, input_signature, name, jit_compile=jit_compile,
                                  autograph=autograph, experimental_fuse=experimental_fuse)
    return Function(func, input_signature, name, jit_compile=jit_compile, autograph=autograph,
                    experimental_fuse=experimental_fuse)
