# Lesson 14 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 14
#
# The tape players' static HTML is masked by notebooks/nbval_sanitize.cfg; their text form
# is compared. The 1,001-record RNN is exported to a file (under 0.5 MB), not shown inline, so
# the notebook stays small; a 20-step RNN is shown inline instead.
# %% [markdown]
# # Lesson 14: Debugging the tapes of real models
#
# Lesson 11 played tapes of a few ops. A real model's tape has hundreds or thousands of
# records, and a bug in it (a `nan` loss, a layer that never learns) hides somewhere in
# there. This lesson plays the tapes of three real models, and uses the player's
# debugging views to find what is wrong with them in a few clicks.
#
# **You will learn**
# 1. to read a training step's tape as **layers**: each layer records in its own name
#    scope, the player opens at the level of those scopes (each one box with a
#    gradient-norm bar), and its **health panel** gives every layer a row of numbers;
# 2. to see **vanishing and exploding gradients** in an unrolled RNN, step by step;
# 3. to find a **NaN** (from `log(0)`) with the player's *first NaN/Inf* button, and a
#    **None** (from a detached branch) with its *lost gradient* button and
#    `widgets.explain_none_gradient`; and to fix both;
# 4. to follow every layer's gradient **over training** with a `widgets.TrainingRecorder`
#    (one line in the loop), and to see an exploding layer kill the layers around it.
#
# Cells marked **Predict** have a blank for your guess and a check below it.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 4 |
# | 1. A training step that reads as layers | 11 |
# | 2. An RNN over 200 steps: vanishing and exploding gradients | 13 |
# | 3. A broken model: a NaN and a None | 19 |
# | summary | 2 |
# | exercises 1 and 2 | 6 |
# | in all | 55 |
#
# Exercises 3 and 4 are homework. Section 4, marked *after class*, is reading for after the hour.

# %%
%matplotlib inline
%config InlineBackend.figure_formats = ['png']
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import autodiff as ad
import widgets
from widgets.explain_history import record_history
from widgets.exercises import check  # None only matches None; numbers must be close

# %% [markdown]
# ## 1. A training step that reads as layers
#
# The model of lesson 13: two moons, an MLP `2 -> 16 -> 16 -> 2`, an `ad.keras.Model`. A
# model's layers run inside `ad.name_scope(layer.name)`, so every record carries its layer's
# scope, and `print(tape)` shows it after `#`. (The layers get fixed names here, so the
# printout is the same on every run.)

# %%
def two_moons(n, noise=0.1, seed=0):
    """n points on two interleaved half circles, and their labels 0 and 1."""
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0.0, np.pi, n)
    label = rng.integers(0, 2, n)
    x = np.where(label == 0, np.cos(angle), 1.0 - np.cos(angle))
    y = np.where(label == 0, np.sin(angle), 0.5 - np.sin(angle))
    points = np.stack([x, y], axis=1) + rng.normal(0.0, noise, (n, 2))
    return points.astype(np.float32), label.astype(np.int32)


class MLP(ad.keras.Model):
    """2 -> 16 -> 16 -> 2 logits, relu in between."""

    def __init__(self):
        super().__init__(name="mlp")
        self.hidden1 = ad.keras.layers.Dense(16, activation="relu", name="hidden1")
        self.hidden2 = ad.keras.layers.Dense(16, activation="relu", name="hidden2")
        self.logits = ad.keras.layers.Dense(2, name="logits")

    def call(self, x):
        return self.logits(self.hidden2(self.hidden1(x)))


ad.random.set_seed(0)
points, labels = two_moons(64)
x_train, y_train = ad.constant(points), ad.constant(labels)
model = MLP()

with ad.GradientTape(persistent=True) as tape:
    logits = model(x_train)
    with ad.name_scope("loss"):
        loss = ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(y_train, logits))
print(tape)

