"""AutoGraph: a Python ``if``/``while``/``for`` on a tensor becomes ``ad.cond``/``ad.while_loop``.

``ad.function`` (with ``autograph=True``, the default, as in TensorFlow)
traces a converted copy of the function, so this is correct on every call:

    >>> @ad.function
    ... def f(x):
    ...     if ad.reduce_sum(x) > 0:
    ...         return 2 * x
    ...     return -x
    >>> f(ad.constant([-1.0])).numpy(), f(ad.constant([1.0])).numpy()
    (array([1.], dtype=float32), array([2.], dtype=float32))
    >>> code = ad.autograph.to_code(f)      # the converted source, to read (print it)
    >>> "ag__.if_stmt(" in code              # the tensor `if` became a call
    True

Reading order: ``converter.py`` (the source rewrite), ``operators.py`` (what
the rewritten code calls: a Python condition stays Python, a tensor
condition becomes a graph op).

Converted: ``if``/``elif``/``else``, ``while``, ``for x in ...`` (a tensor's
rows, ``ad.range(n)`` with a tensor ``n``, or any Python iterable), with
``break``, ``continue`` and ``return`` inside; ``and``/``or``/``not`` and
``a if t else b``; and, as in TensorFlow, the user's own functions (and
lambdas) that converted code calls. Not converted (they run as written, and
a tensor used as a Python bool there raises
``ad.errors.OperatorNotAllowedInGraphError``): the library's own functions,
``while``/``for`` with ``else``, functions with ``global``/``nonlocal`` or
that use ``super()``, lambdas that share their line with another lambda of
the same arguments, and functions whose source cannot be read.

May import: the engine and ``autodiff.control_flow`` (what converted code
becomes). ``autodiff.tracing`` imports this package when it traces.
"""

import ast
import functools
import inspect
import textwrap
import weakref

from . import operators
from .converter import convert_tree

__all__ = ["to_code", "convert", "ConversionError", "do_not_convert"]


class ConversionError(Exception):
    """The function could not be converted (why is in the message)."""


def _source_tree(fn):
    if hasattr(fn, "__wrapped__"):
        # A decorator's wrapper (ad.custom_gradient, functools.wraps ...): converting the
        # source would convert the undecorated function and drop what the decorator adds.
        raise ConversionError(f"{fn!r} is a decorated function; it is called as it is")
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as err:
        raise ConversionError(f"the source of {fn!r} cannot be read ({err})") from None
    if fn.__name__ == "<lambda>":
        return fn, _lambda_tree(fn, source)
    module = ast.parse(source)
    node = module.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise ConversionError(f"{fn!r} is not a plain function definition")
    if any(isinstance(n, ast.Name) and n.id == "super" for n in ast.walk(node)):
        raise ConversionError("functions calling super() are not converted")
    node.decorator_list = []
    return fn, node


def _lambda_tree(fn, source):
    """A lambda as ``def <name>(args): return body``, when its source line holds exactly one
    lambda with its arguments."""
    try:
        module = ast.parse(source)
    except SyntaxError:
        try:   # a lambda on a continuation line: parse it on its own
            module = ast.parse(source.strip().rstrip(",").rstrip(")"))
        except SyntaxError:
            raise ConversionError("the lambda's source cannot be parsed") from None
    names = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
    found = [n for n in ast.walk(module) if isinstance(n, ast.Lambda)
             and [a.arg for a in n.args.args] == names]
    if len(found) > 1:   # several on the line: the ones reading the same names
        found = [n for n in found if _names_read(n) == _names_read(fn)]
    if len({ast.dump(n) for n in found}) != 1:
        raise ConversionError("the lambda cannot be told apart from the others on its line")
    lam = found[0]
    node = ast.parse("def ag__lambda():\n    return None").body[0]
    node.args = lam.args
    node.body[0].value = lam.body
    return node


def _names_read(entity):
    """The global and free names a lambda (a function, or its syntax tree) reads."""
    code = entity.__code__ if callable(entity) else next(
        c for c in compile(ast.Expression(body=entity), "<lambda>", "eval").co_consts
        if hasattr(c, "co_names"))
    return set(code.co_names) | set(code.co_freevars)


