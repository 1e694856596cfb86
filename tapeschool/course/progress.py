"""Progress lines for a step that goes through many submissions.

Autograding a class of 200 takes a while (every submission runs its lesson in a
fresh kernel), so the teacher sees one line per submission as it finishes, with
how many are done, what it scored and how long the rest should take::

    autograde [ 37/200] student037    4.0/6 points    5.1 s   about 13 min left

One line per item, never a bar redrawn in place: the lines read the same in a
terminal, in a CI log and in a notebook's output. This module only prints; it
never decides what is done.
"""

import sys
import time


class Progress:
    """Prints ``<step> [done/total] <item>  <note>  <seconds>  <time left>`` per finished item.

    Args:
        step: the step's name, printed first (``"autograde"``).
        total: how many items the step will go through.
        out: where the lines go (stdout by default).

    >>> progress = Progress("autograde", 2)
    >>> with progress.item("ada") as line:
    ...     line.note = "6.0/6 points"                    # doctest: +SKIP
    autograde [1/2] ada    6.0/6 points   4.9 s   about 5 s left
    """

    def __init__(self, step, total, out=None, clock=time.monotonic):
        self.step, self.total, self.done = step, total, 0
        self.out = out or sys.stdout
        self.clock = clock
        self.started = clock()
        self.width = len(str(total))
        self.seconds = {}   # item -> seconds it took, for whoever wants the figures

    def item(self, name):
        """A context for one item: set ``.note`` inside it; the line prints on the way out
        (with ``failed`` when the block raised, and the exception goes on)."""
        return _Item(self, name)

    def finished(self, name, note, seconds):
        """Prints the line of an item that finished elsewhere (a worker process)."""
        self.done += 1
        self.seconds[name] = seconds
        elapsed = self.clock() - self.started
        left = elapsed / self.done * (self.total - self.done)
        eta = f"about {_duration(left)} left" if self.done < self.total else (
            f"done in {_duration(elapsed)}")
        line = (f"{self.step} [{self.done:>{self.width}}/{self.total}] {name:<14} "
                f"{note:<16} {seconds:5.1f} s   {eta}")
        print(line.rstrip(), file=self.out, flush=True)


class _Item:
    def __init__(self, progress, name):
        self.progress, self.name, self.note = progress, name, ""

    def __enter__(self):
        self.started = self.progress.clock()
        return self

    def __exit__(self, kind, error, trace):
        note = self.note if kind is None else f"failed: {kind.__name__}"
        self.progress.finished(self.name, note, self.progress.clock() - self.started)
        return False


def _duration(seconds):
    """``42 s``, ``13 min``, ``1 h 05 min``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"
