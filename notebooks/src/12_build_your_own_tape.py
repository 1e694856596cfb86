# Lesson 12 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 12
#
# The cells that print the engine's source are tagged nbval-ignore-output: they quote the
# code live, so their text changes whenever the engine changes. Each such cell still fails
# (and so fails the tests) if the lines it quotes disappear.
# %% [markdown]
# # Lesson 12: Build your own tape
#
# Every lesson so far used the tape as a black box. This one opens it. First you build a
# working tape in about thirty lines, then you read how `autodiff` does the same job (the
# real code, quoted live from the files), and finally you add a new op to the library and
# prove its derivative correct.
#
# **You will learn**
# 1. the three moves of reverse mode: *record*, *seed*, *walk back and add*;
# 2. where each move lives in `autodiff/tape.py`, `autodiff/backward.py` and
#    `autodiff/registry.py`;
# 3. how one op (`Sin`) declares its derivative, and why that gives second derivatives for
#    free;
# 4. how to add an op of your own and check it with `ad.testing.check_grads`.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 3 |
# | Part A: a tape in thirty lines | 7 |
# | Part B: reading the real tape | 14 |
# | Part C: one op's rule | 8 |
# | Part D: your own op | 10 |
# | summary and the words of the lesson | 3 |
# | exercises 1 and 2 | 6 |
# | in all | 51 |
#
# Exercises 3 to 6 are homework.

# %%
import inspect
import itertools
import math
import os

import numpy as np

import autodiff as ad
import widgets

ENGINE_ROOT = os.path.dirname(os.path.dirname(ad.__file__))


def show(obj, start=None, stop=None):
    """Prints the source of obj, from the first line containing `start` through the first
    line after it containing `stop` (the whole source when they are None)."""
    lines, first = inspect.getsourcelines(obj)
    first = first or 1                      # a whole module starts at line 1
    begin = 0 if start is None else next(i for i, line in enumerate(lines) if start in line)
    end = len(lines) - 1 if stop is None else next(
        i for i, line in enumerate(lines) if i >= begin and stop in line)
    path = os.path.relpath(inspect.getsourcefile(obj), ENGINE_ROOT).replace(os.sep, "/")
    print(f"# {path}, lines {first + begin}-{first + end}")
    print("".join(lines[begin:end + 1]).rstrip())

# %% [markdown]
# ## Part A: a tape in thirty lines
#
# Reverse mode needs three things:
#
# 1. **Record.** While the forward computation runs, append one entry per operation to a
#    list: which values went in, which value came out, and a rule that maps "the gradient
#    arriving at the output" to "the gradient sent to each input" (a *vector-Jacobian
#    product*, or **vjp**).
# 2. **Seed.** Start the backward pass with $\partial y / \partial y = 1$ at the target.
# 3. **Walk back and add.** Visit the entries in reverse order; for each, look up the
#    gradient that has arrived at its output, apply the rule, and *add* the results into
#    the inputs' running totals.
#
# The list is already in a valid order: an operation can only use values computed before
# it, so walking it backwards visits every consumer before its producer. (Lesson 2's
# hand-built `Value` had to search its graph for such an order; a tape gets it for free.)

# %%
_ids = itertools.count()                 # every value gets a fresh, never reused id


class Value:
    def __init__(self, number):
        self.number = number
        self.id = next(_ids)


class MiniTape:
    active = None                        # the tape that is recording, if any

    def __init__(self):
        self.records = []

    def __enter__(self):
        MiniTape.active = self
        return self

    def __exit__(self, *exc):
        MiniTape.active = None

    def gradient(self, target, source):
        grads = {target.id: 1.0}                                 # seed
        for inputs, output, vjp in reversed(self.records):       # walk back
            g = grads.get(output.id)
            if g is None:
                continue                                         # nothing arrived here
            for x, contribution in zip(inputs, vjp(g)):
                grads[x.id] = grads.get(x.id, 0.0) + contribution   # add, never assign
        return grads.get(source.id)


def op(forward, vjp_of):
    """Makes an op from a forward function and a vjp maker."""
    def apply(*inputs):
        out = Value(forward(*[x.number for x in inputs]))
        if MiniTape.active is not None:                          # record
            MiniTape.active.records.append((inputs, out, vjp_of(*[x.number for x in inputs])))
        return out
    return apply


