# Lesson 11 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 11
#
# The tape players' static HTML (their inlined script, styles and full-precision data)
# is masked by a pattern in notebooks/nbval_sanitize.cfg; their text form is compared.
# %% [markdown]
# # Lesson 11: Visual debugging of tapes
#
# When a gradient is wrong, or `None`, printing it tells you *that* something is off, not
# *where*. This lesson is about looking inside: watching a tape play its backward pass
# step by step, reading the same steps as data, and asking a tool to name the place where
# the path from a loss back to a parameter is broken.
#
# **You will learn**
# 1. to replay a tape with `widgets.TapePlayer`: one tape, two tapes side by side, and a
#    second derivative with nested tapes;
# 2. to read the backward pass from `tape.backward_trace`: the cotangent that arrives at
#    each op and what it sends on; and as straight-line code, compiled by `ad.function`;
# 3. to find a broken gradient with `widgets.explain_none_gradient`, and with
#    `record_history` for the causes a tape cannot see;
# 4. to read a model's tape by its layers: one box per name scope, and one row per box in
#    the player's *gradient health* panel;
# 5. to save a player as a standalone HTML page.
#
# The lesson ends with *predict the gradient* exercises.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 3 |
# | 1. Replaying a tape | 8 |
# | 2. Reading the backward pass as data | 10 |
# | 3. Finding a broken gradient | 9 |
# | 4. A model's tape: boxes and the health panel | 8 |
# | 5. A player as a web page | 2 |
# | summary | 2 |
# | exercises 1 to 4 | 12 |
# | in all | 54 |
#
# Exercises 5 to 7 are homework.

# %%
import tempfile
from pathlib import Path

import numpy as np

import autodiff as ad
import widgets
from widgets.explain_history import record_history
from widgets.exercises import check  # None only matches None; numbers must be close

# %% [markdown]
# ## 1. Replaying a tape
#
# Start small: $y = x^2$ at $x = 3$. `widgets.TapePlayer(tape, target, sources)` runs the
# backward pass (like `tape.gradient`, so a non-persistent tape is used up) and shows the
# tape as a graph: tensors as boxes, ops as circles.
#
# Press **Play**, or click the player and use the space bar and the arrow keys. The frames
# go: one per **record** (the forward pass, in recording order), the **seed**
# ($\partial y / \partial y = 1$), one per **backward step** (a cotangent arrives at an op,
# its rule sends contributions to the inputs), and the **result**. The sentence under the
# graph says what happens in each frame; *classroom* mode enlarges everything for a
# projector.
#
# (On a page without a running notebook, such as a code host or an HTML export, the same
# player plays from the page itself; where scripts are not allowed you see its last
# frame.)

# %%
x = ad.Variable(3.0, name="x")
with ad.GradientTape() as tape:
    y = x ** 2

player = widgets.TapePlayer(tape, target=y, sources=x, names={"y": y})
player

# %% [markdown]
# The player is also an object you can drive from Python. In a live notebook the view
# above follows along:

# %%
for frame in player.replay.frames:
    print(frame["title"])
player.seek(-1)                         # jump to the last frame
print()
print(player.current["sentence"])

# %% [markdown]
# ### Two tapes at once
#
# Two tapes can record the same code, each watching something different. Here `tape_a`
# watches `a` and `tape_b` watches `b`; `sin(a)` is recorded only by `tape_a`,
# `sigmoid(b)` only by `tape_b`, and their sum by both. Pass a *list* of tapes: the first
# one's backward pass is played, and every op is coloured by the tapes that recorded it.

# %%
a = ad.constant(0.5)
b = ad.constant(-1.0)
with ad.GradientTape() as tape_a, ad.GradientTape() as tape_b:
    tape_a.watch(a)
    tape_b.watch(b)
    total = ad.sin(a) + ad.sigmoid(b)

widgets.TapePlayer([tape_a, tape_b], target=total, sources=a,
                   names={"a": a, "b": b, "total": total}, tape_names=["tape_a", "tape_b"])

# %% [markdown]
# The backward pass of `tape_a` never visits `Sigmoid`: that record is not on its tape.
# `tape_b` still holds its records and can answer for `b`:

# %%
print(f"d total / d b = {float(tape_b.gradient(total, b)):.4f}   (sigmoid'(-1))")

