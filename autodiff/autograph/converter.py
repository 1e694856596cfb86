"""The source rewrite: Python ``if``/``while``/``for`` into calls that can become graph ops.

Three passes over the function's syntax tree, in this order:

1. **return** (``_Returns``): where a ``return`` sits inside an ``if`` or a loop,
   it becomes ``do_return = True; retval_ = value``; what follows it in its
   block runs under ``if not do_return:``, loops also stop on ``do_return``, and
   the function ends with ``return retval_``.
2. **break and continue** (``_Jumps``): each becomes a flag (``break_1 = True``)
   that guards the rest of the loop body and, for ``break``, the loop's test.
3. **control flow** (``_ControlFlow``): each ``if``, ``while`` and ``for`` becomes
   a call to ``ag__.if_stmt``/``while_stmt``/``for_stmt`` with its blocks as
   nested functions and the variables they assign as its *state*
   (``get_state``/``set_state``, reached through ``nonlocal``); ``not``,
   ``and``, ``or`` and ``a if t else b`` become ``ag__.not_``/``and_``/``or_``/
   ``if_exp``. Whether each becomes a graph op is decided when it runs
   (``operators.py``): a Python condition stays Python.

``to_code`` in ``__init__.py`` shows the result; it reads like TensorFlow's.
"""

import ast
import itertools

__all__ = ["convert_tree", "RETVAL", "DO_RETURN"]

RETVAL, DO_RETURN = "retval_", "do_return"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.While, ast.For)


