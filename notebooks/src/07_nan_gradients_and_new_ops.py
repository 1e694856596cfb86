# Lesson 7 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 07
# %% [markdown]
# # Lesson 7: NaN gradients and new ops
#
# A gradient can be perfectly defined on paper and still come out of the tape as `nan`.
# This lesson finds where such `nan`s come from, repairs them, and shows how to track one
# down in a long backward pass. Then it goes one level lower: a brand-new op, computed on
# arrays, with a gradient we register ourselves.
#
# **You will learn**
# 1. how the harmless-looking `log(1 + exp(x))` breaks down for large $x$ in `float32`,
#    and two repairs (a picture shows where);
# 2. why `where` does not protect a gradient from a `nan`, and the double-`where` fix;
# 3. what the tape returns at kinks (`abs`, `relu`, `maximum` at 0) and at a zero norm;
# 4. how to find the first step of a backward pass that made a `nan`;
# 5. `ad.primitive` + `ad.RegisterGradient`, and the `LookupError` of an op with no gradient.
#
# Cells marked **Predict** have a blank for your guess and a check below it.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 3 |
# | 1. A `nan` from a harmless formula: `log(1 + exp(x))` | 7 |
# | 2. Two repairs | 4 |
# | 3. `where` does not stop a `nan` | 5 |
# | 4. Kinks: what the tape says where no derivative exists | 4 |
# | 5. Finding the step that made a `nan` | 3 |
# | 6. A new op with a registered gradient | 6 |
# | summary and the words of the lesson | 3 |
# | exercises 1 to 3 | 9 |
# | in all | 44 |

# %%
%matplotlib inline
%config InlineBackend.figure_formats = ['png']
import matplotlib.pyplot as plt
import numpy as np

import autodiff as ad
from widgets.exercises import check  # None only matches None; numbers must be close

# %% [markdown]
# ## 1. A `nan` from a harmless formula: `log(1 + exp(x))`
#
# The function $f(x) = \log(1 + e^x)$ (softplus) has the well-behaved derivative
# $f'(x) = e^x / (1 + e^x) = \sigma(x)$, which is never above 1. The tape computes it by
# the chain rule, op by op: `Exp`, then `AddV2`, then `Log`, whose rule divides by
# $1 + e^x$.
#
# **Predict.** In `float32`, what gradient does the tape give at $x = 100$? (Hint: what is
# $e^{100}$ in `float32`, whose largest number is about $3.4 \cdot 10^{38}$?) Type a number,
# or `float("nan")`, or `float("inf")`.
#
# (NumPy would print overflow warnings; `np.errstate` silences them. Values are rounded to
# 4 decimals when printed: the last digits of `exp` and `log` can differ between
# processors.)

# %% tags=["solution"]
def softplus_naive(x):
    return ad.math.log(1.0 + ad.exp(x))

big = ad.constant([0.0, 10.0, 100.0])
with np.errstate(over="ignore", invalid="ignore"):
    with ad.GradientTape() as tape:
        tape.watch(big)
        y = softplus_naive(big)
    naive_gradient = tape.gradient(y, big)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = float("nan")
### END SOLUTION

# %% tags=["check"]
check(my_prediction, naive_gradient[2],
      hint="follow the backward pass one record at a time: what is exp(100) in float32, "
           "and what does each record's rule multiply by it?")

# %% tags=["reveal"]
print("value:   ", y.numpy().round(4))
print("gradient:", naive_gradient.numpy().round(4))

# %% [markdown]
# $e^{100}$ overflows to `inf`, and the chain rule multiplies $1 / (1 + \infty) = 0$ by
# $e^x = \infty$: $0 \cdot \infty$ is `nan`. Where exactly does it start? $e^x$ overflows
# once $x > \ln(3.4 \cdot 10^{38}) \approx 88.72$. The picture shows the tape's gradient
# on both sides of that line, beside the stable `ad.nn.softplus`:

# %%
xs = ad.constant(np.linspace(80.0, 95.0, 301).astype("float32"))
with np.errstate(over="ignore", invalid="ignore"):
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        naive = softplus_naive(xs)
        stable = ad.nn.softplus(xs)
    grad_naive = tape.gradient(naive, xs).numpy()
    grad_stable = tape.gradient(stable, xs).numpy()
del tape

wall = float(np.log(np.finfo(np.float32).max))
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(xs.numpy(), grad_stable, lw=4, alpha=0.4, label="ad.nn.softplus (stable)")
ax.plot(xs.numpy(), grad_naive, lw=1.5, label="log(1 + exp(x)), naive")
ax.axvline(wall, color="crimson", ls="--", lw=1)
ax.text(wall + 0.3, 0.5, f"exp overflows at {wall:.2f}:\nthe naive gradient is nan\n"
        "(nothing is drawn)", color="crimson", va="center")
