"""The layer graph of a functional model: which calls to run, in which order (Keras 3's
``map_graph``).

From the outputs, a depth-first walk over the recorded calls (``Node``)
finds every call the outputs need; each call gets a depth (the outputs' are
0, a call's inputs lie deeper), and the model runs the calls from the
deepest to depth 0. Layers are listed in the same order, ties broken by
when the walk first met them: that is the order of ``model.layers`` and so of
``model.weights``, as in Keras 3.
"""

import collections

from ... import nest
from .keras_tensor import KerasTensor

__all__ = ["map_graph"]


def _walk(inputs, outputs):
    finished, in_progress, ordered, first_seen = set(), set(), [], {}
    input_ids = {id(t) for t in inputs}

    def visit(tensor):
        if tensor._ad_history is None:
            raise ValueError(f"{tensor} was not made by a layer call on an ad.keras.Input")
        node = tensor._ad_history[0]
        if id(node) in finished:
            return
        if not node.is_input and id(tensor) in input_ids:
            finished.add(id(node))
            return
        if id(node) in in_progress:
            raise ValueError(f"{tensor} from layer {node.layer.name!r} is part of a cycle.")
        first_seen.setdefault(id(node.layer), len(first_seen))
        in_progress.add(id(node))
        if not node.is_input:
            for parent in node.input_tensors:
                visit(parent)
        finished.add(id(node))
        in_progress.discard(id(node))
        ordered.append(node)

    for output in outputs:
        visit(output)
    return ordered, first_seen


def map_graph(inputs, outputs):
    """``(nodes_by_depth, layers)`` for a model from ``inputs`` to ``outputs`` (flat lists).

    Raises:
        ValueError: an output does not depend on the inputs given ("Graph
            disconnected", naming the missing input's layer), two layers share a
            name, or the graph has a cycle.
    """
    ordered, first_seen = _walk(inputs, outputs)
    node_depth, layer_depth, layers = {}, {}, {}
    in_graph = {id(n) for n in ordered}
    for node in reversed(ordered):
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = depth
        node_depth[id(node)] = depth
        layers[id(node.layer)] = node.layer
        for parent in node.parent_nodes():
            if id(parent) in in_graph:
                node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))
    for t in inputs:   # an input nothing uses still belongs to the model
        node = t._ad_history[0]
        if id(node.layer) not in layer_depth:
            layer_depth[id(node.layer)], first_seen[id(node.layer)] = 0, -1
            node_depth[id(node)] = 0
            layers[id(node.layer)] = node.layer
            ordered.append(node)
    nodes = {id(n): n for n in ordered}
    by_depth = collections.defaultdict(list)
    for node_id, depth in node_depth.items():
        by_depth[depth].append(nodes[node_id])
    layer_order = sorted(layers, key=lambda k: (-layer_depth[k], first_seen[k]))
    ordered_layers = [layers[k] for k in layer_order]
    _check_computable(inputs, by_depth)
    names = [layer.name for layer in ordered_layers]
    for name in names:
        if names.count(name) != 1:
            raise ValueError(f'The name "{name}" is used {names.count(name)} times in the '
                             f"model. All operation names should be unique.")
    return [by_depth[d] for d in sorted(by_depth, reverse=True)], ordered_layers


def _check_computable(inputs, by_depth):
    known = {id(t) for t in inputs}
    done = []
    for depth in sorted(by_depth, reverse=True):
        for node in by_depth[depth]:
            if node.is_input and id(node.outputs) not in known:
                raise ValueError(f"Graph disconnected: the output depends on the Input "
                                 f"{node.layer.name!r}, which is not among the model's inputs "
                                 f"{[t.name for t in inputs]}")
            for t in node.input_tensors:
                if id(t) not in known:
                    raise ValueError(f"Graph disconnected: cannot find parent for tensor {t} "
                                     f"at layer {node.layer.name!r}. The following previous "
                                     f"layers were accessed without issue: {done}")
            done.append(node.layer.name)
            known.update(id(t) for t in nest.flatten(node.outputs) if isinstance(t, KerasTensor))