def _walk_local(node):
    """The nodes under ``node``, not entering nested functions, lambdas or classes."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, _SCOPES):
            stack.extend(ast.iter_child_nodes(child))


def _contains(nodes, kinds):
    for node in nodes:
        if isinstance(node, kinds):
            return True
        for child in _walk_local(node):
            if isinstance(child, kinds):
                return True
    return False


def _parse(code):
    return ast.parse(code).body


def _flag_not(name):
    return ast.UnaryOp(op=ast.Not(), operand=ast.Name(id=name, ctx=ast.Load()))


def _guard_rest(stmts, flags, may_set):
    """Statements after one that may set a flag run under ``if not (flag or ...):``."""
    out = []
    for k, stmt in enumerate(stmts):
        out.append(stmt)
        if may_set(stmt) and k + 1 < len(stmts):
            test = _flag_not(flags[0]) if len(flags) == 1 else ast.UnaryOp(
                op=ast.Not(), operand=ast.BoolOp(op=ast.Or(), values=[
                    ast.Name(id=f, ctx=ast.Load()) for f in flags]))
            rest = _guard_rest(stmts[k + 1:], flags, may_set)
            out.append(ast.If(test=test, body=rest, orelse=[]))
            break
    return out


# ---- pass 1: return ---------------------------------------------------------------------
class _Returns(ast.NodeTransformer):
    def visit_FunctionDef(self, node):
        return node   # nested functions keep their own returns

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        return node

    def visit_Return(self, node):
        value = node.value if node.value is not None else ast.Constant(value=None)
        return [ast.Assign(targets=[ast.Name(id=RETVAL, ctx=ast.Store())], value=value),
                ast.Assign(targets=[ast.Name(id=DO_RETURN, ctx=ast.Store())],
                           value=ast.Constant(value=True))]

    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, _guard_rest(block, [DO_RETURN], _sets_return))
        if isinstance(node, _LOOPS):
            node._ag_stop_flags = getattr(node, "_ag_stop_flags", []) + [DO_RETURN] \
                if _sets_return(node) else getattr(node, "_ag_stop_flags", [])
        return node


def _sets_return(stmt):
    return any(isinstance(n, ast.Name) and n.id == DO_RETURN and isinstance(n.ctx, ast.Store)
               for n in [stmt, *_walk_local(stmt)])


def _convert_returns(fn):
    nested = [s for s in fn.body if isinstance(s, (ast.If, *_LOOPS, ast.With, ast.Try))]
    if not _contains(nested, ast.Return):
        return
    fn.body = _Returns().visit(ast.Module(body=fn.body, type_ignores=[])).body
    fn.body = _parse(f"{DO_RETURN} = False\n{RETVAL} = ag__.UndefinedReturnValue()") + \
        fn.body + _parse(f"return {RETVAL}")


# ---- pass 2: break and continue ---------------------------------------------------------
class _Jumps(ast.NodeTransformer):
    def __init__(self):
        self.count = itertools.count(1)

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def _loop(self, node):
        self.generic_visit(node)   # inner loops first: their jumps are theirs
        flags = getattr(node, "_ag_stop_flags", [])
        before = []
        for kind, word in ((ast.Break, "break"), (ast.Continue, "continue")):
            if not _owns(node, kind):
                continue
            flag = f"{word}_{next(self.count)}"
            node.body = _replace_jump(node.body, kind, flag)
            node.body = _guard_rest(node.body, [flag], lambda s, f=flag: _sets(s, f))
            before = before + _parse(f"{flag} = False")   # defined before a staged loop
            if kind is ast.Continue:
                node.body = _parse(f"{flag} = False") + node.body
            else:
                flags = flags + [flag]
        node._ag_stop_flags = flags
        return before + [node] if before else node

    visit_While = visit_For = _loop


def _owns(loop, kind):
    """Whether a break/continue of ``loop`` itself (not of an inner loop) is in its body."""
    stack = list(loop.body)
    while stack:
        node = stack.pop()
        if isinstance(node, kind):
            return True
        if not isinstance(node, (*_LOOPS, *_SCOPES)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _replace_jump(stmts, kind, flag):
    class Replace(ast.NodeTransformer):
        def visit_While(self, node):
            return node

        visit_For = visit_FunctionDef = visit_Lambda = visit_While

        def generic_visit(self, node):
            if isinstance(node, kind):
                return _parse(f"{flag} = True")
            return super().generic_visit(node)

    return [Replace().visit(s) for s in stmts]


def _sets(stmt, flag):
    return any(isinstance(n, ast.Name) and n.id == flag and isinstance(n.ctx, ast.Store)
               for n in [stmt, *_walk_local(stmt)])


# ---- pass 3: if, while, for, and the boolean operators ---------------------------------------
def assigned_names(stmts):
    """Names the statements assign (not inside nested functions), in first-seen order."""
    names = []
    for stmt in stmts:
        for node in [stmt, *_walk_local(stmt)]:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and \
                    not node.id.startswith("ag__") and node.id not in names:
                names.append(node.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                raise NotImplementedError("global and nonlocal statements are not converted")
    return names


class _ControlFlow(ast.NodeTransformer):
    def __init__(self):
        self.count = itertools.count(1)
        self.state_names = set()

    def visit_FunctionDef(self, node):
        return node   # nested functions are left as written

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node):
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _call("not_", [node.operand])
        return node

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        name = "and_" if isinstance(node.op, ast.And) else "or_"
        return _call(name, [ast.Lambda(args=_no_args(), body=v) for v in node.values])

    def visit_Call(self, node):
        """``f(...)`` becomes ``ag__.ld(f)(...)``: a user function called here is converted
        too (once, when first called while tracing), as TensorFlow's converted_call does."""
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and \
                node.func.value.id == "ag__":
            return node
        node.func = _call("ld", [node.func])
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return _call("if_exp", [node.test, ast.Lambda(args=_no_args(), body=node.body),
                                ast.Lambda(args=_no_args(), body=node.orelse)])

    def _state(self, stmts, n):
        """The names ``stmts`` assign, a ``nonlocal`` line for them, and the
        ``get_state_n``/``set_state_n`` functions that read and write them."""
        names = assigned_names(stmts)
        self.state_names.update(names)
        listed = ", ".join(names)
        nonlocal_line = f"nonlocal {listed}\n" if names else ""
        getter = f"def get_state_{n}():\n    return ({listed}{',' if len(names) == 1 else ''})\n"
        setter = f"def set_state_{n}(vars_):\n    {nonlocal_line.strip() or 'pass'}\n" + \
                 (f"    ({listed}{',' if len(names) == 1 else ''}) = vars_\n" if names else "")
        return names, nonlocal_line, _parse(getter) + _parse(setter)

    def _function(self, name, args, nonlocal_line, body):
        fn = _parse(f"def {name}({args}):\n    {nonlocal_line.strip() or 'pass'}\n")[0]
        fn.body = ([] if not nonlocal_line else fn.body) + (body or [ast.Pass()])
        return fn

    def visit_If(self, node):
        n = next(self.count)
        names, nl, state = self._state(node.body + node.orelse, n)
        test = self.visit(node.test)
        body = self._block(node.body)
        orelse = self._block(node.orelse)
        call = _parse(f"ag__.if_stmt(ag__test_, if_body_{n}, else_body_{n}, get_state_{n}, "
                      f"set_state_{n}, {tuple(names)!r})")[0]
        call.value.args[0] = test
        return state + [self._function(f"if_body_{n}", "", nl, body),
                        self._function(f"else_body_{n}", "", nl, orelse), call]

    def visit_While(self, node):
        if node.orelse:
            raise NotImplementedError("while ... else is not converted")
        n = next(self.count)
        names, nl, state = self._state(node.body, n)
        test = self.visit(node.test)
        for flag in getattr(node, "_ag_stop_flags", []):
            test = _call("and_", [ast.Lambda(args=_no_args(), body=_call("not_", [
                ast.Name(id=flag, ctx=ast.Load())])), ast.Lambda(args=_no_args(), body=test)])
        test_fn = _parse(f"def loop_test_{n}():\n    return ag__test_")[0]
        test_fn.body[0].value = test
        body = self._block(node.body)
        call = _parse(f"ag__.while_stmt(loop_test_{n}, loop_body_{n}, get_state_{n}, "
                      f"set_state_{n}, {tuple(names)!r})")[0]
        return state + [test_fn, self._function(f"loop_body_{n}", "", nl, body), call]

    def visit_For(self, node):
        if node.orelse:
            raise NotImplementedError("for ... else is not converted")
        n = next(self.count)
        target_names = assigned_names([ast.Assign(targets=[node.target], value=node.iter)])
        names, nl, state = self._state([node] , n)
        iterated = _range_call(node.iter)   # before the call is wrapped in ag__.ld
        iterated = self.visit(iterated)
        flags = getattr(node, "_ag_stop_flags", [])
        extra = "None"
        pre = []
        if flags:
            extra = f"extra_test_{n}"
            stop = flags[0] if len(flags) == 1 else \
                f"ag__.or_({', '.join(f'lambda: {f}' for f in flags)})"
            pre = _parse(f"def extra_test_{n}():\n    return ag__.not_({stop})")
        assign = ast.Assign(targets=[node.target], value=ast.Name(id="itr", ctx=ast.Load()))
        body = [assign] + self._block(node.body)
        call = _parse(f"ag__.for_stmt(ag__iter_, {extra}, loop_body_{n}, get_state_{n}, "
                      f"set_state_{n}, {tuple(names)!r}, {tuple(target_names)!r})")[0]
        call.value.args[0] = iterated
        return state + pre + [self._function(f"loop_body_{n}", "itr", nl, body), call]

    def _block(self, stmts):
        out = []
        for stmt in stmts:
            result = self.visit(stmt)
            out.extend(result if isinstance(result, list) else [result])
        return out


