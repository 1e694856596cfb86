"""A graded check cell, rewritten so the sandbox records answers instead of judging them.

A lesson's graded check cell calls ``check(prediction, answer, hint=...)`` or
``check_gradients(op, args, order=...)``. For grading, each such call becomes a
call of the sandbox's recorder, which writes the prediction as plain data
(``tapeschool.answer_data``) and decides nothing::

    check(my_prediction, tape.gradient(y, x), hint="...")
        becomes
    __tapeschool_record__("check", "lesson01-exercise-1", 0,
                          lambda: my_prediction, lambda: tape.gradient(y, x),
                          lambda: ((), {"hint": "..."}))

The lambdas let the recorder read the prediction even when the answer side
would fail, and read the answer side (and the options) only when making the
key from the teacher edition. The rewritten source runs; the notebook the
student gets back shows the cell as written.

What it must not do: change any other code of the cell, or accept a check call
it cannot read (it raises ``ValueError``, naming the cell).
"""

import ast

RECORDER = "__tapeschool_record__"
CHECKS = ("check", "check_gradients")
SETUP_TAG = "tapeschool-grading-setup"


def setup_cell_source(answers_path, key):
    """The code of the cell the grader puts first: the recorder, bound to its name."""
    return (f"from tapeschool.answer_data import Recorder as __tapeschool_Recorder\n"
            f"{RECORDER} = __tapeschool_Recorder({answers_path!r}, key={bool(key)})\n"
            f"del __tapeschool_Recorder\n")


def recording_source(source, grade_id):
    """``(new source, number of check calls)`` for one graded check cell.

    Example:
        >>> text, calls = recording_source("check(p, 6.0)", "lesson01-exercise-1")
        >>> calls
        1
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise ValueError(f"check cell {grade_id}: not Python ({error.msg})") from None
    rewriter = _Rewriter(grade_id)
    tree = ast.fix_missing_locations(rewriter.visit(tree))
    return ast.unparse(tree), rewriter.count


class _Rewriter(ast.NodeTransformer):
    def __init__(self, grade_id):
        self.grade_id, self.count = grade_id, 0

    def visit_Call(self, node):
        self.generic_visit(node)
        if not (isinstance(node.func, ast.Name) and node.func.id in CHECKS):
            return node
        kind = node.func.id
        if any(isinstance(a, ast.Starred) for a in node.args) or len(node.args) < 2:
            raise ValueError(f"check cell {self.grade_id}: {kind}(...) needs its first two "
                             f"arguments written out (no *args)")
        if kind == "check":
            prediction, answer, rest = node.args[0], node.args[1], node.args[2:]
        else:
            order = node.args[2] if len(node.args) > 2 else next(
                (k.value for k in node.keywords if k.arg == "order"), ast.Constant(2))
            prediction = ast.Tuple([node.args[0], node.args[1], order], ast.Load())
            answer, rest = prediction, node.args[3:]
        keywords = [k for k in node.keywords if not (kind == "check_gradients" and k.arg == "order")]
        options = ast.Tuple([ast.Tuple(list(rest), ast.Load()),
                             ast.Dict([None if k.arg is None else ast.Constant(k.arg) for k in keywords],
                                      [k.value for k in keywords])], ast.Load())
        call = ast.Call(ast.Name(RECORDER, ast.Load()),
                        [ast.Constant(kind), ast.Constant(self.grade_id), ast.Constant(self.count),
                         _thunk(prediction), _thunk(answer), _thunk(options)], [])
        self.count += 1
        return ast.copy_location(call, node)


def _thunk(expression):
    no_args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                            kw_defaults=[], kwarg=None, defaults=[])
    return ast.Lambda(no_args, expression)


def is_test_cell(cell):
    """An nbgrader "autograder test": a graded code cell that is not an answer."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution")


def grade_id_of(cell):
    return cell["metadata"]["nbgrader"]["grade_id"]
