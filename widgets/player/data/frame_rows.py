"""A replay's frames kept as rows, each frame's dict made when it is first read.

A page made from a tape (``replay(..., words=False)``) sends the forward
records' and backward steps' frames as columns (``html_export.page_model``)
and never reads most of them in Python: ``FrameRows`` keeps what ``Frames``
looked at (each backward step's values, once) and makes a frame's dict
(``Frames.forward_frame``, ``Frames.backward_frame``) only when something
reads it. It reads as the list of frames it stands for: ``len``, indexing,
slices, iteration and ``==`` with a list.

    >>> from widgets import replay
    >>> x = ad.Variable(3.0)
    >>> with ad.GradientTape() as tape:
    ...     y = x * x
    >>> r = replay(tape, y, x, words=False)
    >>> r.frames[0]["phase"], r.frames.n_forward
    ('forward', 1)
"""

from collections.abc import Sequence

__all__ = ["FrameRows"]


class FrameRows(Sequence):
    """Forward frames, the seed, backward steps and the result, as ``Frames`` built them.

    Attributes:
        n_forward: how many forward frames come first.
        seed, result: those two frames' dicts.
        rows: one row of ``Frames.backward_rows`` per backward step: ``(op node, record
            index, [(output id, value)], [(input id, value)] by slot, [(tensor
            id, total value)])``, values as ``frames.value_of`` writes them.
    """

    def __init__(self, maker, n_forward, seed, rows, result):
        self.maker, self.n_forward, self.seed, self.rows, self.result = \
            maker, n_forward, seed, rows, result
        self._made = {}

    def __len__(self):
        return self.n_forward + len(self.rows) + 2

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        n = len(self)
        k = int(k)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(f"frame {k} of {n}")
        frame = self._made.get(k)
        if frame is None:
            frame = self._made[k] = self._make(k)
            frame["index"] = k
        return frame

    def _make(self, k):
        if k < self.n_forward:
            return self.maker.forward_frame(k)
        if k == self.n_forward:
            return self.seed
        if k == len(self) - 1:
            return self.result
        i = k - self.n_forward - 1
        return self.maker.backward_frame(i, self.rows[i], self.n_forward)

    def known(self, k, only=None):
        """Every gradient known at frame ``k`` (``frames.grads_at``) without making
        the frames: the seed's, each backward step's totals, the result's (``only``:
        a set of the node ids wanted; None for all)."""
        k %= len(self)
        known = {}
        if k >= self.n_forward:
            known.update(self.seed["grads_new"])
        wanted = None if only is None else {int(n[1:]) for n in only if n[:1] == "t"
                                            and n[1:].isdigit()}
        for _, _, _, _, totals in self.rows[:max(0, k - self.n_forward)]:
            for x_id, value in totals:
                if value is not None and (wanted is None or x_id in wanted):
                    known[f"t{x_id}"] = value["preview"]
        if k == len(self) - 1:
            known.update(self.result["grads_new"])
        return known if only is None else {n: v for n, v in known.items() if n in only}

    def __eq__(self, other):
        if isinstance(other, (list, FrameRows)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        return f"<FrameRows: {self.n_forward} forward, {len(self.rows)} backward>"