# %% [markdown]
# Play it. The player opens at the level of the scopes, the **overview**: each scope is a
# box (click one to open it, click its name to close it again). Press **Play** and watch
# the backward pass go from `loss` back through `logits`, `hidden2` and `hidden1`. Under
# each box, a bar grows with the **norm of the gradient** that the box's ops have sent
# back so far: a layer that receives no gradient, or a huge one, stands out. The panel on
# the right, *gradient health by scope*, has a row for every box (more on it below). The
# `names={"loss": loss}` makes the player say `loss` where it would say `v11`.

# %%
player = widgets.TapePlayer(tape, loss, model.trainable_variables, names={"loss": loss})
player

# %% [markdown]
# **Predict.** How many boxes (scope groups) does the player draw for this tape?

# %% tags=["solution"]
groups = player.replay.data["groups"]

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 4
### END SOLUTION

# %% tags=["check"]
check(my_prediction, len(groups), hint="count the different scopes after # in the printout")

# %% [markdown]
# The same bars as numbers: `replay.data["debug"]["group_norms"]` holds, for every group,
# the running norm of what it sent back, frame by frame. The last value is the bar's
# final length. (A group that sent a NaN back holds `"NaN"` from then on; a group that
# nothing came back through holds an empty list: its gradient is None.)

# %%
def final_bars(rep):
    """{scope: the group's gradient-norm bar at the end of the backward pass, None if none}."""
    scope = {g["id"]: g["scope"] for g in rep.data["groups"]}
    return {scope[gid]: series[-1][1] if series else None
            for gid, series in rep.data["debug"]["group_norms"].items()}


for name, bar in final_bars(player.replay).items():
    print(f"{name:<12} {bar:.2g}")

# %% [markdown]
# The **health panel** reads `replay.data["debug"]["health"]`: one row per group, in the
# order the groups ran. For a layer it gives the norm of the gradient that reached its
# variables (`‖g‖`), the norm of the variables themselves (`‖w‖`) and their ratio (`g/w`,
# how big a step the gradient asks for, relative to the weights). A row is marked `NaN`,
# `None` or `!` (flagged) when a rule fires, and says why; "The others" are the other
# rows: a layer whose weights or ratio are 10 or 100 times off the median of the others
# is flagged. A healthy step has no mark:

# %%
def health_table(rep):
    """The health panel as text: scope, status, |g|, |w|, g/w (2 digits), and the reasons."""
    def num(x):
        return "-" if x is None else f"{x:.2g}"
    for row in rep.data["debug"]["health"]:
        print(f"{row['scope']:<16} {row['status']:<8} |g| {num(row['grad_norm']):<7} "
              f"|w| {num(row['weight_norm']):<7} g/w {num(row['ratio']):<7}",
              "; ".join(flag["reason"] for flag in row["flags"]))


health_table(player.replay)

# %% [markdown]
# One Adam step with these gradients, and the loss goes down: the step is healthy.

# %%
optimizer = ad.optimizers.Adam(learning_rate=0.01)
variables = model.trainable_variables
optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
loss_after = ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(y_train, model(x_train)))
print(f"loss {float(loss):.3f} -> {float(loss_after):.3f}")

# %% [markdown]
# ## 2. An RNN over 200 steps: vanishing and exploding gradients
#
# A recurrent network applies the same cell again and again:
# $h_t = \tanh(h_{t-1} W + x_t U + b)$. Unrolled for 200 steps, its tape has five records a
# step, each step in its own scope `rnn/step_NNN`. The loss reads only the last state, so
# $\partial\,\mathrm{loss} / \partial h_t$ says how much step $t$ can still learn from the
# loss. By the chain rule it is a product of one Jacobian per later step,
# $\mathrm{diag}(1 - h^2)\, W^\top$: if those factors shrink vectors, the product
# **vanishes**; if they stretch them, it **explodes**.