mul = op(lambda a, b: a * b, lambda a, b: (lambda g: (g * b, g * a)))
add = op(lambda a, b: a + b, lambda a, b: (lambda g: (g, g)))
sin = op(math.sin, lambda a: (lambda g: (g * math.cos(a),)))

# %% [markdown]
# Try it on $z = \sin(x \cdot x) + x$ at $x = 1.5$, where by hand
# $dz/dx = 2x \cos(x^2) + 1$:

# %%
x = Value(1.5)
with MiniTape() as mini:
    z = add(sin(mul(x, x)), x)

print("records:", len(mini.records))
print(f"mini tape: {mini.gradient(z, x):.12f}")
print(f"by hand:   {2 * 1.5 * math.cos(1.5 ** 2) + 1:.12f}")

x_ad = ad.constant(1.5, dtype=ad.float64)
with ad.GradientTape() as tape:
    tape.watch(x_ad)
    z_ad = ad.sin(x_ad * x_ad) + x_ad
print(f"autodiff:  {float(tape.gradient(z_ad, x_ad)):.12f}")

# %% [markdown]
# Two details are worth a second look, because both are classic bugs:
#
# * **Add, never assign.** `mul(x, x)` sends *two* contributions to `x`, and `add(..., x)`
#   a third. Writing `grads[x.id] = contribution` would keep only the last one.
# * **Ids that are never reused.** The mini tape keys gradients by `Value.id`, a counter.
#   Python's built-in `id()` would be tempting, but it can hand a freed object's number to
#   a new object, silently mixing up two tensors' gradients.
#
# What the mini tape lacks: watching (it records everything, so it treats every value as
# watched and will hand a gradient to any value you ask about), tensors instead of floats,
# pruning of records that cannot matter, and rules written with its own ops (its rules call
# `math.cos`, so the tape cannot differentiate them again). The real engine has all four,
# and watching changes the answers: a real tape gives a gradient only to what it watches.

# %% [markdown]
# ## Part B: reading the real tape
#
# ### B1. Recording
#
# Every op in `autodiff` is a `Primitive` object (section C). Calling one computes the
# result and then offers the op to every tape that is recording, `_tape.active`:

# %% tags=["nbval-ignore-output"]
show(ad.Primitive.__call__, start="if self.n_outputs == 1:", stop="return outputs")

# %% [markdown]
# Each tape decides for itself whether to keep the op, in `GradientTape._record`:

# %% tags=["nbval-ignore-output"]
show(ad.GradientTape._record)

# %% [markdown]
# Read it with these questions, and check each answer with the experiment below:
#
# 1. *When is an op skipped?* When none of its inputs is in `self._watched`, and when its
#    results are integers or booleans (no gradient can flow through them).
# 2. *What is stored?* A `TapeRecord`: position, the primitive, inputs, outputs, params, and
#    the input and output **ids**. `saves` decides whether the inputs' and outputs' *values*
#    are kept or only their shapes (`_spec`), so a tape holds no more memory than the
#    derivative rules need.
# 3. *How does watching spread?* The outputs' ids are added to `self._watched`, so the next
#    op that reads them is recorded too.

# %%
a = ad.constant(2.0)
b = ad.constant(3.0)
with ad.GradientTape() as tape:
    tape.watch(a)
    c = a * b               # reads watched a: recorded, and c becomes watched
    d = b * b               # touches nothing watched: skipped
    e = c + d               # reads watched c: recorded
    n = ad.cast(c > 5.0, ad.float32)   # Greater gives bool: skipped; the Cast reads it: skipped

names = tape.names()
for record in tape.records:
    ins = ", ".join(names[i] for i in record.input_ids)
    outs = ", ".join(names[i] for i in record.output_ids)
    print(f"{outs} = {record.op_type}({ins})    saves={record.primitive.saves}")
print("d e / d [a, b]:", tape.gradient(e, [a, b]))   # b fed the recorded Mul, unwatched

