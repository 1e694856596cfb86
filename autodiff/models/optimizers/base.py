"""The optimizers' shared part (Keras 3's ``BaseOptimizer``): learning rate, ``iterations``,
slots, gradient clipping, weight decay and ``apply_gradients``.

An optimizer turns gradients into Variable updates, outside every tape:

    >>> w = ad.Variable(1.0)
    >>> x, y = ad.constant([1.0, 2.0]), ad.constant([2.0, 4.0])
    >>> opt = ad.optimizers.Adam(learning_rate=0.01)
    >>> with ad.GradientTape() as tape:
    ...     loss = ad.reduce_sum((w * x - y) ** 2)
    >>> opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
    <ad.Variable 'adam/iteration:0' shape=() dtype=int64, numpy=1>
    >>> round(float(w), 4)             # a step towards w = 2
    1.01

Updates use ``Variable.assign`` / ``assign_add`` / ``assign_sub`` with this
library's ops, in the order Keras 3 computes them, so float32 results match
Keras to rounding. Per-variable state ("slots": momentum, Adam's ``m`` and
``v``) is created the first time a variable is updated.

As in Keras 3: a None gradient skips its variable with a warning; all None
raises ValueError; ``iterations`` (an int64 Variable) counts
``apply_gradients`` calls; ``clipnorm`` / ``global_clipnorm`` / ``clipvalue``
clip the gradients first, then ``weight_decay`` shrinks the variables
(``w -= w * weight_decay * lr``), then each variable takes its step.

Everything that changes from step to step lives in Variables and is read
with ops (the step counter, the learning rate or its schedule, the slots),
and one ``apply_gradients`` call is one indivisible step, even with threads
sharing the optimizer and inside ``ad.function`` (see ``atomic.py``).

How a step runs: the scalars of the step (the learning rate or its
schedule's value, Adam's bias correction) are computed once per step and
dtype (``_step_scalars``), with ops, or, when nothing records or observes the
thread and the arrays are NumPy's, on host 0-d arrays with the very ufuncs
those ops' forwards call (``raw_scalars``: the same floats, without an op's
overhead a scalar); then the variables of one dtype take
their step together (``_step_group``): their gradients, values and slots
laid end to end in one flat array each, the rule run once on those as a few
array operations (``_update_arrays``: every slot written by one expression,
temporaries updated in place with ``out=``), and each variable and slot
takes a view of its piece of the fresh result as its new value. Eager,
``ad.function`` and ``jit_compile=True`` all run this same code (the traced
step is one node that calls it), so the three agree bit for bit, and the
floats are those of the op-by-op form Keras 3 writes (each array operation
is the op the library's own forward would call).
"""

import threading
import warnings

from ... import backend, dtypes
from ...ops import creation, elementwise, predicates
from ...ops.math_extra import add_n
from ...ops.reduce import reduce_sum
from ...tensor import Tensor, convert_to_tensor
from ...variable import Variable
from .atomic import run_atomically
from .flat_step import _store, step_group
from .schedules import LearningRateSchedule, raw_rate
from .sparse import densify, is_sparse, with_squares
from .step_scalars import _scalar, _scalar_value, raw_scalars

__all__ = ["Optimizer"]

# Keras 3 arguments this library does not implement: refused by name, never ignored.
_UNSUPPORTED = {"use_ema": False, "ema_momentum": 0.99, "ema_overwrite_frequency": None,
                "loss_scale_factor": None, "gradient_accumulation_steps": None}


