"""``model.summary()``: Keras 3's table of layers, output shapes and parameter counts.

Keras 3 draws the table with box characters; this prints the same columns
and totals as plain text (``Connected to`` for a functional model whose
layers take several inputs), so it reads the same in a terminal, a
notebook and a test:

    Model: "mlp"
    Layer (type)            Output Shape        Param #
    dense (Dense)           (None, 4)                16
    ...
    Total params: 21 (84.00 B)
    Trainable params: 21 (84.00 B)
    Non-trainable params: 0 (0.00 B)
"""

from ... import nest

__all__ = ["summary_text"]


def _size(variables):
    return sum(int(v.numpy().size) for v in variables)


def _bytes(variables):
    n = sum(int(v.numpy().nbytes) for v in variables)
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.2f} {unit}"
        n /= 1024


def _output_shape(layer):
    nodes = layer.__dict__.get("_ad_inbound") or []
    if not nodes:
        shape = layer.__dict__.get("_ad_output_shape")   # a Sequential's layer
        return "?" if shape is None else str(shape)
    shapes = [t.shape for t in nest.flatten(nodes[-1].outputs)]
    return str(shapes[0]) if len(shapes) == 1 else str(shapes)


def _connected(layer):
    nodes = layer.__dict__.get("_ad_inbound") or []
    if not nodes or nodes[-1].is_input:
        return "-"
    parents = []
    for t in nodes[-1].input_tensors:
        node, index = t._ad_history
        parents.append(f"{node.layer.name}[{node.layer._ad_inbound.index(node)}][{index}]")
    return ", ".join(parents)


def summary_text(model, expand_nested=False, show_trainable=False):
    """The summary as one string (``Model.summary`` prints it)."""
    from .model import Functional
    functional = isinstance(model, Functional)
    multi = functional and any(len(node.input_tensors) > 1 for nodes in model._ad_nodes_by_depth
                               for node in nodes)
    header = ["Layer (type)", "Output Shape", "Param #"] + (["Connected to"] if multi else []) \
        + (["Trainable"] if show_trainable else [])
    rows = []
    for layer in model.layers:
        row = [f"{layer.name} ({type(layer).__name__})", _output_shape(layer),
               f"{_size(layer.variables):,}"]
        if multi:
            row.append(_connected(layer))
        if show_trainable:
            row.append("Y" if layer.trainable else "N")
        rows.append(row)
    widths = [max(len(r[k]) for r in rows + [header]) for k in range(len(header))]

    def line(cells):
        return "  ".join(c.rjust(w) if k == 2 else c.ljust(w)
                         for k, (c, w) in enumerate(zip(cells, widths))).rstrip()

    trainable, others = model.trainable_variables, model.non_trainable_variables
    lines = [f'Model: "{model.name}"', line(header)] + [line(r) for r in rows]
    lines += [f"Total params: {_size(trainable) + _size(others):,} "
              f"({_bytes(list(trainable) + list(others))})",
              f"Trainable params: {_size(trainable):,} ({_bytes(trainable)})",
              f"Non-trainable params: {_size(others):,} ({_bytes(others)})"]
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and optimizer.variables:
        lines.append(f"Optimizer params: {_size(optimizer.variables):,} "
                     f"({_bytes(optimizer.variables)})")
    return "\n".join(lines)