# %% [markdown]
# The names are handed out in order of appearance: `v0` is `a`, `v1` is `b`, `v2` is `c`,
# `v3` is `d` and `v4` is `e`. `d` shows up only as an input of `AddV2`: its own `Mul` was
# never recorded, so as far as the tape knows, `d` is a constant. The comparison and the
# cast left no trace at all. And `b`, although it is an input of the recorded `Mul`, gets
# `None`: it was never watched (B3 shows where the tape checks).
#
# ### B2. Seeding
#
# `gradient` turns the targets into starting cotangents (`make_seeds` in `backward.py`): ones shaped like each target
# (which is why a vector target is summed), or the `output_gradients` you passed:

# %% tags=["nbval-ignore-output"]
show(ad.backward.make_seeds, start="seeds = {}", stop="return seeds")

# %% [markdown]
# ### B3. Walking back
#
# The reverse sweep lives in `autodiff/backward.py`. It begins with a *forward* sweep over
# the records, from the sources: only records that read something depending on a source can
# carry gradient to a source. This `live` set is the pruning the mini tape lacked.
#
# Which sources does the sweep start from? Not simply the ones you pass: `gradient` first
# keeps only those the tape **watches**, and an unwatched source is never in `live`, so it
# gets `None` even when it feeds a recorded op directly. That is lesson 3's teaching moment
# (`y = x * c` with only `x` watched gives `[c, None]`), and TensorFlow 2 draws the same
# line: being an input of a recorded op does not make a tensor watched.

# %% tags=["nbval-ignore-output"]
show(ad.GradientTape._watched_source_ids)

# %% tags=["nbval-ignore-output"]
show(ad.backward.backward, start="live = set(source_ids)", stop="live.update")

# %% [markdown]
# Then the walk back, which is the mini tape's loop with more care: it pops each record's
# cotangent `g`, calls one vjp rule per input that needs one (`x_id in live`), and adds the
# contributions into `grads`:

# %% tags=["nbval-ignore-output"]
show(ad.backward.backward, start="grads = dict(seeds)", stop="grads[x_id] = contribution")

# %% [markdown]
# `tape.backward_trace(target, sources)` runs the same sweep and keeps a `BackwardStep` for
# each record visited: the cotangent that arrived, the contribution sent to each input, and
# the running totals. For $z = \sin(x^2)$ at $x = 1.5$:

# %%
x = ad.constant(1.5)
with ad.GradientTape() as tape:
    tape.watch(x)
    z = ad.sin(x * x)

names = tape.names()
trace = tape.backward_trace(z, x)
for step in trace.steps:
    arrived = ", ".join(f"{float(g):.4f}" for g in step.cotangents)
    sent = ", ".join(f"{names[i]} += {float(c):.4f}" for i, c in step.contributions
                     if c is not None)
    print(f"{step.op_type:>4}: cotangent {arrived} arrives; sends {sent}")
print(f"dz/dx = {float(trace.gradients):.4f}   by hand 2x cos(x^2) = {2 * 1.5 * np.cos(2.25):.4f}")

# %% [markdown]
# `Sin` receives the seed 1 and sends $\cos(x^2) \approx -0.628$ to `v1`; `Mul` receives
# that and sends $-0.628 \cdot x$ to `v0` **twice**, once per edge of `x * x`. The two
# contributions add up to the answer.
#
# The tape player draws these same steps (it is built on `backward_trace`): play it to see
# each cotangent travel along the edges of the graph, and the two contributions meet at
# `v0`, which is `x`. (`backward_trace` used up the first tape, so the cell records the
# function again.)

# %%
with ad.GradientTape() as tape:
    tape.watch(x)
    z = ad.sin(x * x)
widgets.TapePlayer(tape, target=z, sources=x, names={"z": z})

# %% [markdown]
# ## Part C: one op's rule
#
# Here is the whole declaration of `Sin`, in `autodiff/ops/elementwise.py`, and the public
# function that calls it:

# %% tags=["nbval-ignore-output"]
import autodiff.ops.elementwise as elementwise

show(elementwise, start='SIN = _unary("Sin"', stop='SIN = _unary("Sin"')
show(elementwise.sin)

