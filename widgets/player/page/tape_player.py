"""TapePlayer: an anywidget that animates a tape's forward and backward pass.

State lives in Python as synced traitlets (declared at the top of the
class); drawing and animation live in the browser (``static/player.js``):
the view advances frames itself while playing and syncs ``frame`` back to
Python about once a second and whenever playback stops, so no frame waits
for the kernel. The methods here only change state.

Without a kernel or widget manager (a static render of a notebook, an
nbconvert HTML page) the player still works: ``_repr_mimebundle_`` adds a
``text/html`` form next to the widget view, the self-contained player from
``html_export`` (no network needed), whose fallback before its script runs
is a PNG of the last frame (``png.replay_png``), also given as ``image/png``:
an untrusted notebook, a code host or nbviewer shows that picture, and
``text/plain`` is a one-line description. ``to_html`` and ``save_html`` give
the page directly.

    >>> from widgets import TapePlayer
    >>> x = ad.Variable(3.0, name="x")
    >>> with ad.GradientTape() as tape:
    ...     y = x ** 2
    >>> player = TapePlayer(tape, y, x, names={"y": y})
    >>> player.step()            # returns the frame it moved to
    1
    >>> from IPython.display import display
    >>> display(player)          # in a notebook the player; press Play or the space bar
    <TapePlayer frame 1/3: seed: dy/dy = 1.0>
"""

import base64

import anywidget
import traitlets

from ..drawing.png import replay_png
from ..replay import Replay
from .html_export import as_replay, describe, export_html, html_snippet, player_css, player_js

__all__ = ["TapePlayer"]


class TapePlayer(anywidget.AnyWidget):
    """Shows a tape as a graph and plays its records and its backward pass.

    Args:
        tape_or_replay: a Replay, or a GradientTape (or a list of nested
            tapes, outer first) together with ``target`` and ``sources``.
            A non-persistent tape is used up, as by ``tape.gradient``.
        target, sources: what to differentiate (when given a tape).
        classroom: large type, high contrast, colour-blind-safe palette.
        frame: the frame to start at; ``speed``: frames per second;
        playing: start playing as soon as the view shows.
        **replay_kwargs: passed to ``replay`` (``names=``, ``tape_names=``,
            ``output_gradients=``).

    Keyboard (click the player first): space plays or pauses, the arrow
    keys step, Home and End jump to the first and last frame; ``+``, ``-``
    zoom and ``0`` fits the graph to the view, shift+arrows pan (the wheel
    zooms, a drag pans, the minimap jumps). Records in a name scope are
    grouped in boxes that nest as the scopes do (``a/b/c``); the player
    opens at the level of the scopes, a long run of repeated steps in
    ranges, laid out in bands that fill the stage (click a box to open it);
    a health panel gives each box its gradient and weight norms and says
    why it is flagged; a search box finds tensors, ops and scopes,
    and buttons jump to the first NaN/Inf and to where a gradient was lost.
    """

    # ---- synced state ----------------------------------------------------
    model = traitlets.Dict().tag(sync=True)                 # the replay JSON
    frame = traitlets.Int(0).tag(sync=True)
    playing = traitlets.Bool(False).tag(sync=True)
    speed = traitlets.Float(1.0).tag(sync=True)             # frames per second
    classroom = traitlets.Bool(False).tag(sync=True)

    _esm = player_js()
    _css = player_css()

    def __init__(self, tape_or_replay, target=None, sources=None, classroom=False, *,
                 frame=0, speed=1.0, playing=False, **replay_kwargs):
        rep = as_replay(tape_or_replay, target, sources, **replay_kwargs)
        self._replay = rep
        super().__init__(model=rep.data, classroom=bool(classroom), speed=float(speed),
                         playing=bool(playing))
        self.seek(frame)

    # ---- validation ------------------------------------------------------
    @traitlets.validate("frame")
    def _valid_frame(self, proposal):
        n = self.n_frames
        return max(0, min(int(proposal["value"]), n - 1)) if n else 0

    @traitlets.validate("speed")
    def _valid_speed(self, proposal):
        if not proposal["value"] > 0:
            raise traitlets.TraitError(f"speed must be positive (frames per second), "
                                       f"got {proposal['value']!r}")
        return float(proposal["value"])

    @traitlets.observe("model")
    def _model_changed(self, change):
        self._replay = Replay(change["new"], getattr(self._replay, "trace", None))
        self.frame = min(self.frame, self.n_frames - 1) if self.n_frames else 0

    # ---- the replay ------------------------------------------------------
    @property
    def replay(self):
        """The Replay shown (frames, nodes, the engine's trace)."""
        return self._replay

    @property
    def current(self):
        """The frame dict now shown (``title``, ``sentence``, ``phase``...)."""
        return self.model["frames"][self.frame]

    @property
    def n_frames(self):
        """How many frames the replay has."""
        return len(self.model.get("frames", ())) if self.model else 0

    # ---- controls (state only; the browser animates) ---------------------
    def play(self):
        """Starts playing (from the start again if at the last frame)."""
        if self.frame >= self.n_frames - 1:
            self.frame = 0
        self.playing = True

    def pause(self):
        """Stops playing; the view stays at the current frame."""
        self.playing = False

    def step(self, n=1):
        """Pauses and moves ``n`` frames (negative: back), stopping at the ends."""
        self.playing = False
        self.frame = self.frame + int(n)
        return self.frame

    def seek(self, k):
        """Jumps to frame ``k`` (negative counts from the end, like indexing)."""
        k = int(k)
        self.frame = k + self.n_frames if k < 0 else k
        return self.frame

    # ---- static forms ----------------------------------------------------
    def to_html(self):
        """A self-contained HTML page that plays this replay (no kernel, no network)."""
        return export_html(self._replay, frame=self.frame, classroom=self.classroom,
                           speed=self.speed)

    def save_html(self, path):
        """Writes ``to_html()`` to ``path``; returns the path."""
        export_html(self._replay, path, frame=self.frame, classroom=self.classroom,
                    speed=self.speed)
        return path

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data, metadata = dict(data), dict(metadata or {})
        # Shown only where no widget manager renders the view: a static page runs
        # the HTML player; a sanitizer (untrusted notebook, code host) keeps only
        # its picture, which is also there as image/png on its own.
        picture = self.picture()
        png, (width, height) = picture
        data["text/html"] = html_snippet(self._replay, frame=self.frame, classroom=self.classroom,
                                         speed=self.speed, picture=picture)
        data["image/png"] = base64.b64encode(png).decode("ascii")
        metadata["image/png"] = {"width": width, "height": height}
        data["text/plain"] = describe(self._replay)
        return data, metadata

    def picture(self, frame=-1):
        """``(png_bytes, (width, height))``: a frame drawn by matplotlib (``png.replay_png``)."""
        return replay_png(self._replay, frame, classroom=self.classroom)

    def __repr__(self):
        return (f"<TapePlayer frame {self.frame}/{max(self.n_frames - 1, 0)}"
                f"{' playing' if self.playing else ''}: {self.current['title'] if self.n_frames else ''}>")