# %%
def unrolled_rnn(gain, steps=200, hidden=16, seed=0):
    """A persistent tape of the RNN, its loss, the states h_t and [W, U, b].

    W has entries N(0, gain**2 / hidden): gain < 1 shrinks, gain > 1 is chaotic.
    """
    rng = np.random.default_rng(seed)
    W = ad.Variable((rng.normal(size=(hidden, hidden)) * gain / np.sqrt(hidden))
                    .astype(np.float32), name="W")
    U = ad.Variable((rng.normal(size=(2, hidden)) * 0.5).astype(np.float32), name="U")
    b = ad.Variable(np.zeros((1, hidden), np.float32), name="b")
    xs = [ad.constant(rng.normal(size=(1, 2)).astype(np.float32)) for _ in range(steps)]
    states = []
    with ad.GradientTape(persistent=True) as tape:
        h = ad.zeros((1, hidden))
        for t, x in enumerate(xs):
            with ad.name_scope(f"rnn/step_{t:03d}"):
                h = ad.tanh(ad.matmul(h, W) + ad.matmul(x, U) + b)
            states.append(h)
        with ad.name_scope("loss"):
            loss = ad.reduce_sum(h)
    return tape, loss, states, [W, U, b]


rnn_tape, rnn_loss, states, rnn_vars = unrolled_rnn(gain=0.5)
print(len(rnn_tape.records), "records;",
      rnn_tape.records[0].scope, "...", rnn_tape.records[-2].scope)

# %% [markdown]
# The gradient with respect to every state at once (a list of 200 sources), and its norm
# step by step, going back in time from the last step:

# %%
def state_norms(tape, loss, states):
    grads = tape.gradient(loss, states)
    return np.array([np.linalg.norm(g.numpy().astype(np.float64)) for g in grads])


small = state_norms(rnn_tape, rnn_loss, states)
for t in (199, 190, 180, 150, 100):
    print(f"step {t}: {small[t]:.2g}")

# %% [markdown]
# **Predict.** Going back from step 199 to step 150 the norm fell from 4 to about
# $10^{-17}$, roughly a factor $0.45$ a step. In float32, what is
# $\|\partial\,\mathrm{loss} / \partial h_0\|$, the gradient at the very first step?

# %% tags=["solution"]
my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 0.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, float(small[0]), atol=0.0,
      hint="how small is 0.45 to the power 199, and how small can a float32 be?")

# %% [markdown]
# > **Teaching moment: vanished means zero.** The smallest positive float32 is about
# > $1.4 \cdot 10^{-45}$. Below it the gradient is not tiny, it is exactly `0.0`: the
# > first seventy steps of this network get **no** signal from the loss at all, and no
# > learning rate can bring it back.
# > (TensorFlow's CPU kernels go further: they flush every subnormal number, below about
# > $1.2 \cdot 10^{-38}$, to 0, so there this network's gradient is exactly 0 from about
# > step 90 back. This toolkit keeps subnormals, as NumPy does.)

# %%
zero_from = max(t for t, n in enumerate(small) if n == 0.0)
print(f"the gradient is exactly 0 at step {zero_from} and every step before it")

# %% [markdown]
# The same network with a **large** recurrent matrix (gain 3): now the factors stretch,
# and the gradient grows going back in time. This network is also *chaotic*: a change
# in the last bit of one float grows step after step, so the exact norms differ from one
# machine (or BLAS library) to the next. What never changes is the explosion itself:

# %%
big_tape, big_loss, big_states, _ = unrolled_rnn(gain=3.0)
large = state_norms(big_tape, big_loss, big_states)
print("going back 200 steps, the norm grew more than a million times:",
      bool(large[0] > 1e6 * large[199]))

fig, ax = plt.subplots(figsize=(7, 3.4))
steps = np.arange(200)
ax.semilogy(steps, np.where(small > 0, small, np.nan), label="gain 0.5: vanishing")
ax.semilogy(steps, large, label="gain 3: exploding")
ax.axvline(zero_from, color="grey", linestyle=":", label="exactly 0 from here back")
ax.set(xlabel="step $t$", ylabel=r"$\|\partial\,\mathrm{loss}/\partial h_t\|$",
       title="Gradient norm at each step of a 200-step RNN")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ### The story in the player
