"""One plain sentence per frame of a replay (what classroom mode shows).

Each function gets the numbers a frame already holds (previews of values
from the engine's trace) and says what happened in words a student can
read aloud:

    The cotangent 1.0 arrives at Mul (v1 = x * x); its VJP, d(x·x) = x·dx + x·dx,
    sends 3.0 to x twice (x is used twice, so the two add up to 6.0).

A rule is written in the tape's own names (``rule_text``): the primitive's
doc line says ``d(x y) = y dx + x dy`` with generic x and y, which collide
with a lesson's own x and y; the caption says ``d(v2·x) = x·dv2 + v2·dx``.
Records are numbered from 1, as the frame counter is.

Nothing here computes a number; it only words what ``replay`` recorded.
"""

import functools
import re

__all__ = ["forward_sentence", "seed_sentence", "backward_sentence", "result_sentence",
           "derivative", "rule_text", "record_name"]

# The generic operands of the primitives' doc lines, by number of inputs.
_GENERIC = {1: ("x",), 2: ("x", "y")}
_MATRIX = ("A", "B")
_TOKEN = re.compile(r"(?<![A-Za-z0-9_])(d?)([A-Za-z][A-Za-z0-9_]*)(?![A-Za-z0-9_(])")
_MARK = "\x00"


def rule_text(doc, inputs):
    """A rule's doc line in the record's own names (products as ``·``).

    Only formula lines (``d(...)``, ``d/dx ...``, ``d ...``) are rewritten,
    and only their generic operands (``x``, ``y``; ``A``, ``B``), all at once,
    so names that swap places (inputs ``(y, x)``) stay right.

    >>> from widgets.player.data.sentences import rule_text
    >>> rule_text("d(x y) = y dx + x dy", ["v2", "x"])
    'd(v2·x) = x·dv2 + v2·dx'
    >>> rule_text("d/dx sin x = cos x", ["v0"])
    'd/dv0 sin v0 = cos v0'
    """
    inputs = tuple(inputs)
    n = len(inputs)
    if n > len(_SLOTS) or _ODD.search("".join(inputs)):   # one mark is one character
        return _rule_text(doc, inputs)
    # The rule written once per (doc, number of inputs) with stand-ins for the names,
    # which then go in: a long tape has a few rules but a new name in every record.
    # A name holds no stand-in's mark, so putting one in cannot make another.
    found = _TEMPLATES.get((doc, n))
    if found is None:
        if len(_TEMPLATES) > 4096:
            _TEMPLATES.clear()
        template = _rule_text(doc, _SLOTS[:n])
        found = _TEMPLATES[doc, n] = (template, [k for k in range(n) if _SLOTS[k] in template])
    template, present = found
    for k in present:          # only the stand-ins the rule holds (none in a plain doc line)
        template = template.replace(_SLOTS[k], inputs[k])
    return template


_TEMPLATES = {}     # (doc, number of inputs) -> (rule with stand-ins, the stand-ins in it)


# Stand-ins for names: no space and no mark in them, so the rule comes out the same
# shape with them as with any name that has neither (names that do are rewritten as
# they are).
_SLOTS = tuple(f"\x01{i}\x01" for i in range(8))
_ODD = re.compile(r"[\s\x00\x01]")


@functools.lru_cache(maxsize=4096)
def _rule_text(doc, inputs):
    if not doc or not inputs or not re.match(r"d[(/ ]", doc):
        return doc or ""
    generic = _MATRIX if re.search(r"\bdA\b", doc) else _GENERIC.get(len(inputs), ())
    mapping = dict(zip(generic, inputs))
    if not mapping or not any(re.search(rf"\b{g}\b", doc) for g in mapping):
        return doc

    def swap(m):
        d, word = m.group(1), m.group(2)
        return f"{_MARK}{d}{mapping[word]}{_MARK}" if word in mapping else m.group(0)

    # Two operands side by side are a product: "x dy" -> "x·dy" (not "sin x"). One pass
    # over the words, so the cost grows with the text, however long a name is.
    words = re.split(r"(\s+)", _TOKEN.sub(swap, doc))   # words at even places, spaces between
    for i in range(1, len(words) - 1, 2):
        if _operand_end(words[i - 1]) and (words[i + 1].startswith("(") or _MARK in words[i + 1]):
            words[i] = "·"
    return "".join(words).replace(_MARK, "")


def _operand_end(token):
    return token.endswith(_MARK) or token.endswith(")")


def record_name(tape_names, tape, index):
    """'record 3', or 'tape 2, record 3' when several tapes are shown (numbered from 1)."""
    if len(tape_names) > 1:
        return f"{tape_names[tape]}, record {index + 1}"
    return f"record {index + 1}"

_TIMES = {2: "twice", 3: "three times"}


def derivative(target, source):
    """'dy/dx'; longer names get parentheses: 'd(dy_dx)/dx'."""
    def wrap(name):
        return name if len(name) <= 3 else f"({name})"
    return f"d{wrap(target)}/d{wrap(source)}"


def _times(n):
    return _TIMES.get(n, f"{n} times")


def _list(items):
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _preview(value):
    """How a sentence says a value: its numbers when few, else its shape."""
    if value is None:
        return None
    shape = value.get("shape") or []
    size = 1
    for d in shape:
        size *= d
    if value.get("preview") is None and not shape:
        return "a scalar"
    if size > 4 or value.get("preview") is None:
        return "a (" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ") array"
    return value["preview"]