def _converted_tree(fn):
    fn, node = _source_tree(fn)
    try:
        convert_tree(node)
    except NotImplementedError as err:
        raise ConversionError(str(err)) from None
    return fn, node


def to_code(entity):
    """The source ``ad.function`` traces for ``entity`` (a function or an ``ad.function``).

    Raises:
        ConversionError: ``entity`` cannot be converted (why is in the message).
    """
    fn = getattr(entity, "python_function", entity)
    _, node = _converted_tree(fn)
    return ast.unparse(node) + "\n"


def convert(fn):
    """A converted copy of ``fn`` (same globals and closure values), or ``fn`` itself when it
    cannot be converted or has no ``if``/``while``/``for``/boolean operator to convert."""
    if getattr(fn, "__ag_do_not_convert__", False):
        return fn
    if inspect.ismethod(fn):   # a bound method: its function converted, bound again
        converted = convert(fn.__func__)
        return fn if converted is fn.__func__ else converted.__get__(fn.__self__)
    try:
        original, node = _source_tree(fn)
    except (ConversionError, SyntaxError):
        return fn
    if not any(isinstance(n, (ast.If, ast.While, ast.For, ast.BoolOp, ast.IfExp, ast.Call))
               or (isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not))
               for n in ast.walk(node)):
        return fn
    try:
        convert_tree(node)
        code = compile(_factory(original, node), f"<autograph {original.__qualname__}>", "exec")
    except (NotImplementedError, SyntaxError):
        return fn
    namespace = {}
    exec(code, original.__globals__, namespace)   # noqa: S102 - the user's own function
    cells = original.__closure__ or ()
    closure = [c.cell_contents if _filled(c) else None for c in cells]
    converted = namespace["ag__factory"](operators, *closure)
    if converted.__name__ == "ag__lambda":
        converted.__name__ = "<lambda>"
    converted.__defaults__ = original.__defaults__
    converted.__kwdefaults__ = original.__kwdefaults__
    functools.update_wrapper(converted, original)
    converted.__wrapped__ = original
    return converted


# Modules whose functions are called as they are (the library itself, NumPy, the standard
# library ...): only the user's own functions are converted.
_LIBRARY_PREFIXES = ("autodiff", "numpy", "builtins", "functools", "itertools", "math",
                     "collections", "operator", "typing", "abc", "tensorflow", "keras",
                     "torch", "jax", "widgets", "tapeschool", "inspect", "warnings", "random")
_CONVERTED = weakref.WeakKeyDictionary()


def convert_callee(fn):
    """``fn`` converted, for a call from converted code (cached per function object); methods
    are converted through their function and bound again; anything else as it is."""
    target = getattr(fn, "__func__", fn)
    if not inspect.isfunction(target):
        return fn
    module = (getattr(target, "__module__", None) or "").split(".")[0]
    if module in _LIBRARY_PREFIXES or getattr(target, "__ag_do_not_convert__", False):
        return fn
    try:
        converted = _CONVERTED[target]
    except KeyError:
        converted = _CONVERTED[target] = convert(target)
    except TypeError:   # not weakly referenceable
        return fn
    if converted is target:
        return fn
    self = getattr(fn, "__self__", None)
    return converted if self is None else converted.__get__(self, type(self))


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _factory(original, node):
    """A module defining ``ag__factory(ag__, *free variables)`` that returns the function."""
    free = list(original.__code__.co_freevars)
    factory = ast.parse(f"def ag__factory(ag__, {', '.join(free)}):\n    pass").body[0]
    # Default values are the original's (set on the result); their expressions may name
    # things only the original's scope knows, so the rewritten def does not evaluate them.
    node.args.defaults = [ast.Constant(value=None) for _ in node.args.defaults]
    node.args.kw_defaults = [None if d is None else ast.Constant(value=None)
                             for d in node.args.kw_defaults]
    factory.body = [node, ast.Return(value=ast.Name(id=node.name, ctx=ast.Load()))]
    module = ast.Module(body=[factory], type_ignores=[])
    return ast.fix_missing_locations(module)


def do_not_convert(fn):
    """Marks ``fn`` so that ``ad.function`` traces it as written."""
    fn.__ag_do_not_convert__ = True
    return fn