class Optimizer:
    """The shared part: learning rate, ``iterations``, slots and ``apply_gradients``.

    Args:
        learning_rate: a float (kept in the float32 Variable ``learning_rate``),
            a ``schedules.LearningRateSchedule`` (called with ``iterations``),
            or a callable taking no arguments, as in Keras 3.
        name: the optimizer's name (``'sgd'``, ``'adam'``).
        weight_decay: decoupled decay per step, times the learning rate (None: off).
        clipnorm: clip each gradient to this L2 norm.
        global_clipnorm: scale all gradients so their joint L2 norm is at most this.
        clipvalue: clip each gradient's elements to ``[-clipvalue, clipvalue]``.

    Subclasses implement ``update_step(gradient, variable, learning_rate)``.
    Keras' ``use_ema``, ``loss_scale_factor`` and ``gradient_accumulation_steps``
    raise NotImplementedError naming them.
    """

    def __init__(self, learning_rate, name, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, **kwargs):
        unknown = sorted(k for k in kwargs if k not in _UNSUPPORTED)
        if unknown:
            raise ValueError(f"{type(self).__name__}: argument(s) not recognized: {unknown}")
        used = sorted(k for k, v in kwargs.items() if v != _UNSUPPORTED[k])
        if used:
            raise NotImplementedError(f"{type(self).__name__}: {', '.join(used)} "
                                      f"{'is' if len(used) == 1 else 'are'} not implemented")
        if sum(c is not None for c in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can "
                             f"be set. Received: clipnorm={clipnorm}, clipvalue={clipvalue}, "
                             f"global_clipnorm={global_clipnorm}")
        self.name = name
        self.weight_decay = None if weight_decay is None else float(weight_decay)
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self.iterations = Variable(0, dtype=dtypes.int64, trainable=False,
                                   name=f"{name}/iteration")
        self._learning_rate = self._build_learning_rate(learning_rate)
        self._slots = {}   # (slot name, variable id) -> Variable
        self._flat_views = {}   # variable ids -> the last step's flat arrays (flat_step.py)
        self._lock = threading.RLock()   # one apply_gradients at a time (atomic.py)

    def _build_learning_rate(self, learning_rate):
        if isinstance(learning_rate, LearningRateSchedule) or callable(learning_rate):
            return learning_rate
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float, Tensor)):
            raise ValueError(f"{type(self).__name__}: `learning_rate` must be a float, a "
                             f"LearningRateSchedule or a callable; received "
                             f"learning_rate={learning_rate!r}")
        return Variable(learning_rate, dtype=dtypes.float32, trainable=False,
                        name=f"{self.name}/learning_rate")

    @property
    def learning_rate(self):
        """The current learning rate: the ``learning_rate`` Variable, or the schedule's
        value at ``iterations`` (a tensor), as Keras 3's ``optimizer.learning_rate``."""
        lr = self._learning_rate
        if isinstance(lr, LearningRateSchedule):
            return lr(self.iterations)
        return lr() if callable(lr) else lr

    @learning_rate.setter
    def learning_rate(self, value):
        if isinstance(self._learning_rate, LearningRateSchedule):
            raise TypeError(
                "This optimizer was created with a `LearningRateSchedule` object as its "
                "`learning_rate` constructor argument, hence its learning rate is not "
                "settable. If you need the learning rate to be settable, you should "
                "instantiate the optimizer with a float `learning_rate` argument.")
        if isinstance(self._learning_rate, Variable) and not callable(value):
            self._learning_rate.assign(value)   # a step traced earlier reads the new value
        else:
            self._learning_rate = self._build_learning_rate(value)

    @property
    def variables(self):
        """``iterations``, ``learning_rate`` (when it is a Variable) and every slot, in
        creation order, as Keras 3."""
        rate = [self._learning_rate] if isinstance(self._learning_rate, Variable) else []
        return [self.iterations] + rate + list(self._slots.values())

    def slot(self, variable, name, initial=0.0):
        """The optimizer's ``name`` state for ``variable`` (``initial`` everywhere, made on
        first use)."""
        key = (name, variable._id)
        if key not in self._slots:
            base = variable.path if hasattr(variable, "path") else variable.name.split(":")[0]
            value = creation.fill(tuple(variable.shape), convert_to_tensor(initial, variable.dtype))
            self._slots[key] = Variable(value, trainable=False,
                                        name=f"{base.replace('/', '_')}_{name}")
        return self._slots[key]

    def apply_gradients(self, grads_and_vars):
        """Applies one update to each variable that has a gradient: one indivisible step.

        Args:
            grads_and_vars: pairs ``(gradient, variable)``, e.g. ``zip(grads, vars)``.

        Returns:
            ``iterations`` after the step (an int64 Variable), as Keras.

        Raises:
            ValueError: no variable has a gradient, or a gradient's shape
                differs from its variable's.
        """
        pairs = list(grads_and_vars)
        kept = [(g, v) for g, v in pairs if g is not None]
        if not kept:
            raise ValueError("apply_gradients: every gradient is None, so no variable can be "
                             "updated (does the loss depend on the variables, and was it "
                             "computed inside the tape?)")
        missing = [v.name for g, v in pairs if g is None]
        if missing:
            warnings.warn(f"apply_gradients: the gradients of the variables {missing} are "
                          f"None (the loss does not depend on them); they are left unchanged",
                          UserWarning, stacklevel=2)
        checked = []
        for g, v in kept:
            if not isinstance(v, Variable):
                raise TypeError(f"{type(self).__name__}.apply_gradients: expected Variables, "
                                f"got {type(v).__name__}")
            if not is_sparse(g):   # IndexedSlices stay so for the rule (sparse.py)
                g = convert_to_tensor(g)
            # raw shapes for a tensor: a TensorShape per pair costs more than its step
            g_shape = g._value.shape if isinstance(g, Tensor) else tuple(g.shape)
            if g_shape != v._value.shape:
                raise ValueError(f"{type(self).__name__}.apply_gradients: the gradient for "
                                 f"{v.name} has shape {tuple(g.shape)}, the variable "
                                 f"{tuple(v.shape)}")
            checked.append((g if g.dtype == v.dtype else _cast(g, v.dtype), v))
        return run_atomically(self, checked)

    def _slot_groups(self):
        """The slots, grouped as Keras 3 creates them: ``[(names...), ...]``; the names in one
        group alternate per variable, the groups follow one another."""
        return []

    def build(self, var_list):
        """Creates every slot of every variable in ``var_list`` in Keras 3's order, so the
        optimizer's ``variables`` line up with a Keras file's (done by the first step)."""
        for group in self._slot_groups():
            for variable in var_list:
                for name, initial in group:
                    self.slot(variable, name, initial)
        self.built = True

    built = False

    def _apply_now(self, pairs):
        """The step itself, eager, under ``self._lock``: clip, decay, update, count."""
        variables = [v for _, v in pairs]
        if not self.built:
            self.build(variables)
        grads = self._clip_gradients([g for g, _ in pairs])
        own_rule = type(self).update_step is not Optimizer.update_step   # written with ops
        lr = self._step_rate(not own_rule and raw_scalars(variables[0]))
        self._apply_weight_decay(variables, lr)
        if own_rule:
            for g, v in zip(grads, variables):
                self.update_step(g, v, lr)
        else:
            scalars = {}   # dtype -> this step's scalars, computed once for all its variables
            groups = {}    # dtype -> the dense (gradient, variable) pairs: one step for all
            for g, v in zip(grads, variables):
                dtype = v._value.dtype
                if dtype not in scalars:
                    scalars[dtype] = self._step_scalars(lr, v)
                step = scalars[dtype]
                if is_sparse(g):   # Keras 3's sparse update: squares added per occurrence
                    g, squares = densify(g, v.dtype)
                    self._step_arrays(g._value, v, with_squares(step, squares))
                else:
                    groups.setdefault(dtype, []).append((g._value, v))
            for dtype, group in groups.items():
                if len(group) == 1:
                    self._step_arrays(group[0][0], group[0][1], scalars[dtype])
                else:
                    self._step_group(group, scalars[dtype])
        self.iterations.assign_add(1)

    def _step_rate(self, raw):
        """This step's learning rate: ``learning_rate`` (a tensor), or with ``raw`` and a
        built-in schedule, its value on host 0-d arrays (``schedules.raw_rate``)."""
        if raw and isinstance(self._learning_rate, LearningRateSchedule):
            rate = raw_rate(self._learning_rate, self.iterations._value)
            if rate is not None:
                return rate
        return self.learning_rate

    def _step_group(self, group, scalars):
        """Many variables of one dtype in one step, as one flat array each (``flat_step``):
        the rule runs once on those, elementwise, so each element gets exactly the floats
        it would alone, and every new value is a view of its piece of the fresh result."""
        step_group(self, group, scalars)

    def _step_arrays(self, gradient, variable, scalars):
        """One variable's step on raw arrays: ``_update_arrays``, then the new values stored."""
        names = [name for group in self._slot_groups() for name, _ in group]
        slots = {name: self.slot(variable, name) for name in names}
        value = variable._value
        shape = value.shape   # a 0-d variable steps as shape (1,): NumPy's ufuncs give
        if not shape:         # scalars, not arrays, on 0-d arrays, and take no out= there
            value, gradient = value.reshape(1), gradient.reshape(1)
        new = self._update_arrays(backend.namespace(backend.backend_of(value)), gradient, value,
                                  {name: slot._value.reshape(value.shape)
                                   for name, slot in slots.items()}, scalars)
        for name, array in new.items():
            _store(variable if name == "variable" else slots[name], array.reshape(shape))

    def _step_scalars(self, learning_rate, variable):
        """The step's scalars as 0-d arrays of ``variable``'s dtype, computed with ops or
        their raw twins (``raw_scalars``), so a schedule is read at this step:
        ``{"lr": ...}`` here; subclasses add their own."""
        return {"lr": _scalar_value(learning_rate, variable)}

    def _update_arrays(self, xp, g, w, slots, scalars):
        """The update rule on raw arrays: gradient ``g``, value ``w``, ``slots`` by name and
        ``scalars`` (``_step_scalars``). Returns the new arrays by name (``"variable"``
        and each slot written): fresh arrays, never ``w`` or a slot written in place."""
        raise NotImplementedError(f"{type(self).__name__} implements neither update_step "
                                  f"nor _update_arrays")

    def _clip_gradients(self, grads):
        """Keras 3's order of precedence: ``clipnorm``, else ``global_clipnorm``, else
        ``clipvalue``. Clipping makes an IndexedSlices gradient dense first."""
        if any(c and c > 0 for c in (self.clipnorm, self.global_clipnorm, self.clipvalue)):
            grads = [convert_to_tensor(g) for g in grads]
        if self.clipnorm and self.clipnorm > 0:
            return [_clip_by_norm(g, self.clipnorm) for g in grads]
        if self.global_clipnorm and self.global_clipnorm > 0:
            norm = elementwise.sqrt(add_n([reduce_sum(elementwise.square(g)) for g in grads]))
            clip = _scalar(float(self.global_clipnorm), norm)
            scale = clip * elementwise.minimum(1.0 / norm, 1.0 / clip)
            scale = scale + (norm - norm)   # NaN when the norm is not finite, as Keras
            return [g * _scalar(scale, g) for g in grads]
        if self.clipvalue and self.clipvalue > 0:
            return [elementwise.minimum(elementwise.maximum(g, _scalar(-self.clipvalue, g)),
                                        _scalar(self.clipvalue, g)) for g in grads]
        return grads

    def minimize(self, loss, var_list, tape=None):
        """``apply_gradients(zip(tape.gradient(loss, var_list), var_list))``.

        Args:
            loss: a Tensor computed under ``tape``, or a zero-argument callable
                (then it runs under a new tape).
            var_list: the variables to update.
            tape: the GradientTape that recorded ``loss`` (needed for a Tensor).
        """
        from ...tape import GradientTape
        if callable(loss):
            with GradientTape() as tape:
                value = loss()
            loss = value
        elif tape is None:
            raise ValueError("`tape` is required when a `Tensor` loss is passed.")
        var_list = list(var_list)
        return self.apply_gradients(zip(tape.gradient(loss, var_list), var_list))

    def update_step(self, gradient, variable, learning_rate):
        """One variable's step (Keras 3's method), as ``apply_gradients`` takes it.

        A subclass may override it with its own rule written with ops; the
        built-in optimizers write theirs as ``_update_arrays`` instead.
        """
        self._step_arrays(convert_to_tensor(gradient, variable.dtype)._value, variable,
                          self._step_scalars(learning_rate, variable))

    def _apply_weight_decay(self, variables, learning_rate):
        """Decoupled weight decay: ``w -= w * weight_decay * lr``, before the step."""
        if not self.weight_decay:
            return
        factors = {}   # dtype -> (weight_decay, lr) as 0-d arrays of it
        for variable in variables:
            if variable.dtype not in factors:
                factors[variable.dtype] = (_scalar(self.weight_decay, variable)._value,
                                           _scalar_value(learning_rate, variable))
            decay, lr = factors[variable.dtype]
            w = variable._value
            xp = backend.namespace(backend.backend_of(w))
            shrink = xp.multiply(xp.multiply(w, decay), lr)  # w - w * weight_decay * lr
            _store(variable, xp.asarray(xp.subtract(w, shrink)))

    def get_config(self):
        """The arguments this optimizer was made with (Keras' ``get_config``)."""
        lr = self._learning_rate
        rate = float(lr.numpy()) if isinstance(lr, Variable) else lr
        return {"name": self.name, "learning_rate": rate, "weight_decay": self.weight_decay,
                "clipnorm": self.clipnorm, "global_clipnorm": self.global_clipnorm,
                "clipvalue": self.clipvalue, **self._own_config()}

    # A subclass's own arguments and their types, in get_config's order (Adam: beta_1, ...).
    _own_arguments = {}

    def _keep_arguments(self, **values):
        """Stores the subclass's own arguments as attributes, as plain Python values."""
        for name, kind in self._own_arguments.items():
            setattr(self, name, kind(values[name]))

    def _own_config(self):
        return {name: getattr(self, name) for name in self._own_arguments}

    def __repr__(self):
        return f"<{type(self).__name__} learning_rate={self._learning_rate!r}>"


def _clip_by_norm(values, clip_norm):
    """``tf.clip_by_norm`` as Keras 3 calls it: ``values * c / max(||values||, c)``."""
    l2sum = reduce_sum(elementwise.square(values), keepdims=True)
    positive = predicates.greater(l2sum, _scalar(0.0, values))
    safe = predicates.where(positive, l2sum, creation.ones_like(l2sum))
    l2norm = predicates.where(positive, elementwise.sqrt(safe), l2sum)
    clip = _scalar(clip_norm, values)
    return values * clip / elementwise.maximum(l2norm, clip)


def _cast(gradient, dtype):
    """The gradient in the variable's dtype (an IndexedSlices: its values)."""
    if is_sparse(gradient):
        return gradient.with_values(elementwise.cast(gradient.values, dtype))
    return elementwise.cast(gradient, dtype)