def forward_sentence(op, outputs, tape_names, n_tapes, all_tapes=("tape 1",)):
    """'Record 1: Pow computes y = x ** v0 = 9.0.'"""
    shown = []
    for out in outputs:
        value = out["value"]
        shown.append(f"{out['name']} = {value}" if value is not None else out["name"])
    label = op["label"]
    first = shown[0].split(" = ")[0] if len(outputs) == 1 else None
    if first is not None and label != first:
        what = f"{first} = {label}" + (f" = {outputs[0]['value']}" if outputs[0]["value"] else "")
    else:
        what = _list(shown)
    tape, index = op["records"][0]
    name = record_name(list(all_tapes), tape, index)
    sentence = f"{name[0].upper()}{name[1:]}: {op['op_type']} computes {what}"
    if n_tapes > 1:
        unique = list(dict.fromkeys(tape_names))
        sentence += f" (recorded by {_list(unique)}" + (" only)" if len(unique) < n_tapes else ")")
    sentence += "."
    if not op["differentiable"]:
        sentence += f" {op['op_type']} passes values on, but no gradient will flow back through it."
    return sentence


def seed_sentence(seeds, given, target_nodes):
    """'The backward pass starts at y with cotangent dy/dy = 1.0.'"""
    if not seeds:
        return "The target is not differentiable (an integer tensor), so no gradient flows at all."
    parts = []
    for seed in seeds:
        name, value = seed["name"], _preview(seed["value"])
        parts.append(f"{name} with cotangent {value}" if given
                     else f"{name} with {derivative(name, name)} = {value}")
    sentence = f"The backward pass starts at {_list(parts)}"
    if given:
        sentence += " (the output gradient you passed in)"
    elif any(node["shape"] for node in target_nodes):
        sentence += " (ones shaped like the target: a non-scalar target is summed)"
    return sentence + "."


def backward_sentence(op, cotangents, contributions, totals, tensors):
    """'The cotangent 1.0 arrives at Pow (y = x ** v0); its VJP ... sends 6.0 to x.'"""
    values = [_preview(c["value"]) for c in cotangents if c["value"] is not None]
    arrived = values[0] if len(values) == 1 else "(" + ", ".join(values) + ")"
    word = "cotangent" if len(values) == 1 else "cotangents"
    outs = ", ".join(c["name"] for c in cotangents)
    where = f"{op['op_type']} ({outs} = {op['label']})" if outs != op["label"] else op["op_type"]
    if arrived.startswith("a "):     # an array described by its shape
        arrived = f", {arrived},"
    else:
        arrived = " " + arrived
    start = f"The {word}{arrived} arrive{'s' if len(values) == 1 else ''} at {where}"
    if not op["differentiable"]:
        return (f"{start}; {op['op_type']} has no gradient, so nothing flows back from here "
                f"(the path to its inputs is cut).")
    total_of = {t["node"]: _preview(t["value"]) for t in totals}
    raw_total = {t["node"]: t["value"] and t["value"]["preview"] for t in totals}
    groups = {}
    for c in contributions:
        groups.setdefault(c["node"], []).append(c)
    sent, nothing = [], []
    for node_id, group in groups.items():
        name = group[0]["name"]
        shown = [_preview(c["value"]) for c in group if c["value"] is not None]
        raw = [c["value"]["preview"] for c in group if c["value"] is not None]
        if not shown:
            nothing.append(f"nothing to {name} ({_why_nothing(tensors, node_id)})")
        elif len(group) > 1:
            amount = shown[0] if len(set(shown)) == 1 else _list(shown)
            sent.append(f"{amount} to {name} {_times(len(group))} ({name} is used "
                        f"{_times(len(group))}; {name} now holds {total_of.get(node_id)} in total)")
        else:
            text = f"{shown[0]} to {name}"
            if raw_total.get(node_id) not in (None, raw[0]):
                text += f" (added to what {name} already had: {total_of[node_id]} in total)"
            sent.append(text)
    rule = op.get("rule", op["doc"])
    vjp = f"its VJP, {rule}," if rule else "its VJP"
    return f"{start}; {vjp} sends {_list(sent + nothing) or 'nothing'}."


def _why_nothing(tensors, node_id):
    node = tensors.get(int(node_id[1:]))
    flags = node["flags"] if node else []
    if "integer" in flags:
        return "an integer tensor carries no gradient"
    if "constant" in flags:
        return "a constant: no source depends on it"
    return "it does not lead to a source"


RESULT_PARTS = 4     # gradients a result sentence names; the rest are counted


def result_sentence(target_name, gradients):
    """'Done: dy/dx = 6.0.' A model's many gradients: the None ones first, then the
    first ones, up to ``RESULT_PARTS``, and how many more (the gradients row and the
    health panel show them all): a sentence of every gradient of a 300-variable
    model was 11,680 characters, and classroom mode keeps room for the longest.
    """
    if len(gradients) > RESULT_PARTS:
        nones = [g for g in gradients if g["value"] is None]
        shown = (nones + [g for g in gradients if g["value"] is not None])[:RESULT_PARTS]
        more = len(gradients) - len(shown)
        lost = len(nones) - sum(g["value"] is None for g in shown)
        return (result_sentence(target_name, shown)[:-1] +
                f"; and {more} more gradient{'s' if more > 1 else ''}" +
                (f" ({lost} of them None)" if lost else "") + ".")
    parts = []
    for g in gradients:
        name = g["name"]
        if g["value"] is not None:
            parts.append(f"{derivative(target_name, name)} = {_preview(g['value'])}")
        elif "integer" in g["flags"]:
            parts.append(f"{derivative(target_name, name)} is None ({name} is an integer tensor: "
                         f"integers carry no gradient)")
        else:
            parts.append(f"{derivative(target_name, name)} is None (no recorded path leads from "
                         f"{name} to {target_name})")
    return "Done: " + "; ".join(parts) + "." if parts else "Done: no sources were asked for."