# %% [markdown]
# ### A second derivative
#
# Lesson 4 differentiates a gradient with an outer tape. Play the **outer** tape's backward
# pass of `dy_dx` to see what the second derivative is made of: the outer tape holds the
# forward `Pow` *and* the ops of the inner backward pass (the rule for `Pow`, $3x^2$, is
# computed with a `Pow` and two `Mul`s). The inner tape is persistent here only so that it
# still holds its records to be drawn; its ops are coloured by both tapes, the
# backward-pass ops by the outer one alone.

# %%
x = ad.Variable(1.5, name="x")
with ad.GradientTape() as outer:
    with ad.GradientTape(persistent=True) as inner:
        y = x ** 3
    dy_dx = inner.gradient(y, x)        # 3 x^2, recorded by `outer`

second = widgets.TapePlayer([outer, inner], target=dy_dx, sources=x,
                            names={"y": y, "dy_dx": dy_dx}, tape_names=["outer", "inner"])
print(second.replay.frames[-1]["sentence"], "  (6x at x = 1.5)")
second

# %% [markdown]
# ## 2. Reading the backward pass as data
#
# Everything the player shows comes from one engine call: `tape.backward_trace(target,
# sources)`. It returns the gradients (as `gradient` would) and one `BackwardStep` per
# record visited, in the order visited. Each step has the `record`, the `cotangents` that
# arrived at its outputs, the `contributions` it sent to each input (`None` where an input
# gets nothing), and the running `totals` of those inputs after the step.
#
# Take $u = x\,y + \sin x$. The variable `x` gets gradient along two paths, and the totals
# show the two contributions being added:

# %%
x = ad.Variable(1.5, name="x")
y = ad.Variable(-0.5, name="y")
with ad.GradientTape() as tape:
    u = x * y + ad.sin(x)

print(tape)
names = tape.names()
trace = tape.backward_trace(u, [x, y])
for step in trace.steps:
    record = step.record
    print(f"\nstep: {names[record.output_ids[0]]} = {record.op_type}(...)")
    print("  cotangent arriving:", [round(float(g), 4) for g in step.cotangents])
    for input_id, contribution in step.contributions:
        sent = "nothing" if contribution is None else round(float(contribution), 4)
        print(f"  sends to {names[input_id]}: {sent}")
    print("  totals now:", {names[i]: round(float(t), 4) for i, t in step.totals.items()})

print("\ngradients:", [round(float(g), 4) for g in trace.gradients],
      f"  (by hand: y + cos x = {-0.5 + np.cos(1.5):.4f}, x = 1.5)")

# %% [markdown]
# Read it from the top. `AddV2` passes the seed 1 unchanged to both terms. `Sin` sends
# $\cos 1.5 \approx 0.0707$ to `x`: its first contribution. `Mul` sends $y = -0.5$ to `x`
# and $x = 1.5$ to `y`; the total for `x` becomes $0.0707 - 0.5$. The order is the
# reverse of the recording, and a tensor's total is final once no later step feeds it.
#
# This is how to check a suspicious gradient by hand: compare each step with what the
# rule should do, and find the first one that disagrees.

# %% [markdown]
# ### The backward pass as code
#
# A tape is data that `gradient` walks at run time. `ad.function(f, jit_compile=True)`
# goes one step further: it traces `f` once, tapes and `gradient` calls included, and
# writes the whole computation out as **one straight-line Python function** on plain
# arrays. `f.experimental_get_compiler_ir(x)(stage="python")` prints it, so you can read
# reverse mode as a program: the forward ops, then the backward ops the rules produced.
#
# Here is the tape of a small loss in the player (step through its backward pass), and
# then the same loss and its gradient, compiled:

# %%
w = ad.Variable([[0.5], [-0.25]], name="w")
inputs = ad.constant([[1.0, 1.0]])

with ad.GradientTape(persistent=True) as tape:
    loss = ad.reduce_sum(ad.tanh(inputs @ w) ** 2)
print(tape)
widgets.TapePlayer(tape, target=loss, sources=w, names={"loss": loss})

# %%
@ad.function(jit_compile=True)
def loss_and_grad(x):
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(ad.tanh(x @ w) ** 2)
    return loss, tape.gradient(loss, w)

compiled_loss, compiled_grad = loss_and_grad(inputs)
eager_grad = tape.gradient(loss, w)
print("same gradient as the tape:", np.allclose(compiled_grad.numpy(), eager_grad.numpy()))

# %% tags=["nbval-ignore-output"]
print(loss_and_grad.experimental_get_compiler_ir(inputs)(stage="python"))