# %% [markdown]
# One line holds everything the engine knows about the op:
#
# * its TensorFlow op type, `"Sin"`, used by `print(tape)`, error messages and saved models;
# * the **forward**, `lambda xp, x: xp.sin(x)`: it works on raw arrays, and `xp` is the
#   array module (NumPy, or CuPy on a GPU), so one forward serves both;
# * the **vjp**, `lambda g, ans, x: g * cos(x)`: the cotangent `g` times the derivative.
#   `ans` is the op's output (rules such as `Exp`'s use it; this one does not);
# * `doc`, the derivative in one line. The `_unary` helper fills in the rest with defaults,
#   including `saves="inputs"` (the rule needs `x`) and the input range used by the tests.
#
# The `Primitive` object is registered under its op type:

# %%
sin_op = ad.registry.get_primitive("Sin")
print(sin_op, "| saves:", sin_op.saves, "| doc:", sin_op.doc, "| test range:", sin_op.domain)

# %% [markdown]
# The vjp is written as `g * cos(x)`, **library** ops on Tensors, not `np.cos` on arrays.
# That is the whole trick behind higher derivatives: if another tape is recording while
# `gradient` runs, it records the `Cos` and `Mul` of the backward pass like any other ops,
# and can differentiate them again. Watch the outer tape:

# %%
x = ad.constant(0.5)
with ad.GradientTape() as outer:
    outer.watch(x)
    with ad.GradientTape() as inner:
        inner.watch(x)
        y = ad.sin(x)
    dy_dx = inner.gradient(y, x)      # runs Sin's vjp: g * cos(x), recorded by `outer`

names = outer.names()
print("the outer tape recorded:",
      [f"{r.op_type}({', '.join(names[i] for i in r.input_ids)})" for r in outer.records])
print(f"dy/dx   = {float(dy_dx):.6f}   cos(0.5) = {np.cos(0.5):.6f}")
print(f"d2y/dx2 = {float(outer.gradient(dy_dx, x)):.6f}  -sin(0.5) = {-np.sin(0.5):.6f}")

# %% [markdown]
# > **Teaching moment: both tapes must watch `x`.** An older TensorFlow tutorial computes a
# > second derivative with an outer tape that never calls `watch(x)` on its constant `x`, and
# > prints a number. In TensorFlow 2 the answer is `None`, and the mechanism above says why:
# > when the inner tape's backward pass runs `cos(x)`, the outer tape records it only if it
# > watches `x`. Watching belongs to each tape separately.

# %%
x = ad.constant(0.5)
with ad.GradientTape() as outer:                  # no outer.watch(x)
    with ad.GradientTape() as inner:
        inner.watch(x)
        y = ad.sin(x)
    dy_dx = inner.gradient(y, x)

print("the outer tape recorded:", [r.op_type for r in outer.records])
print("d2y/dx2 =", outer.gradient(dy_dx, x))

# %% [markdown]
# Binary ops add one more idea, **unbroadcasting**. `x * y` with `x` of shape `(2, 3)` and
# `y` of shape `(3,)` stretches `y` across the rows, so the gradient for `y` must be summed
# back over them to get shape `(3,)`. That is the `unbroadcast(...)` around each rule of
# `Mul`:

# %% tags=["nbval-ignore-output"]
show(elementwise, start='MUL = _binary("Mul"', stop="doc=")

# %% [markdown]
# ## Part D: your own op
#
# ### D1. `Cube`, the user's way
#
# `ad.primitive("Cube")` turns a function on arrays into an op; `ad.RegisterGradient("Cube")`
# gives it a gradient function `grad_fn(op, upstream)`, where `op.inputs` and `op.outputs`
# are the recorded Tensors. $\frac{d}{dx} x^3 = 3x^2$:
#
# (Op types live in one global registry: running these cells a second time raises a
# `KeyError`. Restart the kernel, or use a new name.)

# %%
@ad.primitive("Cube")
def cube(xp, x):
    return x * x * x


@ad.RegisterGradient("Cube")
def _cube_grad(op, upstream):
    x = op.inputs[0]
    return upstream * 3.0 * x * x


x = ad.constant([1.0, -2.0, 0.5])
with ad.GradientTape() as tape:
    tape.watch(x)
    y = cube(x)