#
# The player shows the same decay without any code: collapsed, each step is one box and
# the backward pass moves box by box, from `rnn/step_199` down; each box's norm bar is
# shorter than the one after it. Here is a 20-step version inline (101 records) ...

# %%
short_tape, short_loss, _, short_vars = unrolled_rnn(gain=0.5, steps=20)
short_player = widgets.TapePlayer(short_tape, short_loss, short_vars, names={"loss": short_loss})
short_player

# %% [markdown]
# ... and the whole 1,001-record tape as a web page, which plays offline (open it in a
# browser: it opens at the level of its scopes, `rnn` holding its 200 steps in five ranges
# of 40, and `loss`; a click opens a box). Its bars, read from the page's data:

# %%
rnn_replay = widgets.replay(rnn_tape, rnn_loss, rnn_vars, names={"loss": rnn_loss})
bars = final_bars(rnn_replay)
with tempfile.TemporaryDirectory() as folder:
    page = widgets.export_html(rnn_replay, Path(folder) / "rnn.html")
print(len(rnn_replay.data["groups"]), "groups; a page under 1 kB a record:",
      len(page.encode()) < 1000 * 1001)
for t in (199, 190, 180, 150, 100):
    print(f"rnn/step_{t:03d}: bar {bars.get(f'rnn/step_{t:03d}', 0.0):.2g}")

# %% [markdown]
# What helps: keep the recurrent Jacobians near norm 1 (an orthogonal initial `W`),
# clip the gradient's norm against explosions, or use a gated cell (LSTM, GRU), whose
# additive state update lets the gradient pass many steps without shrinking.

# %% [markdown]
# ## 3. A broken model: a NaN and a None
#
# Here is the MLP again, written with two bugs that real code has:
#
# 1. the cross-entropy is written by hand, `-sum(onehot * log(softmax(logits)))`;
# 2. a leftover line zeroes the first layer's negative features **in NumPy**:
#    `np.maximum(h.numpy(), 0)`, wrapped back with `ad.constant`.
#
# And one row of the data is a glitch, `(300, 300)`, labelled 0.

# %%
class BrokenMLP(MLP):
    def call(self, x):
        h = self.hidden1(x)
        with ad.name_scope("features"):
            h = ad.constant(np.maximum(h.numpy(), 0.0))    # bug 2: out of the tape's sight
        return self.logits(self.hidden2(h))


def cross_entropy_by_hand(labels, logits):                  # bug 1: log of a softmax
    onehot = ad.one_hot(labels, 2)
    return -ad.reduce_mean(ad.reduce_sum(onehot * ad.math.log(ad.nn.softmax(logits)), axis=1))


glitched = points.copy()
glitched[0], glitch_labels = (300.0, 300.0), labels.copy()
glitch_labels[0] = 0
x_bad, y_bad = ad.constant(glitched), ad.constant(glitch_labels)

ad.random.set_seed(0)
broken = BrokenMLP()
with record_history() as history, np.errstate(divide="ignore", invalid="ignore"):
    with ad.GradientTape(persistent=True) as tape:
        logits = broken(x_bad)
        with ad.name_scope("loss"):
            loss = cross_entropy_by_hand(y_bad, logits)
    grads = tape.gradient(loss, broken.trainable_variables)
print("loss:", float(loss))
print("gradients holding NaN:", sum(g is not None and bool(np.isnan(g.numpy()).any())
                                    for g in grads),
      "of", len(grads), "  gradients that are None:", sum(g is None for g in grads))

# %% [markdown]
# A `nan` loss, four gradients full of `nan`, two that are `None`. Before opening anything:
#
# **Predict.** Which layer's variables are the two with a `None` gradient? Its name,
# e.g. `"logits"`.

# %% tags=["solution"]
none_layers = {v.path.split("/")[-2] for v, g in zip(broken.trainable_variables, grads)
               if g is None}