# %% [markdown]
# (The printout follows the compiler as it changes, so the tests do not compare it.) Read
# it against the tape, or step through the player beside it. The first lines are the
# tape's four records, written as you would write them by hand (`x @ w`, `xp.tanh`,
# `xp.square` for `** 2`, the sum). After the
# "backward pass" comment comes what the rules of those records compute, in reverse:
# the seed $1$ times `Pow`'s rule $2 \tanh$ (the compiler folded the constants into one
# number, `k5`, computed once), then the rule of `Tanh` written out, `v6 * (1 - v1 * v1)`:
# $1 - \tanh^2$ times the incoming cotangent, then `MatMul`'s rule for `w`, `x.T @ v7`,
# that is $x^\top g$. `Sum`'s rule (spread the cotangent back to the shape of its input)
# became the constant `k4`: the seed reshaped to `(1, 1)`.
# `out=v0` writes `tanh` over `x @ w`, an array nothing needs again, instead of allocating
# a new one.
# The `del` lines free each intermediate after its last use, which a tape cannot do:
# it keeps everything until `gradient` runs.

# %% [markdown]
# ## 3. Finding a broken gradient
#
# `widgets.explain_none_gradient(tape, target, source)` reads a tape **without using it
# up** and says why `tape.gradient(target, source)` is (or is not) `None`: a reason code in
# `.reason`, a paragraph in `.message`, and the path with the break marked (✗). Shown in a
# notebook it renders as a short note. Here are the usual causes, one cell each (lesson 3
# explains each in detail).
#
# **Not watched.** A constant is not watched unless you ask:

# %%
c = ad.constant(2.0)
with ad.GradientTape() as tape:
    z = c * c
widgets.explain_none_gradient(tape, z, c)

# %% [markdown]
# **An integer.** `ad.constant(3)` is `int32`, and integers have no gradients:

# %%
k = ad.constant(3)
with ad.GradientTape() as tape:
    z = k * k
widgets.explain_none_gradient(tape, z, k)

# %% [markdown]
# **`stop_gradient` on the path.** Here the tape did record the path, so the explainer can
# draw it and point at the op that blocks it:

# %%
w = ad.Variable(1.5, name="w")
with ad.GradientTape() as tape:
    z = ad.stop_gradient(w * w) + 1.0
why = widgets.explain_none_gradient(tape, z, w)
print(why.reason)
print(why.path_text())

# %% [markdown]
# **Leaving the library.** Halfway through, the computation went through NumPy. The tape
# recorded `2.0 * w`, and then nothing: from the tape alone, the explainer sees a hole
# between `v1` and `z` (`┄┄ ? ┄┄`). A hole looks the same whatever made it, so it lists
# what could have (in `.candidates`):

# %%
with ad.GradientTape() as tape:
    h = 2.0 * w
    z = ad.constant(np.exp(h.numpy())) * 3.0
widgets.explain_none_gradient(tape, z, w)

# %% [markdown]
# A tape records only ops that touch what it watches. `record_history()` records
# **everything** while its block runs: every op, every Variable read, every `.numpy()`,
# `assign` and `stop_recording`. Run the suspicious code inside it and pass the history;
# now the explainer names the exact step:

# %%
with record_history() as history:
    with ad.GradientTape() as tape:
        h = 2.0 * w
        z = ad.constant(np.exp(h.numpy())) * 3.0
widgets.explain_none_gradient(tape, z, w, history=history)

# %% [markdown]
# **A Variable replaced by a Tensor.** The classic training-loop slip: updating with
# `w = w - lr * g` instead of `w.assign_sub(lr * g)`. The first step works; after it, `w`
# is a plain Tensor, which no tape watches, and the second gradient is `None`:

# %%
w = ad.Variable(1.0, name="w")
with record_history() as history:
    for step in range(2):
        with ad.GradientTape(persistent=True) as tape:
            loss = w * w
        g = tape.gradient(loss, w)
        print(f"step {step}: gradient {g}")
        if g is not None:
            w = w - 0.1 * g                   # the slip: should be w.assign_sub(0.1 * g)

print(widgets.explain_none_gradient(tape, loss, w).reason, "(from the tape alone)")
widgets.explain_none_gradient(tape, loss, w, history=history)