print(tape)
print("gradient:", tape.gradient(y, x).numpy(), "  3x^2 = [3, 12, 0.75]")

# %% [markdown]
# ### D2. Prove it: `check_grads`
#
# A derivative rule is a claim. `ad.testing.check_grads(f, args, order)` tests it against
# central finite differences along random directions, for first and (with `order=2`) second
# derivatives. Order 2 passes here only because `_cube_grad` uses library ops, so the outer
# tape inside `check_grads` can differentiate it.

# %%
ad.testing.check_grads(cube, [np.array([1.0, -2.0, 0.5])], order=2)
print("Cube: first and second derivatives agree with finite differences")

# %% [markdown]
# And it does catch mistakes. Here is an op whose gradient rule says $2x^2$ instead of
# $3x^2$:

# %%
@ad.primitive("WrongCube")
def wrong_cube(xp, x):
    return x * x * x


@ad.RegisterGradient("WrongCube")
def _wrong_cube_grad(op, upstream):
    x = op.inputs[0]
    return upstream * 2.0 * x * x


try:
    ad.testing.check_grads(wrong_cube, [np.array([1.0, -2.0, 0.5])], order=1)
except AssertionError as error:
    print("\n".join(str(error).splitlines()[:4]))

# %% [markdown]
# ### D3. `Cube`, the library's way
#
# Inside the library, the same op is one `ad.Primitive` declaration, exactly like `Sin`'s:
# a forward on arrays, a tuple with one vjp rule per input, and what the tape must save.
# `register=False` keeps this teaching copy out of the global registry.
#
# The rule must also be **batch-ready**: `tape.jacobian` pushes a whole stack of cotangents
# through one backward pass, so `g` may have extra leading axes. An elementwise product
# `g * 3x^2` broadcasts over them with no extra work.

# %%
CUBE = ad.Primitive(
    "CubeLesson", lambda xp, x: x * x * x,
    vjp=(lambda g, ans, x: g * 3.0 * x * x,),
    saves="inputs", domain=(-2.0, 2.0), doc="d/dx x^3 = 3 x^2", register=False)

x = ad.constant([1.0, -2.0, 0.5])
with ad.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = CUBE(x)
print("gradient:", tape.gradient(y, x).numpy())
print("jacobian:\n", tape.jacobian(y, x).numpy())
del tape

ad.testing.check_grads(CUBE, [np.array([1.0, -2.0, 0.5])], order=3)
print("CubeLesson: derivatives up to order 3 agree with finite differences")

# %% [markdown]
# The Jacobian of an elementwise op is diagonal, with the derivative $3x^2$ on the diagonal.
#
# **Your turn.** Add an op of your own in the cell below: for example `Softsign`,
# $x / (1 + |x|)$, whose derivative is $1 / (1 + |x|)^2$. Write the forward with `xp`, the vjp
# with `ad.` ops, then run the check below it, which runs `ad.testing.check_grads` with
# `order=2`. (Pick a name that is not registered yet, or use `register=False`.)

# %% tags=["solution"]
SOFTSIGN = ...  # your op: ad.Primitive("SoftsignLesson", forward, vjp=(...,), register=False)
### BEGIN SOLUTION
SOFTSIGN = ad.Primitive(
    "SoftsignLesson", lambda xp, x: x / (1 + xp.abs(x)),
    vjp=(lambda g, ans, x: g / ad.square(1.0 + ad.abs(x)),),
    saves="inputs", doc="d/dx x / (1 + |x|) = 1 / (1 + |x|)^2", register=False)
### END SOLUTION

# %% tags=["check"]
from widgets.exercises import check_gradients  # Correct!, or Not yet with what went wrong

check_gradients(SOFTSIGN, [np.array([-1.5, -0.2, 0.7, 2.0])], order=2)