my_prediction = ...  # your prediction, a layer name
### BEGIN SOLUTION
my_prediction = "hidden1"
### END SOLUTION

# %% tags=["check"]
check(my_prediction, " ".join(sorted(none_layers)),
      hint="a gradient flows back only through what the tape saw: which layer ran before "
           "the NumPy line?")

# %% [markdown]
# Now open the player and press its two red buttons: **first NaN/Inf** jumps to the first
# record whose values hold a NaN or an Inf, **lost gradient** to where the path from the
# loss back to a source breaks.

# %%
with np.errstate(divide="ignore", invalid="ignore"):
    broken_player = widgets.TapePlayer(tape, loss, broken.trainable_variables,
                                       names={"loss": loss})
broken_player

# %% [markdown]
# The buttons read `replay.data["debug"]`; Python can press them too.
#
# **Predict.** Which op type makes the first non-finite value?

# %% tags=["solution"]
debug = broken_player.replay.data["debug"]
broken_player.seek(debug["first_nonfinite"]["forward"])
first_bad_op = next(n for n in broken_player.replay.nodes if n["id"] == broken_player.current["op"])

my_prediction = ...  # your prediction, an op type such as "MatMul"
### BEGIN SOLUTION
my_prediction = "Log"
### END SOLUTION

# %% tags=["check"]
check(my_prediction, first_bad_op["op_type"],
      hint="which function of a probability is -inf when the probability is 0?")

# %%
print(first_bad_op["op_type"], "in scope", repr(first_bad_op["scope"]))
print("its output:", broken_player.current["outputs"][0]["value"])
print("softmax of the glitch row:", ad.nn.softmax(logits).numpy()[0])

# %% [markdown]
# The glitch row's logits are hundreds apart, so float32's softmax rounds the other
# class's probability to exactly 0. `log(0)` is `-inf`, and `0 * -inf` is `nan`, though
# the model is *right* about that row. In the backward pass, `Log`'s rule divides by the
# probability: the first backward step that sends a non-finite value is also `Log`.

# %%
first_bad_step = broken_player.replay.frames[debug["first_nonfinite"]["backward"]]
print("first non-finite backward step:", first_bad_step["vjp"]["op_type"])

# %% [markdown]
# Now the **lost gradient** button. Each entry names a source whose gradient is `None`
# and the tensor the button jumps to: the last one on the path that the tape still saw.

# %%
names = {n["id"]: n["name"] for n in broken_player.replay.nodes if n["type"] == "tensor"}
for lost in debug["lost"]:
    print(names[lost["source"]], "-> jump to", names[lost["node"]], f"({lost['reason']})")

# %% [markdown]
# From the tape alone the break is `not_recorded`: something happened where the tape
# could not see. The history recorded around the step names it:

# %%
widgets.explain_none_gradient(tape, loss, broken.hidden1.kernel, history=history,
                              source_name="hidden1/kernel", target_name="loss")

# %% [markdown]
# The health panel says all of this at a glance, one row per layer: `loss` made the first
# NaN, `logits` and `hidden2` send a NaN gradient back (and say where it began), and
# `hidden1` is `None`, with the reason the tape gives:

# %%
health_table(broken_player.replay)

# %% [markdown]
# ### The fix
#
# Both fixes are one line: `ad.maximum` keeps the clip on the tape, and
# `sparse_softmax_cross_entropy_with_logits` works with log-softmax,
# $\log p_k = z_k - \log\sum_j e^{z_j}$, which is never `log(0)`.

# %%
class FixedMLP(MLP):
    def call(self, x):
        h = self.hidden1(x)
        with ad.name_scope("features"):
            h = ad.maximum(h, 0.0)
        return self.logits(self.hidden2(h))


ad.random.set_seed(0)
fixed = FixedMLP()
with ad.GradientTape(persistent=True) as tape:
    logits = fixed(x_bad)
    with ad.name_scope("loss"):
        loss = ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(y_bad, logits))
