# Lesson 3 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 03
# %% [markdown]
# # Lesson 3: Why a gradient is None
#
# Lesson 2 showed what `None` means: no path from the target back to the source. In real
# code that path breaks in a handful of ways, some obvious (a source nobody watched), some
# quiet (a NumPy call in the middle, an `assign`, a Python `if`). This lesson takes them one
# at a time, each with its fix, then hands the whole job to the explainer.
#
# **You will learn**
# 1. seven ways a gradient becomes `None`, and the fix for each;
# 2. a checklist to run through when it happens to you;
# 3. `widgets.explain_none_gradient`, which reads a tape and names the break.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 3 |
# | 1. The source was never watched | 8 |
# | 2. Integers have no gradient | 6 |
# | 3. State: `assign` is not differentiable | 3 |
# | 4. Leaving the library | 2 |
# | 5. Control flow: only the branch that ran is recorded | 4 |
# | 6. A Variable replaced by a Tensor | 3 |
# | 7. An op without a gradient | 8 |
# | summary and the words of the lesson | 1 |
# | exercises 1 to 3 | 9 |
# | in all | 47 |

# %%
import numpy as np

import autodiff as ad
import widgets
from widgets.exercises import check  # None only matches None; numbers must be close
from widgets.explain_history import record_history

# %% [markdown]
# When a gradient is unexpectedly `None`, the path from the target back to the source is
# broken somewhere. Here are the usual breaks, each with its fix.
#
# When you cannot tell which break you are looking at, ask the explainer:
# `widgets.explain_none_gradient(tape, target, source)` reads a tape (without using it
# up) and names the break, with the fix. You will see it on the first case, and on all seven
# at the end of the lesson.
#
# ## 1. The source was never watched
#
# Lesson 1's rule: constants and frozen Variables are not watched unless you say so.

# %%
data = ad.constant(3.0)
with ad.GradientTape() as tape:
    y = data * data
print("unwatched constant:", tape.gradient(y, data))

with ad.GradientTape() as tape:
    tape.watch(data)                       # the fix
    y = data * data
print("after tape.watch:  ", tape.gradient(y, data))

# %% [markdown]
# Here is what the explainer says about the unwatched version. Ask it *before*
# `gradient`: a tape that has answered has freed its records, and there is nothing left to
# read.

# %%
with ad.GradientTape() as tape:
    y = data * data
widgets.explain_none_gradient(tape, y, data)

# %% [markdown]
# A subtler case. Below, `w` is watched (a trainable Variable read inside the tape), `data`
# is not. `direct = data * w` is recorded, because one of its inputs is watched, and `data`
# is right there as the other input.
#
# **Predict.** Does `tape.gradient(direct, data)` give `2.0` (that is, $w$), or `None`?

# %% tags=["solution"]
w = ad.Variable(2.0, name="w")
data = ad.constant(3.0)
with ad.GradientTape(persistent=True) as tape:
    direct = data * w           # recorded, because w is watched; data is only an input
    scaled = data * 10.0        # not recorded: nothing here is watched

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = None
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(direct, data),
      hint="which tensors does this tape watch? Is being an input of a recorded op enough?")

# %% tags=["reveal"]
print(tape)
print("d direct / d [w, data]:", tape.gradient(direct, [w, data]))
print("d scaled / d data:     ", tape.gradient(scaled, data))
del tape

# %% [markdown]
# > **Teaching moment: feeding a recorded op is not being watched.**
#
# It is `None`, in TensorFlow 2 and in this library. A record remembers *which* of its
# inputs were watched, and the backward pass delivers gradients only to those. The rule is
# short: **only what the tape watches can receive a gradient from it.** A tensor is watched
# when you call `tape.watch` on it, when it is a trainable Variable read while the tape is
# recording, or when a recorded op produced it from watched tensors. Being an input of a
# recorded op is not on that list. So the number `2.0` that the `Mul` rule could compute
# for `data` is never handed out; `tape.watch(data)` is the fix, and then `scaled` is
# recorded too:

# %%
with ad.GradientTape(persistent=True) as tape:
    tape.watch(data)
    direct = data * w
    scaled = data * 10.0

print("d direct / d [w, data]:", tape.gradient(direct, [w, data]))
print("d scaled / d data:     ", tape.gradient(scaled, data))
del tape

# %% [markdown]
# ## 2. Integers have no gradient
#
# Derivatives are about small changes, and an integer cannot change a little. A tensor made
# from a Python `int` is `int32`; watching it earns a warning, and its gradient is `None`.

