"""Nested structures (lists, tuples, dicts, namedtuples) of tensors.

``tape.gradient(loss, {'w': w, 'b': b})`` returns ``{'w': dw, 'b': db}``:
the sources are flattened to a list, differentiated, and the results packed
back into the same structure. Dicts flatten in sorted-key order, as in
TensorFlow's ``tf.nest``.

    >>> from autodiff import nest
    >>> nest.flatten({'b': 1, 'a': [2, 3]})
    [2, 3, 1]
"""

__all__ = ["flatten", "pack_sequence_as", "map_structure"]


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _children(node):
    """A container's items in flattening order (dicts by sorted key); None for a leaf."""
    if isinstance(node, dict):
        return [node[key] for key in sorted(node)]
    if isinstance(node, (list, tuple)):
        return list(node)
    return None


def flatten(structure):
    """The leaves of ``structure`` in order; a non-container is one leaf.

    An explicit stack, not recursion: a structure nested hundreds deep
    (TensorFlow takes 500) flattens like a shallow one. A flat list or tuple
    (a model's 3,000 variables) is copied as it is.
    """
    if isinstance(structure, (list, tuple)) and \
            not any([isinstance(x, (dict, list, tuple)) for x in structure]):
        return list(structure)
    leaves, stack = [], [structure]
    while stack:
        node = stack.pop()
        children = _children(node)
        if children is None:
            leaves.append(node)
        else:
            stack.extend(reversed(children))
    return leaves


def _rebuild(node, items):
    """A container like ``node`` holding ``items`` (in ``_children`` order)."""
    if isinstance(node, dict):
        by_key = dict(zip(sorted(node), items))
        return type(node)((key, by_key[key]) for key in node)
    if _is_namedtuple(node):
        return type(node)(*items)
    return type(node)(items)


def pack_sequence_as(structure, flat):
    """Rebuilds ``structure`` with the leaves taken in order from ``flat``."""
    leaves = iter(flat)
    if _children(structure) is None:
        return next(leaves)
    stack = [(structure, _children(structure), [])]   # (container, its items, items rebuilt)
    while True:
        node, children, built = stack[-1]
        if len(built) < len(children):
            child = children[len(built)]
            grandchildren = _children(child)
            if grandchildren is None:
                built.append(next(leaves))
            else:
                stack.append((child, grandchildren, []))
            continue
        stack.pop()
        rebuilt = _rebuild(node, built)
        if not stack:
            return rebuilt
        stack[-1][2].append(rebuilt)


def map_structure(fn, structure):
    """Applies ``fn`` to every leaf, keeping the structure."""
    return pack_sequence_as(structure, [fn(leaf) for leaf in flatten(structure)])