fixed_replay = widgets.replay(tape, loss, fixed.trainable_variables, names={"loss": loss})
print(f"loss: {float(loss):.3f}")
print("first NaN/Inf:", fixed_replay.data["debug"]["first_nonfinite"])
print("lost gradients:", fixed_replay.data["debug"]["lost"])
print("every gradient finite:", all(bool(np.all(np.isfinite(g.numpy())))
                                    for g in fixed_replay.gradients))

# %% [markdown]
# (The glitch row is still in the data; a real fix also cleans or scales the inputs. But
# the loss no longer turns one bad row into a `nan` that poisons every weight.)
#
# ### The same two buttons on 1,001 records
#
# Back to the 200-step RNN, with two bugs planted: one input reading is missing (`nan` at
# step 150), and a line at step 99 passes the state through NumPy; the network also learns
# its initial state `h0`. Reading 1,001 records to find them is hopeless; the buttons take
# one click each.

# %%
def planted_rnn(steps=200, hidden=16, seed=0):
    rng = np.random.default_rng(seed)
    W = ad.Variable((rng.normal(size=(hidden, hidden)) * 0.5 / np.sqrt(hidden))
                    .astype(np.float32), name="W")
    U = ad.Variable((rng.normal(size=(2, hidden)) * 0.5).astype(np.float32), name="U")
    b = ad.Variable(np.zeros((1, hidden), np.float32), name="b")
    h0 = ad.Variable(np.zeros((1, hidden), np.float32), name="h0")
    xs = rng.normal(size=(steps, 1, 2)).astype(np.float32)
    xs[150, 0, 0] = np.nan                                   # a missing reading
    with ad.GradientTape(persistent=True) as tape, np.errstate(invalid="ignore"):
        h = h0
        for t in range(steps):
            with ad.name_scope(f"rnn/step_{t:03d}"):
                h = ad.tanh(ad.matmul(h, W) + ad.matmul(ad.constant(xs[t]), U) + b)
                if t == 99:
                    h = ad.constant(h.numpy())               # out of the tape's sight
        with ad.name_scope("loss"):
            loss = ad.reduce_sum(h)
    return tape, loss, [W, U, b, h0]


tape, loss, sources = planted_rnn()
with np.errstate(invalid="ignore"):
    planted = widgets.replay(tape, loss, sources, names={"loss": loss})
nodes = {n["id"]: n for n in planted.nodes}
made_by = {e["to"]: e["op"] for e in planted.edges if e["kind"] == "out"}
debug = planted.data["debug"]
nan_op = nodes[planted.frames[debug["first_nonfinite"]["forward"]]["op"]]
print(len(tape.records), "records,", len(planted.data["groups"]), "groups")
print("first NaN/Inf ->", nan_op["op_type"], "in", nan_op["scope"])
for lost in debug["lost"]:
    print("lost gradient ->", nodes[lost["source"]]["name"], "is None; jump to",
          nodes[lost["node"]]["name"], "in", nodes[made_by[lost["node"]]]["scope"])
rows = {row["scope"]: row for row in debug["health"]}
for scope in ("rnn/step_000", "rnn/step_099", "rnn/step_100", "rnn/step_150"):
    print(f"health of {scope}: {rows[scope]['status']:<4}",
          "; ".join(flag["reason"] for flag in rows[scope]["flags"]))

