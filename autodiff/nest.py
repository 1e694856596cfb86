"""Nested structures (lists, tuples, dicts, namedtuples) of tensors.

``tape.gradient(loss, {'w': w, 'b': b})`` returns ``{'w': dw, 'b': db}``:
the sources are flattened to a list, differentiated, and the results packed
back into the same structure. Dicts flatten in sorted-key order, as in
TensorFlow's ``tf.nest``.

    >>> nest.flatten({'b': 1, 'a': [2, 3]})
    [2, 3, 1]
"""

__all__ = ["flatten", "pack_sequence_as", "map_structure"]


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(value, "_fields")


def flatten(structure):
    """The leaves of ``structure`` in order; a non-container is one leaf."""
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_sequence_as(structure, flat):
    """Rebuilds ``structure`` with the leaves taken in order from ``flat``."""
    leaves = iter(flat)

    def build(node):
        if isinstance(node, dict):
            built = {key: build(node[key]) for key in sorted(node)}
            return type(node)((key, built[key]) for key in node)
        if _is_namedtuple(node):
            return type(node)(*(build(item) for item in node))
        if isinstance(node, (list, tuple)):
            return type(node)(build(item) for item in node)
        return next(leaves)

    return build(structure)


def map_structure(fn, structure):
    """Applies ``fn`` to every leaf, keeping the structure."""
    return pack_sequence_as(structure, [fn(leaf) for leaf in flatten(structure)])
