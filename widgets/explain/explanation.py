"""What ``explain_none_gradient`` returns: a reason, a paragraph and the path.

Plain data and its rendering (text and HTML); the rules that decide live in
``none_gradient.py`` (from the tape) and ``history.py`` (from a History).
"""

import collections
import html
import re

__all__ = ["Explanation", "PathStep", "REASONS"]

REASONS = {
    "not_none": "the gradient is not None",
    "tape_used": "the tape was already used",
    "integer_dtype": "an integer dtype",
    "not_trainable": "a Variable with trainable=False",
    "not_watched": "not watched",
    "watched_by_other_tape": "watched by another tape only",
    "variable_not_read": "the Variable was not read on this tape",
    "variable_replaced": "a Variable replaced by a Tensor",
    "watched_too_late": "watched after it was used",
    "stop_gradient": "stop_gradient on the path",
    "not_differentiable": "a non-differentiable op on the path",
    "vjp_returned_none": "a gradient rule returned None",
    "stateful_assignment": "a stateful assignment",
    "left_library": "the value left the library",
    "stop_recording": "computed inside stop_recording()",
    "reset": "erased by reset()",
    "outside_tape": "computed outside the tape",
    "branch_not_taken": "a branch not taken",
    "not_recorded": "no recorded path",
    "unconnected": "the target does not depend on the source",
}

PathStep = collections.namedtuple("PathStep", "op_type via to status note")
PathStep.__doc__ = """One op on the path from the source to the target.

``via``/``to``: names of the tensor on the path going in and coming out;
``status``: ``'recorded'`` (on the tape), ``'blocked'`` (on the tape, but no
gradient flows back through it), ``'missing'`` (ran, but the tape does not
hold it) or ``'gap'`` (unknown ops between two recorded stretches);
``note``: why, for a blocked or missing step."""


class Explanation:
    """Why ``tape.gradient(target, source)`` is None.

    Attributes:
        reason: a key of ``REASONS`` (``'not_watched'``, ``'stop_gradient'``...).
        message: one plain paragraph saying what happened and what to do (plain
            text: code is not quoted; ``markdown`` is the same paragraph with code
            in backticks, which the HTML form shows as code).
        path: PathSteps from the source towards the target (may be empty).
        candidates: for ``'not_recorded'``, the causes that fit the tape.
        source_name, target_name: the names used in the message.
        where: the line of code behind the break when a History knew it
            (``'.numpy() at train.py:68: m = ad.constant(m.numpy())'``), else ``''``.
    """

    def __init__(self, reason, message, path=(), candidates=(), source_name="x", target_name="y",
                 where=""):
        self.reason = reason
        self.where = where
        self.markdown = message
        self.message = message.replace("`", "")
        self.path = tuple(path)
        self.candidates = tuple(candidates)
        self.source_name = source_name
        self.target_name = target_name

    @property
    def title(self):
        return REASONS[self.reason]

    def _segments(self):
        """``(text, kind)`` pieces of the path; kind: 'name', 'op', 'break', 'missing', 'gap'."""
        if not self.path:
            return []
        pieces = [(self.path[0].via, "name")]
        for step in self.path:
            if step.status == "gap":
                pieces.append((" ┄┄ ? ┄┄ ", "gap"))
            elif step.status == "blocked" or step.note:
                pieces.append((f" ─{step.op_type} ✗→ ", "break"))
            elif step.status == "missing":
                pieces.append((f" ╌{step.op_type}╌→ ", "missing"))
            else:
                pieces.append((f" ─{step.op_type}→ ", "op"))
            pieces.append((step.to, "name"))
        return pieces

    def path_text(self):
        """The path on one line, e.g. ``x ─Sin→ v1 ─Cast ✗→ t7 ╌Mul╌→ y``.

        ``✗`` marks the break; ``╌Op╌`` an op that ran but is not on the tape;
        ``┄┄ ? ┄┄`` ops the tape never saw.
        """
        return "".join(text for text, _ in self._segments())

    def __str__(self):
        text = f"Gradient of {self.target_name} with respect to {self.source_name}: {self.title}.\n"
        text += self.message
        if self.path:
            text += "\nPath: " + self.path_text()
        return text

    def __repr__(self):
        return f"<Explanation {self.reason!r}: {self.title}>"

    def _repr_html_(self):
        colour = "#009E73" if self.reason == "not_none" else "#D55E00"
        styles = {"break": f"color:{colour};font-weight:bold", "missing": "color:#777",
                  "gap": "color:#777", "op": "", "name": ""}
        path = ""
        if self.path:
            spans = "".join(f"<span style='{styles[kind]}'>{html.escape(text)}</span>"
                            for text, kind in self._segments())
            path = f"<div style='font-family:monospace;margin-top:.4em'>Path: {spans}</div>"
        return (f"<div style='border-left:4px solid {colour};padding:.4em .8em'>"
                f"<b>{html.escape(self.target_name)} ← {html.escape(self.source_name)}: "
                f"{html.escape(self.title)}</b> <code>{self.reason}</code>"
                f"<p style='margin:.3em 0'>{_code_spans(html.escape(self.markdown))}</p>{path}</div>")


def _code_spans(text):
    """The messages quote code Markdown-style, `like this`: in HTML, as <code> (not backticks)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