# %%
count = ad.constant(3)                     # int32
with ad.GradientTape() as tape:
    tape.watch(count)
    y = count * count

print(count.dtype, "->", tape.gradient(y, count))

# %% [markdown]
# The fix is to create floating-point values (`ad.constant(3.0)`, or `dtype=ad.float32`),
# or to convert with `ad.cast` *before* the tape needs the gradient:

# %%
count_f = ad.cast(count, ad.float32)
with ad.GradientTape() as tape:
    tape.watch(count_f)
    y = count_f * count_f
print(count_f.dtype, "->", tape.gradient(y, count_f))

# %% [markdown]
# > **Teaching moment: no silent mixing of integers and floats.** A running product that
# > starts as the Python integer `1` and is multiplied by a float looks harmless, and in
# > NumPy it is. In TensorFlow 2, `tf.multiply(1, 3.0)` raises `TypeError`: the first argument is
# > converted first, so `1` becomes an `int32` tensor, and then `3.0` has to become an
# > `int32` too, which it cannot ("Cannot convert 3.0 to EagerTensor of dtype int32").
# > Ops never cast implicitly. This library refuses as well, and says which inputs disagree:

# %%
try:
    ad.multiply(1, 3.0)
except (TypeError, ad.errors.InvalidArgumentError) as error:
    print(type(error).__name__ + ":", error)

# %% [markdown]
# Make the float a *tensor* and the same call works, in TensorFlow and here:
# `multiply(1, constant(3.0))` is a `float32` 3.0, because a bare Python number takes the
# dtype of the tensor beside it.

# %%
print(ad.multiply(1, ad.constant(3.0)))

# %% [markdown]
# (The operators follow the same rule: `2 * ad.constant(3.0)` is a `float32` 6.0. The
# trouble starts only when both sides are plain numbers of different kinds, or tensors of
# different dtypes.)
#
# ## 3. State: `assign` is not differentiable
#
# Writing into a Variable with `assign`, `assign_add` or `assign_sub` stores a value; the
# tape does not record where the value came from. Reading the variable afterwards starts a
# fresh path at the variable itself.

# %%
running_total = ad.Variable(0.0, name="running_total")
step = ad.Variable(3.0, name="step")

with ad.GradientTape() as tape:
    running_total.assign_add(2.0 * step)        # running_total is now 6
    y = running_total * running_total

print(tape)
print("dy/dstep         :", tape.gradient(y, step))

# %% [markdown]
# The tape shows `step * 2` and `running_total * running_total`, but no link between them.
# The fix is to keep the computation in tensors and assign only at the end of a step:

# %%
running_total.assign(0.0)
with ad.GradientTape() as tape:
    new_total = running_total + 2.0 * step      # a Tensor: the tape sees the whole path
    y = new_total * new_total
running_total.assign(new_total)                 # store it afterwards
print("dy/dstep (tensors):", tape.gradient(y, step), "  (2 * 6 * 2)")

# %% [markdown]
# ## 4. Leaving the library
#
# The tape sees only operations of this library. Converting to NumPy with `.numpy()` and
# computing there gives the right *value*, but the tape never sees the computation:

# %%
angle = ad.Variable(0.5, name="angle")

with ad.GradientTape() as tape:
    outside = ad.constant(np.sin(angle.numpy()) * 2.0)     # NumPy: invisible to the tape
print(f"NumPy route  : {float(outside):.6f} -> {tape.gradient(outside, angle)}")

with ad.GradientTape() as tape:
    inside = ad.sin(angle) * 2.0
print(f"library route: {float(inside):.6f} -> {float(tape.gradient(inside, angle)):.6f}"
      f"  (2 cos 0.5 = {2 * np.cos(0.5):.6f})")

# %% [markdown]
# The same holds for any Python or NumPy function: `math.sin`, `np.exp`, a list
# comprehension over `.numpy()` values. Inside a tape, stay with `ad.` operations.
#
# ## 5. Control flow: only the branch that ran is recorded
#
# Python's `if`, `for` and `while` run normally; the tape records the operations that
# actually execute. The gradient is the derivative of *the branch taken*. If that branch
# does not use the source, the gradient is `None`:

# %%
def clipped_square(x):
    """x^2 below 1, the constant 1 above it."""
    if x < 1.0:
        return x * x
    return ad.constant(1.0)