# %% [markdown]
# From the tape alone the explainer can only say "not watched" (and adds the hint that
# `x = x + 1` is the usual culprit); the history shows the `Sub` that turned the Variable
# into a Tensor.
#
# > **Teaching moment: explain before you ask.** A non-persistent tape frees its records in
# > `gradient`, and then there is nothing left to read: the explainer answers `tape_used`.
# > Call it before `gradient`, or use `persistent=True` while debugging (as above).

# %% [markdown]
# ## 4. A model's tape: boxes and the health panel
#
# A Keras layer runs inside `ad.name_scope(layer.name)`, so each of its records carries the
# layer's scope (`print(tape)` shows it after `#`). The player draws a scope as a **box**
# around its ops, with a bar under its name that grows with the norm of the gradient the
# box has sent back so far. A tape of more than 30 records opens with its boxes closed, at
# the level of the layers (the **overview**: click a box to open it); this one is short,
# so its boxes open. Beside the graph, the **gradient health** panel gives each box a
# row: the norm of the gradient that reached the layer's variables (`‖g‖`), of the
# variables themselves (`‖w‖`), their ratio, and a mark with its reason when something
# is wrong: `NaN`, `None`, or `!` for a layer far out of line with the others.
#
# Here is a three-layer network with a slip: a `stop_gradient` meant for the data was put
# one layer too late, on `d0`'s output.

# %%
ad.random.set_seed(0)
d0 = ad.keras.layers.Dense(4, activation="tanh", name="d0")
d1 = ad.keras.layers.Dense(4, activation="tanh", name="d1")
out = ad.keras.layers.Dense(1, name="out")
data = ad.constant(np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32))

with ad.GradientTape() as tape:
    h = ad.stop_gradient(d0(data))          # the slip: meant for `data`, one layer too late
    loss = ad.reduce_mean(out(d1(h)) ** 2)
print(tape)
layers_player = widgets.TapePlayer(tape, loss, d0.trainable_variables + d1.trainable_variables
                                   + out.trainable_variables,
                                   names={"loss": loss})
layers_player

# %% [markdown]
# **Predict.** Which box's row in the health panel is marked `None`? Its scope, e.g.
# `"out"`.

# %% tags=["solution"]
health = layers_player.replay.data["debug"]["health"]

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = "d0"
### END SOLUTION

# %% tags=["check"]
check(my_prediction, " ".join(row["scope"] for row in health if row["status"] == "none"),
      hint="a gradient reaches a layer's variables only through the ops after them: "
           "which layer's output does stop_gradient cut?")

# %% [markdown]
# The panel's rows as data (`replay.data["debug"]["health"]`), with the reason the
# explainer of section 3 gives:

# %%
for row in health:
    grad = "-" if row["grad_norm"] is None else f"{row['grad_norm']:.2g}"
    print(f"{row['scope']:<4} {row['status']:<5} |g| {grad:<7}",
          "; ".join(flag["reason"] for flag in row["flags"]))

# %% [markdown]
# A real model's tape has hundreds or thousands of records; there the overview, the bars
# and the panel's `NaN`/`None` buttons are how you find the layer to open. Lesson 14
# plays such tapes, and follows the same numbers over training steps with
# `widgets.TrainingRecorder`.

# %% [markdown]
# ## 5. A player as a web page
#
# `widgets.export_html(tape, path, target=..., sources=...)` writes the player to one
# self-contained HTML file: the graph, the frames, the script and the styles, with no
# network access needed. Send it to students, or put it on a course page.
# (`player.save_html(path)` does the same for a player you already have.)

# %%
x = ad.Variable(3.0, name="x")
with ad.GradientTape() as tape:
    y = x ** 2

with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "x_squared.html"
    page = widgets.export_html(tape, path, target=y, sources=x, names={"y": y})
    player.save_html(Path(folder) / "first_player.html")
    print(sorted(p.name for p in Path(folder).iterdir()))

print("a whole page:          ", page.startswith("<!DOCTYPE html>"))
print("loads scripts from the web:", "<script src=" in page)
print("the same frames inside:", '"result: dy/dx = 6.0"' in page)

