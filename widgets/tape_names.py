"""Every name the widgets show for a tensor, and the limits on how long they get.

It owns three things:

- **A tape's names.** ``tape_names(tape)`` gives what ``tape.names()``
  gives (variables by name; other tensors ``v0``, ``v1``... in record order,
  the numbers of ``print(tape)``), in one pass over the records, with two
  differences: a variable created without a name (every one is called
  ``Variable``) takes the name scope it is first read in, its module's path,
  so two of them can be told apart; and a name longer than ``NAME_LIMIT``
  characters is shown by its start and its length.

      >>> from widgets.tape_names import tape_names
      >>> class Cell(ad.Module):
      ...     def __init__(self):
      ...         super().__init__()
      ...         self.w, self.u = ad.Variable(1.0), ad.Variable(2.0)
      ...     def __call__(self, x):
      ...         return x * self.w + self.u
      >>> cell = Cell()
      >>> with ad.GradientTape() as tape:
      ...     with ad.name_scope("gru"):
      ...         y = cell(ad.constant(1.0))
      >>> sorted(tape_names(tape).values())[:2]   # tape.names(): Variable, Variable
      ['gru/cell/Variable', 'gru/cell/Variable_1']

- **The names a user gives.** ``expand_names`` reads the ``names=`` of
  ``replay`` and the player: ``{"loss": loss}`` names a tensor (in titles,
  sentences and gradient chips: ``d(loss)/d(x)``, not ``d(v11)/d(x)``);
  ``{"net": model}`` names every variable of a module by its attribute path
  (``net/dense/kernel``), which ``module_paths`` walks. The
  ``TrainingRecorder`` names a model's layers with ``module_paths`` too.

- **How much of a tape's printout a replay keeps.** ``TEXT_LIMIT`` records
  and ``TEXT_CHARS`` characters (``replay._snapshot``): a longer printout is
  left out of the page and replaced by one line saying how to print it.

Nothing here changes the engine's own names; ``tape.names()`` is untouched.
"""

from autodiff import Module
from autodiff.tensor import Variable

__all__ = ["tape_names", "expand_names", "module_paths", "TEXT_LIMIT", "TEXT_CHARS",
           "NAME_LIMIT"]

TEXT_LIMIT = 300      # records; a longer tape's printout is not stored in a replay
TEXT_CHARS = 60_000   # characters; nor is a printout longer than this (very long names)
NAME_LIMIT = 64    # characters of a variable's name shown; a saved model may carry any name
UNNAMED = "Variable"   # the name ad.Variable gets when none is given


def tape_names(tape, records=None):
    """``{tensor id: name}``: variables by name, other tensors v0, v1, ... in order.

    A variable's name longer than NAME_LIMIT characters is shortened (its
    first characters, then its length), so a hostile name cannot bloat a page.
    An unnamed variable read inside a name scope is called ``<scope>/Variable``
    (``_1``, ``_2``... when a scope reads several).

    Args:
        tape: a GradientTape.
        records: its records if already read (None: read them; a freed tape has none).

    Returns:
        The names, keyed by tensor id.
    """
    if records is None:
        try:
            records = tape.records
        except RuntimeError:
            records = ()
    variables = list(tape.watched_variables())
    names = {v._id: _shown(v._name) for v in variables}
    count = sum(1 for n in names.values() if n.startswith("v"))
    unnamed = {v._id for v in variables if v._name == UNNAMED}
    scope_of = {}   # unnamed variable id -> the scope of the first record reading it
    for rec in records:
        if unnamed and rec[7]:   # rec.scope, read by position: this loop is hot
            for i in rec.input_ids:
                if i in unnamed and i not in scope_of:
                    scope_of[i] = rec[7]
        for t in rec.inputs + rec.outputs:
            if t._id not in names:
                names[t._id] = f"v{count}"
                count += 1
    taken = set(names.values())
    for vid, scope in scope_of.items():
        base = name = f"{scope.rstrip('/')}/{UNNAMED}"
        k = 0
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        names[vid] = _shown(name)
    return names


def module_paths(module, prefix=None):
    """``{path: variable}`` for every variable of ``module``, by attribute path.

    A path joins the module's name (or ``prefix``), each submodule's name (as
    its name scope is) and the attribute holding the variable (list items by
    position, dicts by key); each variable once, at the first path met.
    Attributes are walked in a layer's own order (kernel before bias), a plain
    module's in sorted order, as ``Module.variables`` does.

    >>> from widgets.tape_names import module_paths
    >>> list(module_paths(ad.keras.Sequential([ad.layers.Dense(2, input_dim=3)], name="net")))
    ['net/dense/kernel', 'net/dense/bias']
    """
    found, seen = {}, set()

    def visit(value, base, key):
        if isinstance(value, Module):
            if id(value) in seen:
                return
            seen.add(id(value))
            here = f"{base}/{value.name}" if base is not None else root
            items = vars(value).items()
            for k, item in (items if "_ad_weights" in vars(value) else sorted(items)):
                if not k.startswith("_ad_"):
                    visit(item, here, k)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                visit(item, base, f"{key}/{i}")
        elif isinstance(value, dict):
            for k in sorted(value, key=str):
                visit(value[k], base, f"{key}/{k}")
        elif isinstance(value, Variable) and id(value) not in seen:
            seen.add(id(value))
            found[f"{base}/{key}"] = value

    root = module.name if prefix is None else str(prefix)
    visit(module, None, None)
    return found


def expand_names(user_names):
    """``{name: tensor}`` from what a user passes as ``names=`` (modules expanded).

    Args:
        user_names: ``{display name: tensor or module}``.

    Returns:
        ``{name: tensor}``; a module's variables named ``<name>/<attribute path>``.

    >>> from widgets.tape_names import expand_names
    >>> model = ad.keras.Sequential([ad.layers.Dense(2, input_dim=3)], name="net")
    >>> loss = ad.reduce_sum(model(ad.ones([1, 3])))
    >>> sorted(expand_names({"loss": loss, "net": model}))
    ['loss', 'net/dense/bias', 'net/dense/kernel']
    """
    expanded = {}
    for name, value in (user_names or {}).items():
        if isinstance(value, Module):
            expanded.update(module_paths(value, prefix=name))
        else:
            expanded[str(name)] = value
    return expanded


def _shown(name):
    """``name``, or its first characters and its length when it is longer than NAME_LIMIT.

    >>> from widgets.tape_names import _shown
    >>> _shown("w" * 100000)[-20:]
    'wwww…(100,000 chars)'
    """
    if len(name) <= NAME_LIMIT:
        return name
    return f"{name[:NAME_LIMIT - 16]}…({len(name):,} chars)"