for start in [0.5, 3.0]:
    x = ad.Variable(start)
    with ad.GradientTape() as tape:
        y = clipped_square(x)
    print(f"x = {start}: y = {y.numpy()}, dy/dx = {tape.gradient(y, x)}")

# %% [markdown]
# At $x = 3$ the returned constant has no path to `x`. If "zero slope" is what you mean,
# say so with `unconnected_gradients='zero'`, or compute the flat branch *from* `x`
# (for example `ad.minimum(x * x, 1.0)`, whose gradient is a real 0 there).
# (Inside a traced function, `ad.function`, the `if` is decided only once, when the
# function is traced: lesson 6 shows it.)
#
# Loops are recorded unrolled: each pass adds its records to the tape. The loop count is an
# ordinary Python integer, so it has no gradient, but the float it multiplies does:

# %%
def power_by_loop(base, times):
    result = ad.ones_like(base)        # ones with base's shape and dtype (float32)
    for _ in range(times):
        result = result * base
    return result

base = ad.Variable(2.0, name="base")
with ad.GradientTape() as tape:
    y = power_by_loop(base, 4)
print(tape)
print("d(base^4)/dbase:", tape.gradient(y, base), " (4 * 2^3)")

# %% [markdown]
# ## 6. A Variable replaced by a Tensor
#
# A classic bug in a hand-written training loop: updating a weight with `w = w - lr * grad`
# makes `w` a **Tensor**. On the next step the tape does not watch it, and the gradient
# is `None`.

# %%
weight = ad.Variable(1.0, name="weight")
for step_number in range(3):
    with ad.GradientTape() as tape:
        loss = (weight - 3.0) ** 2
    grad = tape.gradient(loss, weight)
    print(f"step {step_number}: {type(weight).__name__:<8} grad = {grad}")
    if grad is None:
        break
    weight = weight - 0.1 * grad           # the bug: a new Tensor, no longer a Variable

# %% [markdown]
# The fix is to update the Variable in place with `assign_sub`:

# %%
weight = ad.Variable(1.0, name="weight")
for step_number in range(3):
    with ad.GradientTape() as tape:
        loss = (weight - 3.0) ** 2
    grad = tape.gradient(loss, weight)
    weight.assign_sub(0.1 * grad)          # the fix: still the same Variable
    print(f"step {step_number}: weight = {weight.numpy():.3f}, grad was {grad.numpy():.3f}")

# %% [markdown]
# ## 7. An op without a gradient
#
# Some ops have no useful derivative: rounding is flat almost everywhere and jumps
# elsewhere, and shuffling is not a smooth function of its input. TensorFlow marks such ops
# non-differentiable: the gradient through them is `None`, not zero.

# %%
level = ad.Variable(1.3, name="level")
with ad.GradientTape() as tape:
    stepped = ad.round(level * 2.0)
print("round:", stepped.numpy(), "->", tape.gradient(stepped, level))

# %% [markdown]
# If you want rounding forward but a gradient backward (the *straight-through estimator*),
# write a custom gradient: lesson 5.
#
# ## Checklist
#
# | symptom | cause | fix |
# |---|---|---|
# | constant or frozen Variable | never watched | `tape.watch(t)` |
# | `int32` source, warning printed | integers have no gradient | float dtype, `ad.cast` |
# | value stored with `assign` | state breaks the path | compute with tensors, assign after |
# | `.numpy()`, NumPy, `math` | left the library | use `ad.` ops |
# | depends on the input | the branch taken ignores the source | `unconnected_gradients`, or a formula that keeps the source |
# | fine on step 1, `None` on step 2 | Variable replaced by a Tensor | `assign_sub` |
# | `round`, `floor`, `shuffle` | op is non-differentiable | custom gradient (lesson 5) |
# | `LookupError`, not `None` | an op nobody gave a gradient rule | register one, or declare it non-differentiable (lesson 7) |
#
# The last row is not a `None` at all. Marking an op non-differentiable is a decision; an
# op that simply has no rule (a new op written on arrays, for instance) makes the backward
# pass **stop with an error** as soon as the path crosses it, because a silent `None` there
# could hide a real bug:

# %%
@ad.primitive("CubeOnArrays")            # a new op, computed on arrays; no gradient yet
def cube_on_arrays(xp, x):
    return x * x * x

with ad.GradientTape() as tape:
    cubed = cube_on_arrays(level)
try:
    tape.gradient(cubed, level)
except LookupError as error:
    print("LookupError:", error)