ax.set(xlabel="x", ylabel="gradient", ylim=(0, 1.2), title="The NaN wall of a naive softplus")
ax.legend(loc="lower left")
plt.show()

first_nan = xs.numpy()[np.isnan(grad_naive)][0]
print(f"first x of the grid with a nan gradient: {first_nan:.2f}")

# %% [markdown]
# ## 2. Two repairs
#
# A custom gradient (lesson 5) computes the derivative from a formula that cannot overflow
# into a `nan`: $1 - 1/(1 + e^x)$ is 1 when $e^x$ is `inf`. It also *reuses* `e`, computed
# once in the forward pass: the closure keeps it for `grad_fn`.

# %%
@ad.custom_gradient
def softplus_custom(x):
    e = ad.exp(x)
    def grad_fn(dy):
        return dy * (1.0 - 1.0 / (1.0 + e))
    return ad.math.log(1.0 + e), grad_fn

with np.errstate(over="ignore"):
    with ad.GradientTape() as tape:
        tape.watch(big)
        y = softplus_custom(big)
    print("value:   ", y.numpy().round(4))
    print("gradient:", tape.gradient(y, big).numpy().round(4))

# %% [markdown]
# The gradient is now right everywhere. The **value** at 100 is still `inf`: a custom
# gradient does not change the forward computation. A fully stable version rewrites the
# forward too, as $\max(x, 0) + \log(1 + e^{-|x|})$, where the exponential can no longer
# overflow; `ad.nn.softplus` (the thick line in the picture) computes it this way.

# %%
@ad.custom_gradient
def softplus_stable(x):
    e = ad.exp(-ad.abs(x))                     # in (0, 1]: cannot overflow
    value = ad.maximum(x, 0.0) + ad.math.log1p(e)
    def grad_fn(dy):
        # sigma(x), from the same e: 1 / (1 + e) for x >= 0, e / (1 + e) below
        return dy * ad.where(x >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))
    return value, grad_fn

with ad.GradientTape() as tape:
    tape.watch(big)
    y = softplus_stable(big)
print("value:   ", y.numpy().round(4))
print("gradient:", tape.gradient(y, big).numpy().round(4))
ad.testing.check_grads(softplus_stable, [np.array([-30.0, -1.0, 0.5, 4.0, 30.0])], order=1)
print("check_grads: first derivatives agree with finite differences")

# %% [markdown]
# ## 3. `where` does not stop a `nan`
#
# A common guard: "take the log only where $x > 0$, else use 0",
# `ad.where(x > 0, ad.math.log(x), 0.0)`. The **value** is fine at $x = 0$.
#
# **Predict.** What is the gradient at $x = 0$?