def _range_call(iterated):
    """``ad.range(...)`` (or ``tf.range``) as the loop's iterable becomes ``ag__.range_(...)``,
    so a tensor bound does not have to be read on the host."""
    if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and \
            iterated.func.attr == "range" and not iterated.keywords and \
            not (isinstance(iterated.func.value, ast.Name) and iterated.func.value.id == "ag__"):
        return ast.Call(func=ast.Attribute(value=ast.Name(id="ag__", ctx=ast.Load()),
                                           attr="range_", ctx=ast.Load()),
                        args=[iterated.func] + iterated.args, keywords=[])
    return iterated


def _no_args():
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])


def _call(name, args):
    return ast.Call(func=ast.Attribute(value=ast.Name(id="ag__", ctx=ast.Load()), attr=name,
                                       ctx=ast.Load()), args=args, keywords=[])


def convert_tree(fn):
    """Rewrites the FunctionDef ``fn`` in place (the three passes); returns the names its
    converted blocks share as state, which the function must bind before them."""
    _convert_returns(fn)
    fn.body = _Jumps().visit(ast.Module(body=fn.body, type_ignores=[])).body
    bound_first = {t.id for s in fn.body[:2] if isinstance(s, ast.Assign)
                   for t in s.targets if isinstance(t, ast.Name)}
    flow = _ControlFlow()
    fn.body = flow._block(fn.body)
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    params |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
    undefined = [name for name in sorted(flow.state_names)
                 if name not in params and name not in bound_first]
    fn.body = [stmt for name in undefined
               for stmt in _parse(f"{name} = ag__.Undefined({name!r})")] + fn.body
    ast.fix_missing_locations(fn)
    return undefined