# %% [markdown]
# ## The explainer on all seven
#
# Some of these breaks leave no trace on the tape: a tape records only ops that touch what
# it watches, so NumPy, `assign`, an `if` and a replaced Variable all look like the same
# hole. `record_history()` records *everything* while its block runs (every op, every
# Variable read, every `.numpy()`, `assign` and `bool`), and with it the explainer names
# each case exactly. The cell replays the seven cases in one history:

# %%
cases = {}
with record_history() as history:
    data = ad.constant(3.0)
    with ad.GradientTape() as tape:
        y = data * data
    cases["1 never watched"] = (tape, y, data)

    count = ad.constant(3)
    with ad.GradientTape() as tape:
        y = count * count
    cases["2 an integer"] = (tape, y, count)

    running_total = ad.Variable(0.0, name="running_total")
    with ad.GradientTape() as tape:
        running_total.assign_add(2.0 * step)
        y = running_total * running_total
    cases["3 assign"] = (tape, y, step)

    with ad.GradientTape() as tape:
        y = ad.constant(np.sin(angle.numpy()) * 2.0)
    cases["4 NumPy"] = (tape, y, angle)

    x = ad.Variable(3.0)
    with ad.GradientTape() as tape:
        y = clipped_square(x)
    cases["5 a branch"] = (tape, y, x)

    weight = ad.Variable(1.0, name="weight")
    weight = weight - 0.1                     # the slip of section 6, outside the tape
    with ad.GradientTape() as tape:
        y = (weight - 3.0) ** 2
    cases["6 a replaced Variable"] = (tape, y, weight)

    with ad.GradientTape() as tape:
        y = ad.round(level * 2.0)
    cases["7 round"] = (tape, y, level)

for case, (tape, target, source) in cases.items():
    why = widgets.explain_none_gradient(tape, target, source, history=history)
    print(f"{case:<22} {why.reason:<20} {why.title}")
del cases

# %% [markdown]
# Each explanation also has a paragraph (`.message`) and the path with the break marked;
# lesson 11 shows them, and how to read a backward pass step by step.

# %% [markdown]
# ## Words of this lesson
#
# | word | what it means here |
# |---|---|
# | **path** | the chain of recorded ops from the target back to a source; a gradient flows only along one |
# | **non-differentiable op** | an op declared to have no gradient (`Round`, `Floor`): the gradient through it is `None` |
# | **history** | what `record_history()` logs while its block runs: every op, Variable read, `.numpy()`, `assign` and `bool` |
#
# ## Exercises: predict the gradient
#
# For each exercise, decide on paper: a number, a `0.0`, or `None`? Type it into
# `my_prediction`, then run the cell.

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
# **Exercise 1.** Control flow: the function below at `x = 2`.

# %% tags=["solution"]
def piecewise(x):
    if x < 1.0:
        return x * x
    return 3.0 * x

x = ad.Variable(2.0)
with ad.GradientTape() as tape:
    y = piecewise(x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 3.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, x),
      hint="the tape records only the branch that ran: which branch runs at x = 2?")

# %% [markdown]
# **Exercise 2.** `n = ad.constant(4)` is watched, and the tape records `y = n * 2`. What
# is `tape.gradient(y, n)`? (The tape runs in the check cell, after your prediction; read
# what it prints then.)

# %% tags=["solution"]
n = ad.constant(4)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = None
### END SOLUTION

# %% tags=["check"]
with ad.GradientTape() as tape:
    tape.watch(n)
    y = n * 2
check(my_prediction, tape.gradient(y, n),
      hint="what dtype does ad.constant(4) have, and can such a tensor have a gradient?")

# %% [markdown]
# **Exercise 3.** `assign` in the middle: `holder` receives `3 * source`, then `y = holder * 2`.
# What are `dy/dsource` and `dy/dholder`? (A list of two entries, each a number or `None`.)

# %% tags=["solution"]
source = ad.Variable(1.0)
holder = ad.Variable(0.0)
with ad.GradientTape() as tape:
    holder.assign(3.0 * source)
    y = holder * 2.0

my_prediction = ...  # [dy/dsource, dy/dholder]
### BEGIN SOLUTION
my_prediction = [None, 2.0]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, [source, holder]),
      hint="the tape does not record assign: is y still connected to source? And what is "
           "holder, as far as the tape can see, once the assignment is done?")

# %% [markdown]
# **Next:** lesson 4 nests tapes to take derivatives of derivatives.