# %% tags=["solution"]
x = ad.constant([0.0, 4.0])
with np.errstate(divide="ignore", invalid="ignore"):
    with ad.GradientTape() as tape:
        tape.watch(x)
        guarded = ad.where(x > 0.0, ad.math.log(x), 0.0)
    guarded_gradient = tape.gradient(guarded, x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = float("nan")
### END SOLUTION

# %% tags=["check"]
check(my_prediction, guarded_gradient[0],
      hint="the branch where did not pick still ran: what does its backward rule receive "
           "from where, and what does Log's rule multiply that by at x = 0?")

# %% tags=["reveal"]
print("value:   ", guarded.numpy().round(4))
print("gradient:", guarded_gradient.numpy())

# %% [markdown]
# Both branches of `where` are computed, for every element. In the backward pass `where`
# sends the incoming gradient to the branch that was chosen and a **zero** to the other,
# and then `Log`'s rule multiplies that zero by $1/x = 1/0 = \infty$: `nan`. The guard
# hid the bad value in the forward pass, but not in the backward pass.
#
# The fix is a **second `where`, on the input**: replace the bad inputs by a harmless value
# (1.0) *before* the log, so that no branch ever sees 0.

# %%
with ad.GradientTape() as tape:
    tape.watch(x)
    safe_x = ad.where(x > 0.0, x, 1.0)                # log never sees 0
    guarded = ad.where(x > 0.0, ad.math.log(safe_x), 0.0)
print("value:   ", guarded.numpy().round(4))
print("gradient:", tape.gradient(guarded, x).numpy())

# %% [markdown]
# ## 4. Kinks: what the tape says where no derivative exists
#
# `abs`, `relu` and `maximum` have a corner at 0, where the derivative is not defined. The
# tape still returns a number there, by a **convention** each rule picks (the same ones
# TensorFlow picks):
#
# | at $x = 0$ | left slope | right slope | the tape gives |
# |---|---|---|---|
# | `ad.abs(x)` | $-1$ | $1$ | $0$ |
# | `ad.nn.relu(x)` | $0$ | $1$ | $0$ |
# | `ad.maximum(x, 0.0)` | $0$ | $1$ | $1$: a tie goes to the first argument |
#
# And where the derivative is infinite, you get `inf`: $\frac{d}{dx}\sqrt{x} = \frac{1}{2
# \sqrt{x}}$ at 0. The classic trap is the **norm of a zero vector**: `ad.norm` is a
# `sqrt` of a sum of squares, and at the origin its rule computes $0 / 0$.

# %%
zero_and_one = ad.constant([0.0, 1.0])
kinks = {"abs": ad.abs, "relu": ad.nn.relu, "maximum(x, 0)": lambda t: ad.maximum(t, 0.0)}
for name, f in kinks.items():
    with ad.GradientTape() as tape:
        tape.watch(zero_and_one)
        y = f(zero_and_one)
    print(f"{name:14s} gradient at [0, 1]: {tape.gradient(y, zero_and_one).numpy()}")

origin = ad.constant([0.0, 0.0])
with np.errstate(divide="ignore", invalid="ignore"):
    with ad.GradientTape() as tape:
        tape.watch(origin)
        length = ad.norm(origin)
    print("norm at the origin:", length.numpy(), " gradient:", tape.gradient(length, origin).numpy())

# %% [markdown]
# A `nan` from one example's zero vector spreads to every weight in the next update. Guard
# it with the double `where` of section 3, or add a tiny constant under the root
# ($\sqrt{\lVert v \rVert^2 + \varepsilon}$).
#
# ## 5. Finding the step that made a `nan`
#
# In a long computation the `nan` shows up in the final gradient, far from its cause.
# `tape.backward_trace(target, source)` (lesson 11 animates it) returns every step of the
# backward pass with what it received and what it sent to each input. The first step whose
# contribution is not finite is the culprit:

# %%
def first_nonfinite_step(tape, target, source):
    """The first backward step that sent a nan or inf to one of its inputs, or None."""
    for step in tape.backward_trace(target, source).steps:
        for _, contribution in step.contributions:
            if contribution is not None and not np.all(np.isfinite(contribution.numpy())):
                return step
    return None

x = ad.constant([0.0, 4.0])
with np.errstate(divide="ignore", invalid="ignore"):
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        loss = ad.reduce_sum(ad.where(x > 0.0, ad.math.log(x), 0.0) * 3.0)
    step = first_nonfinite_step(tape, loss, x)
print(tape)
print("culprit:     record", step.record.index, step.op_type)
print("received:   ", step.cotangents[0].numpy())
print("sent back:  ", [c.numpy() for _, c in step.contributions if c is not None])
del tape

# %% [markdown]
# `Log` received a gradient of exactly 0 for the first element and sent back `nan`: the
# signature of the `where` trap. (Received `nan` already? Then the culprit is further up.)

# %% [markdown]
# ## 6. A new op with a registered gradient
#
# `ad.custom_gradient` wraps Python code that uses library ops. To add a genuinely new
# **op**, one that computes directly on arrays, write its forward with `ad.primitive` and
# register its gradient by the op's type name with `ad.RegisterGradient`, as TensorFlow does.
#
# Our op is `Hypot`, the length $\sqrt{x^2 + y^2}$. Its forward receives the array module
# `xp` (NumPy here) and plain arrays. The tape records it like any built-in op:

# %%
@ad.primitive("Hypot")
def hypot(xp, x, y):
    return xp.sqrt(x * x + y * y)

a = ad.constant(3.0)
b = ad.constant(4.0)
with ad.GradientTape() as tape:
    tape.watch([a, b])
    r = hypot(a, b)

print("hypot(3, 4) =", r.numpy())
print(tape)
try:
    tape.gradient(r, [a, b])
except LookupError as error:
    print("LookupError:", error)

# %% [markdown]
# The tape does not know the derivative of `Hypot` yet, and says so with a `LookupError`:
# not a `None` (which means "no path"), but an error (which means "a path through an op I
# cannot differentiate"). It is the last row of lesson 3's list: a gradient is `None` when no
# recorded path leads to the source, and it *raises* when the path crosses an op with no
# registered gradient. A gradient function receives `op`,
# a description of the recorded call (`op.inputs`, `op.outputs`, `op.get_attr(...)`), and
# one upstream gradient per output; it returns one gradient per input. Since
# $\partial r / \partial x = x / r$ and $\partial r / \partial y = y / r$:

# %%
@ad.RegisterGradient("Hypot")
def _hypot_grad(op, grad):
    x, y = op.inputs
    r = op.outputs[0]
    return grad * x / r, grad * y / r

with ad.GradientTape() as tape:
    tape.watch([a, b])
    r = hypot(a, b)
grad_a, grad_b = tape.gradient(r, [a, b])
print("gradient:", grad_a.numpy(), grad_b.numpy(), " (3/5, 4/5)")

ad.testing.check_grads(hypot, [np.array([3.0, -1.0, 0.5]), np.array([4.0, 2.0, -2.0])], order=2)
print("check_grads: first and second derivatives of Hypot agree with finite differences")

# %% [markdown]
# Because `_hypot_grad` uses library ops (`*`, `/`), second derivatives come for free, which
# `check_grads(..., order=2)` just confirmed.
#
# The gradient registry is **global**: an op type has exactly one gradient, and registering
# a second one is an error. (So re-running the registration cell raises it too: restart the
# kernel, or pick a new op name, when you change the gradient.)

# %%
try:
    @ad.RegisterGradient("Hypot")
    def _another_hypot_grad(op, grad):
        return grad, grad
except KeyError as error:
    print("KeyError:", error)

# %% [markdown]
# An op that should have no gradient at all (a random draw, an argmax) is declared with
# `ad.no_gradient("OpType")`: the gradient through it is then `None` instead of a
# `LookupError`.

# %% [markdown]
# ## Words of this lesson
#
# | word | what it means here |
# |---|---|
# | **overflow** | a result too large for its dtype, which becomes `inf` (`exp` above 88.72 in `float32`) |
# | **`nan`** | "not a number", the result of $0 \cdot \infty$, $\infty - \infty$ or $0 / 0$; it spreads through every later operation |
# | **kink** | a point where a function has a corner and no derivative (`abs`, `relu` at 0) |
# | **primitive** | an op computed directly on arrays (`ad.primitive`), whose gradient must be registered |
#
# ## Summary
#
# * A formula with a finite derivative can still give a `nan` gradient: an intermediate
#   overflows (`exp` above 88.72 in `float32`) and the chain rule meets $0 \cdot \infty$.
#   Repair the gradient with a custom gradient, or better, the value and the gradient with
#   a stable formula (`ad.nn.softplus`).
# * `where` computes both branches and sends a zero into the one not taken: a `nan` there
#   still poisons the gradient. Use a second `where` on the input.
# * At kinks the rules pick a convention (`abs` and `relu`: 0; `maximum`: the first
#   argument); a zero vector's norm has a `nan` gradient.
# * `tape.backward_trace` finds the first step that sent back a non-finite value.
# * A new op: `ad.primitive("Name")` for the forward, `ad.RegisterGradient("Name")` for the
#   gradient, `ad.no_gradient("Name")` for none. Without either, the backward pass raises
#   `LookupError`. One gradient per op type, globally.
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
# **Exercise 1.** `hypot(x, 0)` at `x = -2`: the distance from the origin on a line.

# %% tags=["solution"]
xh = ad.constant(-2.0)
with ad.GradientTape() as tape:
    tape.watch(xh)
    y = hypot(xh, ad.constant(0.0))

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = -1.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, xh),
      hint="a distance's derivative is a direction: which way does hypot grow as x = -2 moves?")

# %% [markdown]
# **Exercise 2.** The gradient of `ad.sqrt(x)` at `x = 0`: a number, `float("nan")` or
# `float("inf")`?

# %% tags=["solution"]
xs0 = ad.constant(0.0)
with np.errstate(divide="ignore"):
    with ad.GradientTape() as tape:
        tape.watch(xs0)
        y = ad.sqrt(xs0)
    root_gradient = tape.gradient(y, xs0)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = float("inf")
### END SOLUTION

# %% tags=["check"]
check(my_prediction, root_gradient,
      hint="write down the derivative of sqrt, then put in x = 0")

# %% [markdown]
# **Exercise 3.** The arguments swapped: `ad.maximum(0.0, x)` at `x = 0`. What is the
# gradient with respect to `x`? (Section 4's table has the rule for a tie.)

# %% tags=["solution"]
xm = ad.constant(0.0)
with ad.GradientTape() as tape:
    tape.watch(xm)
    y = ad.maximum(0.0, xm)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 0.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, xm),
      hint="at a tie, maximum gives the whole gradient to one of its arguments: which one, "
           "and where is x in the call?")

# %% [markdown]
# **Next:** lesson 8 asks for many gradients at once: Jacobians.