# %% [markdown]
# The health panel has a row for each of the 201 groups: every step from 150 on is marked
# `NaN` (its values are), and so is every step from 100 to 149 (the gradient that reaches
# them is); every step up to 99 is `None`: nothing flows back past the NumPy line. The
# summary's `NaN` and `None` buttons scroll the panel to those rows.
#
# `widgets.export_html(planted, "planted.html")` writes this player as one page under 1 kB
# a record: it opens at the level of its scopes, and both buttons work offline
# (`examples/rnn_vanishing_gradients.py` writes it).
#
# ## 4. Over training: an exploding layer (after class)
#
# One step's tape shows one moment. Whether a layer explodes, vanishes or dies is a trend
# over many steps, and `widgets.TrainingRecorder` keeps it: one line in the training loop,
# `recorder.record(grads, model)`, stores every layer's gradient norm, weight norm, their
# ratio, the update's size, the share of exact zeros, NaNs and Nones, and a histogram of
# the gradient, step by step (the way TensorBoard keeps histograms over steps).
#
# The model is the healthy MLP of section 1, with one slip: `hidden2`'s kernel was
# initialized with a standard deviation of 40, where Keras's default (Glorot uniform, as
# `ad.keras.layers.Dense` uses too) gives a 16 x 16 kernel a standard deviation of 0.25:
# 160 times too large. First, one step in the player: its health panel flags the layer
# before any training.

# %%
def exploding_mlp():
    ad.random.set_seed(0)
    model = MLP()
    model(x_train)                                          # creates the variables
    model.hidden2.kernel.assign(np.random.default_rng(1).normal(0.0, 40.0, (16, 16))
                                .astype(np.float32))        # the slip: 40, not 0.25
    return model


def step_loss(model):
    return ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(y_train, model(x_train)))


model = exploding_mlp()
with ad.GradientTape() as tape:
    loss = step_loss(model)
health_table(widgets.replay(tape, loss, model.trainable_variables, names={"loss": loss}))

# %% [markdown]
# Now train it for 40 steps of plain gradient descent (`SGD`, learning rate 0.1, which
# trains the healthy model well), recording every step:

# %%
model = exploding_mlp()
optimizer = ad.optimizers.SGD(learning_rate=0.1)
recorder = widgets.TrainingRecorder()
for step in range(40):
    with ad.GradientTape() as tape:
        loss = step_loss(model)
    grads = tape.gradient(loss, model.trainable_variables)
    recorder.record(grads, model)                          # the one line
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step in (0, 1, 2, 3, 39):
        print(f"step {step:>2}: loss {float(loss):.2f}")

# %% [markdown]
# The first steps' gradients are huge: `hidden2`'s giant weights multiply every
# cotangent that passes through them on its way back to `hidden1`, and one step of
# gradient descent throws `hidden1`'s weights far away.
#
# **Predict.** `hidden1` ends in a ReLU. After 40 steps, what share of `hidden1`'s
# gradient entries is exactly 0? (A number from 0 to 1.)

# %% tags=["solution"]
dead_share = recorder.layers["mlp/hidden1"]["zero_fraction"][-1]

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 1.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, dead_share,
      hint="a ReLU whose input is negative for every example passes back nothing; "
           "what did one huge step do to hidden1's weights?")

# %% [markdown]
# `print(recorder)` is the table at the last step and the rules that fired, with their
# reasons; `recorder.plot()` draws the trends over the steps (one line per layer) and each
# layer's gradient histograms, step after step (later steps lower and darker). (The exact
# numbers of a network this unstable change with the machine, so the tests of this lesson
# do not compare the table; what the rules say does not change.)

# %% tags=["nbval-ignore-output"]
print(recorder)

# %%
for layer, reasons in recorder.flags().items():
    print(f"{layer:<12}", sorted({reason.split(":")[0] for reason in reasons}))
recorder.plot()