# %% [markdown]
# ## Words of this lesson
#
# | word | what it means here |
# |---|---|
# | **Wengert list** | a tape's records in the order the ops ran: already a topological order |
# | **primitive** | an op declared once with its forward on arrays and one VJP rule per input |
# | **pruning** | skipping the records that cannot carry a gradient from the target to a source |
# | **unbroadcasting** | summing a gradient over the axes an input was stretched along, back to its shape |
# | **batch-ready rule** | a VJP that accepts extra leading axes on its cotangent (a stack of seeds) |
#
# ## Summary
#
# * Reverse mode is *record, seed, walk back and add*. A tape is a list of records in the
#   order the ops ran; that order is already topological.
# * `Primitive.__call__` offers each op to every recording tape; `GradientTape._record` keeps
#   it when it touches a watched tensor, and marks its outputs watched.
# * `backward` prunes to the records between sources and targets, then walks them in
#   reverse, adding each vjp contribution into a dict keyed by tensor id.
# * An op is one `Primitive`: forward on arrays, one vjp rule per input written with
#   library ops (hence higher derivatives), what to save, and a one-line `doc`.
# * New ops: `ad.primitive` + `ad.RegisterGradient`, or `ad.Primitive` directly; always
#   prove them with `ad.testing.check_grads`.
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

# %%
from widgets.exercises import check  # None only matches None; numbers must be close

# %% [markdown]
# **Exercise 1.** Your mini tape from part A, on $z = x \cdot x \cdot x$ at $x = 3$.

# %% tags=["solution"]
x = Value(3.0)
with MiniTape() as mini:
    z = mul(mul(x, x), x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 27.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, mini.gradient(z, x),
      hint="each mul record adds its contributions: d(x**3)/dx at x = 3")

# %% [markdown]
# **Exercise 2.** The mini tape on $z = x + x + x + x$ at $x = 10$. (How many
# contributions reach `x`?)

# %% tags=["solution"]
x = Value(10.0)
with MiniTape() as mini:
    z = add(add(x, x), add(x, x))

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 4.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, mini.gradient(z, x),
      hint="every use of x sends a contribution of its own, and they are added")

# %% [markdown]
# **Exercise 3.** `cube` (part D) at $x = 2$: the first derivative.

# %% tags=["solution"]
x = ad.constant(2.0)
with ad.GradientTape() as tape:
    tape.watch(x)
    y = cube(x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 12.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, x),
      hint="_cube_grad returns upstream * 3 x**2: put in x = 2")

# %% [markdown]
# **Exercise 4.** The *second* derivative of `cube` at $x = 2$, with nested tapes. (It
# exists only because `_cube_grad` uses library ops.)

# %% tags=["solution"]
x = ad.constant(2.0)
with ad.GradientTape() as outer:
    outer.watch(x)
    with ad.GradientTape() as inner:
        inner.watch(x)
        y = cube(x)
    dy_dx = inner.gradient(y, x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 12.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, outer.gradient(dy_dx, x),
      hint="differentiate 3 x**2 once more, at x = 2")

# %% [markdown]
# **Exercise 5.** In the backward trace of $z = \sin(x \cdot x)$ at $x = 0$, what
# cotangent arrives at the `Mul` record?

# %% tags=["solution"]
x = ad.constant(0.0)
with ad.GradientTape() as tape:
    tape.watch(x)
    z = ad.sin(x * x)
trace = tape.backward_trace(z, x)
mul_step = next(step for step in trace.steps if step.op_type == "Mul")

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 1.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, mul_step.cotangents[0],
      hint="the cotangent Sin sends is its derivative, cos, taken at its input x * x")

# %% [markdown]
# **Exercise 6.** And the final gradient $dz/dx$ at $x = 0$?

# %% tags=["solution"]
my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 0.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, trace.gradients,
      hint="the chain rule: the cotangent at Mul times d(x * x)/dx, at x = 0")

# %% [markdown]
# **Where next.** The rest of the engine builds on exactly these pieces: `jacobian.py`
# pushes a stack of cotangents through `backward`; `forward.py` pushes tangents the other
# way; `custom_gradient.py` records a whole Python function as one record named after it.
# Open them: each file starts with a docstring that says what it owns.
#
# Past the engine stand four packages that build on it, and that it never imports:
# `tracing/` (`ad.function`: run Python once, keep the graph), `compiler/`
# (`jit_compile=True`: that graph written out as a program), `saved_model/` and `models/`
# (`ad.Module`, the layers, the optimizers). The docstring of `autodiff/__init__.py` maps
# them all, in the order to read them.
