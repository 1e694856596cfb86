"""Convolutions in compiled programs: the filter gradient reads the forward pass's rows.

A training step computes ``Conv2D(x, w)`` in its forward pass and, in its
backward pass, ``Conv2DBackpropFilter(x, g)`` of the same ``x`` with the same
strides, dilations and padding. When the im2col form runs
(``ops/conv_kernels.py``), both begin by copying ``x``'s receptive fields into
the same ``(N * Ho * Wo, kh * kw * C)`` matrix: W8's second convolution
copies 4.5 MiB twice. TensorFlow's ops recompute it as well; a compiled
program can keep it instead::

    v3, v3_rows = Conv2D(xp, v2, w, ..., keep_rows=True)  # conv2d(v2, w); its im2col rows kept
    ...
    v30 = Conv2DBackpropFilter(xp, v2, v26, ..., rows=v3_rows)  # from v3's rows
    del v3_rows

The rows hold exactly what the filter gradient would build, so the result is
the same array bit for bit. ``rows`` is None when the forward ran another
form (taps, the reference, another backend) or the matrix is larger than
``conv_kernels.KEEP_ROWS_BYTES``; the filter gradient then builds what it
needs, as op by op. The cost is memory: the rows live from the forward pass
to the backward pass.

``rewrite(steps, spec)`` pairs each ``Conv2DBackpropFilter`` with the last
``Conv2D`` before it of the same input, geometry and filter size, and sets
``step.conv_rows`` on both: ``("keep", n)`` on the convolution (``n``
gradients read its rows), ``("read", i)`` on each gradient (``i``: the
convolution's node). ``write_call`` adds the arguments and names to their lines.
"""

__all__ = ["rewrite", "write_call"]

_GEOMETRY = ("strides", "dilations", "pads")


def rewrite(steps, spec):
    """Marks the convolutions whose rows a later filter gradient reads; see the module
    docstring."""
    last, readers = {}, {}
    for step in steps:
        if step.kind != "op" or not step.inputs:
            continue
        node = step.node
        if node.runs_builtin("Conv2D") and _is_image(spec(step.inputs[0])):
            last[_key(step)] = step
            step.conv_rows = None
        elif node.runs_builtin("Conv2DBackpropFilter"):
            conv = last.get(_key(step))
            w = spec(conv.inputs[1]) if conv is not None else None
            if w is None or tuple(w[0][:2]) != tuple(node.params.get("filter_hw", ())):
                continue
            step.conv_rows = ("read", conv.index)
            readers[conv.index] = readers.get(conv.index, 0) + 1
            conv.conv_rows = ("keep", readers[conv.index])


def _is_image(x_spec):
    return x_spec is not None and len(x_spec[0]) == 4


def _key(step):
    return (step.inputs[0],) + tuple(repr(step.node.params.get(k)) for k in _GEOMETRY)


def write_call(step, target, call, label, fresh, rows_names, pending):
    """A marked step's line: ``(target text, call text, label, rows to del after it)``;
    an unmarked step's unchanged (and None).

    ``fresh(wanted, fallback)`` makes a unique name; ``rows_names`` maps a
    convolution's node to its rows' name, ``pending`` to how many gradients have
    yet to read them: the last one's line is followed by their ``del``.
    """
    mark = getattr(step, "conv_rows", None)
    if mark is None:
        return target, call, label, None
    if mark[0] == "keep":
        rows_names[step.index] = name = fresh(f"{target}_rows", "rows")
        pending[step.index] = mark[1]
        return (f"{target}, {name}", call + ", keep_rows=True",
                (label + "; " if label else "") + "its im2col rows kept for the filter gradient",
                None)
    name = rows_names[mark[1]]
    pending[mark[1]] -= 1
    return (target, call + f", rows={name}",
            (label + "; " if label else "") + f"from {name}",
            name if pending[mark[1]] == 0 else None)