# %% [markdown]
# Read the plot from the top left: the gradient norms of `hidden1` and `logits` start near
# 100 (the healthy step of section 1 had 0.23 and 0.26) and grow for two steps
# (exploding); `hidden1`'s weights grow twentyfold in three steps; from step 4 on,
# `hidden1`'s gradient is exactly 0 (the triangles along the bottom: a log scale has no
# 0) and the others' shrink toward it, tenfold every few steps: the ReLUs are dead, and
# the loss stalls at 0.42. The histograms show the same: a distribution that widens,
# then collapses onto 0. The fix is the
# initialization (the default, Glorot, keeps each layer's output near the scale of its
# input); clipping the gradient's norm (`ad.clip_by_global_norm`) limits what one step
# can do.
#
# ## Summary
#
# * Layers record in their own name scope: a model's tape reads as layers, and the player
#   draws each scope as a box with a **gradient-norm bar**.
# * An unrolled RNN multiplies one Jacobian per step: its gradients **vanish** (to exactly
#   0 in float32) or **explode**; the per-step bars show it.
# * **first NaN/Inf** finds the op that made a non-finite value (`Log` of a probability
#   that underflowed); **lost gradient** and `explain_none_gradient(..., history=...)` find
#   a detached branch (`.numpy()`). Fix the math (log-softmax) and keep every step on the
#   tape.
# * `widgets.export_html` writes any of these players as one offline page.
# * The **health panel** (`replay.data["debug"]["health"]`) gives every layer a row: its
#   gradient and weight norms, their ratio, and a mark (`NaN`, `None`, `!`) with the
#   reason. `widgets.TrainingRecorder` keeps the same numbers over training steps
#   (`recorder.record(grads, model)`), and flags a layer that explodes, vanishes or dies.
#
# ## Exercises: predict the gradient
#
# Work each answer out on paper, type it into `my_prediction`, then run the cell.

# %% [markdown] tags=["teacher"]
# *Teacher edition.* Each answer is filled in below its blank, between the solution
# markers, and every check shows it passing. Students work in the student edition of
# this lesson (`notebooks/student/`), where only the blank (`...`) is left and a check
# that is not passed yet prints **Not yet** with a hint, never the answer.

# %% [markdown] tags=["student"]
# *Type your prediction in place of `...`, run the cell, then run the check below it.
# The check says **Correct!**, or **Not yet** with a hint. It never shows the answer,
# and the rest of the notebook still runs, so you can come back and try again.*

# %% [markdown]
# **Exercise 1.** The RNN above records five ops a step and one for the loss. How many
# records does a 10-step version have?

# %% tags=["solution"]
ex_tape, _, _, _ = unrolled_rnn(gain=0.5, steps=10)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 51
### END SOLUTION

# %% tags=["check"]
check(my_prediction, len(ex_tape.records), hint="five a step, times the steps, plus the loss")

# %% [markdown]
# **Exercise 2.** A linear "RNN" with one number: $h_t = 0.5\, h_{t-1}$, three steps.
# What is $\partial h_3 / \partial h_0$?

# %% tags=["solution"]
h0 = ad.Variable(1.0)
with ad.GradientTape() as tape:
    h = h0
    for _ in range(3):
        h = 0.5 * h

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 0.125
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(h, h0), hint="one factor of the Jacobian per step")

# %% [markdown]
# **Exercise 3.** The gradient of $\log p$ at $p = 0$?

# %% tags=["solution"]
p = ad.Variable(0.0)
with np.errstate(divide="ignore"):
    with ad.GradientTape() as tape:
        y = ad.math.log(p)
    dy_dp = tape.gradient(y, p)

my_prediction = ...  # your prediction, a number (float("inf") is a number)
### BEGIN SOLUTION
my_prediction = float("inf")
### END SOLUTION

# %% tags=["check"]
check(my_prediction, dy_dp, hint="write down the derivative of log, then look at what it does as p shrinks to 0")

# %% [markdown]
# **Exercise 4.** This time the first layer's output goes through `ad.stop_gradient`
# instead of NumPy. What `reason` does `explain_none_gradient` give for the first
# layer's kernel now?

# %% tags=["solution"]
ad.random.set_seed(0)
model = MLP()
with ad.GradientTape() as tape:
    h = ad.stop_gradient(model.hidden1(x_train))
    loss = ad.reduce_sum(model.logits(model.hidden2(h)))

my_prediction = ...  # your prediction, a reason string such as "not_watched"
### BEGIN SOLUTION
my_prediction = "stop_gradient"
### END SOLUTION

# %% tags=["check"]
check(my_prediction, widgets.explain_none_gradient(tape, loss, model.hidden1.kernel).reason,
      hint="this time the tape recorded the op that cut the path")