# %% [markdown]
# ## Summary
#
# * `widgets.TapePlayer(tape, target=..., sources=...)` plays a tape: forward records,
#   seed, backward steps, result. A list of tapes colours each op by the tapes that
#   recorded it; nested tapes show a second derivative as the outer tape sees it.
# * `tape.backward_trace` gives the same steps as data: cotangents arriving, contributions
#   sent, running totals. `ad.function(f, jit_compile=True)` and
#   `f.experimental_get_compiler_ir(x)(stage="python")` print them as one Python function.
# * `widgets.explain_none_gradient(tape, target, source)` names the break: not watched, an
#   integer, `stop_gradient`, a non-differentiable op... For breaks the tape cannot see
#   (NumPy, `assign`, a replaced Variable), record the code inside `record_history()`.
# * A model's layers are boxes (their name scopes); the **gradient health** panel
#   (`replay.data["debug"]["health"]`) gives each a row, marked `NaN`, `None` or `!` with
#   the reason.
# * `widgets.export_html` and `player.save_html` make a page that plays without a kernel.
#
# ## Exercises: predict the gradient
#
# Work each one out on paper first, then type your answer into `my_prediction` and run the
# cell. Some answers are numbers, some are `None`, and some are the explainer's reason
# codes (strings such as `'not_watched'`).

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
# **Exercise 1.** How many frames does the player show for $y = x \cdot x + x$? (Count the
# records, the seed, the backward steps and the result.)

# %% tags=["solution"]
x = ad.Variable(2.0, name="x")
with ad.GradientTape() as tape:
    y = x * x + x

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 6
### END SOLUTION

# %% tags=["check"]
check(my_prediction, len(widgets.replay(tape, y, x).frames),
      hint="one frame per record, one for the seed, one per backward step, one for the result")

# %% [markdown]
# **Exercise 2.** In the backward trace of $y = x \cdot x$ at $x = 3$, the one `Mul` step
# sends a contribution along each of its two input edges. What are they? (A list of two.)

# %% tags=["solution"]
x = ad.Variable(3.0, name="x")
with ad.GradientTape() as tape:
    y = x * x
step = tape.backward_trace(y, x).steps[0]

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [3.0, 3.0]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, [float(c) for _, c in step.contributions],
      hint="d(a * b)/da = b: what does each of the two edges of x * x receive?")

# %% [markdown]
# **Exercise 3.** `stop_gradient` on only *one* factor: `y = ad.stop_gradient(w) * w` at
# $w = 2$. What is $dy/dw$?

# %% tags=["solution"]
w = ad.Variable(2.0, name="w")
with ad.GradientTape() as tape:
    y = ad.stop_gradient(w) * w

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 2.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, w),
      hint="to the tape, stop_gradient(w) is a constant c: differentiate c * w")

# %% [markdown]
# **Exercise 4.** $y = 3 \cdot \text{round}(x)$. What reason does the explainer give?

# %% tags=["solution"]
x = ad.Variable(0.7, name="x")
with ad.GradientTape() as tape:
    y = ad.round(x) * 3.0

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = "not_differentiable"
### END SOLUTION

# %% tags=["check"]
check(my_prediction, widgets.explain_none_gradient(tape, y, x).reason,
      hint="round is flat almost everywhere: which kind of op has no gradient? (section 3)")

# %% [markdown]
# **Exercise 5.** The value of `s` reaches `y` through `assign_add`. Recorded with a
# history, what reason does the explainer give?

# %% tags=["solution"]
s = ad.Variable(3.0, name="s")
total = ad.Variable(0.0, name="total")
with record_history() as history:
    with ad.GradientTape() as tape:
        total.assign_add(2.0 * s)
        y = total * total

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = "stateful_assignment"
### END SOLUTION

# %% tags=["check"]
check(my_prediction, widgets.explain_none_gradient(tape, y, s, history=history).reason,
      hint="how did the value reach total? Section 3 names each way a path breaks")

# %% [markdown]
# **Exercise 6.** And the gradient itself, `tape.gradient(y, s)` from exercise 5?

# %% tags=["solution"]
my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = None
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, s),
      hint="when an assignment breaks the path, does the tape connect y to s?")

# %% [markdown]
# **Exercise 7.** The second derivative from section 1, now at $x = 2$: play the outer
# tape's backward pass of $dy/dx$ for $y = x^3$. What gradient does the result frame
# show?

# %% tags=["solution"]
x = ad.Variable(2.0, name="x")
with ad.GradientTape() as outer:
    with ad.GradientTape() as inner:
        y = x ** 3
    dy_dx = inner.gradient(y, x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 12.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, widgets.replay(outer, dy_dx, x).gradients,
      hint="differentiate x**3 twice, then put in x = 2")

# %% [markdown]
# **Next:** lesson 12 opens the engine itself: you build a tape in thirty lines, read the
# real one, and add an op of your own.
