# Lesson 2 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 02
# %% [markdown]
# # Lesson 2: Controlling the tape
#
# Lesson 1 let the tape record everything it could, and asked it one question. Real code
# needs more control: a tape that answers several questions (about intermediate results,
# too), computations that should not be recorded (a metric you only print), recordings to
# throw away, and paths that should deliberately carry no gradient. And sometimes a
# gradient comes back as `None`: this lesson says what that means, and lesson 3 collects the
# usual reasons.
#
# **You will learn**
# 1. tapes you can ask more than once (`persistent=True`), and gradients with respect to
#    intermediate results;
# 2. `tape.stop_recording()`, `tape.reset()` and `ad.stop_gradient`: three ways to keep
#    something off the gradient, from coarse to precise;
# 3. what `None` means, and when to ask for zeros instead (`unconnected_gradients`);
# 4. how little a tape needs: about thirty lines of Python, for plain numbers.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 3 |
# | 1. Persistent tapes | 3 |
# | 2. Gradients with respect to intermediate results | 2 |
# | 3. Pausing the tape: `stop_recording` | 3 |
# | 4. Starting over: `reset` | 3 |
# | 5. Blocking one path: `ad.stop_gradient` | 3 |
# | 6. `None` or zero? Unconnected gradients | 6 |
# | 7. A tape by hand | 10 |
# | summary and the words of the lesson | 2 |
# | exercises 1 to 5 | 18 |
# | in all | 53 |
#
# Exercise 6 is homework.

# %%
import numpy as np

import autodiff as ad
import widgets
from widgets.exercises import check  # None only matches None; numbers must be close
from widgets.explain_history import record_history

# %% [markdown]
# ## 1. Persistent tapes
#
# A tape made with `ad.GradientTape()` frees its records as soon as `gradient` returns, to
# release the values they hold. A second call is a mistake, and says so:

# %%
q = ad.Variable(3.0, name="q")
with ad.GradientTape() as tape:
    y = q * q
    z = y * y

print("dz/dq =", tape.gradient(z, q))
try:
    tape.gradient(y, q)
except RuntimeError as error:
    print("RuntimeError:", error)

# %% [markdown]
# With `persistent=True` the records stay until the tape object itself is gone, so you can
# ask as many questions as you like. Delete the tape when you are done with it, so its
# records (and the tensors they keep alive) can be released.

# %%
with ad.GradientTape(persistent=True) as tape:
    y = q * q          # q^2
    z = y * y          # q^4

print("dz/dq =", tape.gradient(z, q), "  (4 q^3 = 108)")
print("dy/dq =", tape.gradient(y, q), "  (2 q = 6)")
print("dz/dy =", tape.gradient(z, y), "  (2 y = 18)")
del tape

# %% [markdown]
# ## 2. Gradients with respect to intermediate results
#
# A source does not have to be a Variable or a watched input: any tensor computed on the
# tape can be a source. That answers questions like "how sensitive is the loss to this
# hidden activation?".
#
# This needs two `gradient` calls on the same recording, so the tape must be
# **persistent** (section 1).

# %%
p = ad.Variable(0.5, name="p")
with ad.GradientTape(persistent=True) as tape:
    hidden = 3.0 * p            # 1.5
    loss = ad.sin(hidden)

print(f"d loss / d hidden = {float(tape.gradient(loss, hidden)):.6f}   (cos 1.5 = {np.cos(1.5):.6f})")
print(f"d loss / d p      = {float(tape.gradient(loss, p)):.6f}   (3 cos 1.5 = {3 * np.cos(1.5):.6f})")

# %% [markdown]
# ## 3. Pausing the tape: `stop_recording`
#
# While a training step runs you often compute things you only want to *look at*: an error
# rate, a norm for a log message. Recording them costs memory and time for nothing.
# `with tape.stop_recording():` pauses the tape for the length of the block.

# %%
w = ad.Variable(1.5, name="w")
x_batch = ad.constant([1.0, 2.0, 3.0])
y_batch = ad.constant([2.0, 4.0, 6.0])

with ad.GradientTape() as tape:
    predictions = w * x_batch
    loss = ad.reduce_mean((predictions - y_batch) ** 2)
    with tape.stop_recording():
        worst_error = ad.reduce_max(ad.abs(predictions - y_batch))   # only for printing

print(tape)
print("loss:", loss.numpy(), " worst error:", worst_error.numpy())
print("dloss/dw:", tape.gradient(loss, w))

# %% [markdown]
# The three ops of the error metric (`Sub`, `Abs`, `Max`) are missing from the tape.
#
# A result computed while the tape was paused is an ordinary constant from the tape's point
# of view, even if it came from watched values. Use it in the loss and no gradient flows
# through it:

# %%
a = ad.Variable(2.0, name="a")
b = ad.Variable(3.0, name="b")

with ad.GradientTape() as tape:
    a_part = a * a
    with tape.stop_recording():
        b_part = b * b
    total = a_part + b_part

print(tape.gradient(total, {"a": a, "b": b}))

# %% [markdown]
# ## 4. Starting over: `reset`
#
# `tape.reset()` throws away everything recorded so far (and everything watched), and the
# tape keeps recording. Usually it is clearer to close the `with` block and open a new one;
# `reset` is for code where the block is hard to leave, for example a loop that decides
# halfway through that its first attempt does not count.

# %%
c = ad.Variable(4.0, name="c")
attempts = 0
with ad.GradientTape() as tape:
    for attempt in range(3):
        tape.reset()                      # only the last attempt should be on the tape
        guess = c * float(attempt + 1)    # attempts 1, 2, 3: c, 2c, 3c
        attempts += 1

print("attempts made:", attempts)
print(tape)
print("d guess / dc:", tape.gradient(guess, c))

# %% [markdown]
# Only the last attempt's `Mul` is left, so the gradient is 3. Note what `reset` forgets:
# it also forgets that `c` was watched, which is fine here because the next line reads `c`
# again and the tape watches it anew.

# %% [markdown]
# ## 5. Blocking one path: `ad.stop_gradient`
#
# `stop_recording` and `reset` act on a whole tape. `ad.stop_gradient(t)` is precise: it
# returns the value of `t` unchanged, but tells every tape "treat this as a constant". It
# needs no access to the tape, so a library function can use it.
#
# A common use: rescale a vector to unit length, but treat the length as a fixed number,
# so the gradient is simply "divide by the length".

# %%
v = ad.Variable([6.0, 8.0], name="v")      # length 10

with ad.GradientTape(persistent=True) as tape:
    fixed_length = v / ad.stop_gradient(ad.norm(v))
    true_unit = v / ad.norm(v)
    target = ad.reduce_sum(fixed_length * ad.constant([1.0, -1.0]))
    target_true = ad.reduce_sum(true_unit * ad.constant([1.0, -1.0]))

print("values (the same):      ", fixed_length.numpy(), true_unit.numpy())
print("length held fixed:      ", tape.gradient(target, v).numpy())
print("length differentiated:  ", np.round(tape.gradient(target_true, v).numpy(), 4))
del tape

# %% [markdown]
# With the length held fixed, the gradient is just $[1, -1] / 10$. Letting the gradient flow
# through the length as well changes it: that is the part `stop_gradient` removed.
#
# | tool | acts on | typical use |
# |---|---|---|
# | `tape.stop_recording()` | one tape, for a block of code | metrics, logging, bookkeeping |
# | `tape.reset()` | one tape, everything so far | restart a recording you cannot leave |
# | `ad.stop_gradient(t)` | one tensor, every tape | a value that must act as a constant |

# %% [markdown]
# ## 6. `None` or zero? Unconnected gradients
#
# Two sources below leave the output unchanged when they move a little: one feeds an op
# that is flat where it is evaluated, the other is never used at all. Does the tape tell
# them apart?
#
# **Predict.** `relu` is flat for negative inputs. What does `tape.gradient(out, [p, q])`
# return below, with `p = -2` fed through `relu` and `q` never used? Two entries, each a
# number or `None`.

# %% tags=["solution"]
p = ad.Variable(-2.0, name="p")
q = ad.Variable(5.0, name="q")     # never used below

with ad.GradientTape() as tape:
    out = ad.nn.relu(p)            # relu is flat for negative inputs

my_prediction = ...  # your prediction: a list of two entries
### BEGIN SOLUTION
my_prediction = [0.0, None]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(out, [p, q]),
      hint="one source has a path through a flat op, the other has no path at all")

# %% [markdown]
# `p` gets a real `0.0` (the path exists, the slope is zero); `q` gets `None`. When the
# target does not depend on a source at all, `gradient` returns `None`. This is a
# deliberate choice: `None` says "there is no path", and a zero would hide a bug.
#
# If your code wants a tensor for every source (to update every parameter the same way,
# say), ask for zeros with `unconnected_gradients`. It takes
# `ad.UnconnectedGradients.ZERO` or the string `'zero'` (and `'none'`, the default):

# %%
with ad.GradientTape() as tape:
    out = ad.nn.relu(p)

print(tape.gradient(out, [p, q], unconnected_gradients=ad.UnconnectedGradients.ZERO))

# %% [markdown]
# ## 7. A tape by hand
#
# What does a tape need, at the least? Build one for plain numbers. Each `Value` keeps its
# number (`data`), the `Value`s it was computed from (`parents`), a `grad` that starts at 0,
# and a small `backward_rule` that sends its own `grad` to its parents, each parent's share
# being the local derivative times `grad` (the chain rule). `backward()` seeds
# $\partial y / \partial y = 1$ and runs the rules from the result back to the inputs.
#
# One thing takes care: a value may run its rule only after **everything computed from it**
# has sent it their shares. So `backward()` first puts the values in a *topological order*
# (every value after the values it was computed from) and runs the rules in reverse.

# %%
class Value:
    """A number that remembers where it came from (for plain Python floats)."""

    def __init__(self, data, parents=()):
        self.data, self.grad, self.parents = data, 0.0, parents
        self.backward_rule = lambda: None          # an input has no parents to send to

    def __add__(self, other):
        out = Value(self.data + other.data, (self, other))
        def backward_rule():                       # d(a + b) = da + db
            self.grad += out.grad
            other.grad += out.grad
        out.backward_rule = backward_rule
        return out

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other))
        def backward_rule():                       # d(a b) = b da + a db
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out.backward_rule = backward_rule
        return out

    def backward(self):
        order, seen = [], set()
        def visit(v):                              # parents first: a topological order
            if v not in seen:
                seen.add(v)
                for parent in v.parents:
                    visit(parent)
                order.append(v)
        visit(self)
        self.grad = 1.0                            # the seed, dy/dy
        for v in reversed(order):
            v.backward_rule()

# %% [markdown]
# Lesson 1's first function, $y = x^3 - 2x$ at $x = 1.5$, where the slope is 4.75:

# %%
x = Value(1.5)
y = x * x * x + Value(-2.0) * x
y.backward()
print("y =", y.data, "  dy/dx =", x.grad)

# %% [markdown]
# Each rule **adds** into `grad` (`+=`): `x` is used four times, and its four shares add up
# to 4.75. That has a consequence.
#
# **Predict.** Fresh values: `z = x * x` at $x = 3$, so one walk gives `x.grad` $= 2x = 6$.
# The cell walks back **twice**, without setting any `grad` back to 0. What is `x.grad`
# then?

# %% tags=["solution"]
x = Value(3.0)
z = x * x
z.backward()
z.backward()

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 12.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, x.grad,
      hint="every rule adds into grad: what did x.grad hold when the second walk began?")

# %% [markdown]
# 12: the second walk added its 6 to the first one's. With intermediate values it gets
# worse, because they keep their `grad`s too and pass them on again. Lesson 1's function,
# walked twice:

# %%
x = Value(1.5)
y = x * x * x + Value(-2.0) * x
y.backward()
y.backward()
print("dy/dx after two walks:", x.grad, "  (not 2 * 4.75)")

# %% [markdown]
# A hand-built tape like this one needs every `grad` set back to zero before each backward
# pass (PyTorch, which also stores gradients in its tensors, has `zero_grad()` for it).
# `tape.gradient` cannot make this mistake: it keeps its running totals in a fresh
# dictionary on every call and returns them, so a persistent tape asked twice gives the
# same answer twice (section 1).
#
# This is the whole idea of reverse mode; what `ad.GradientTape` adds is tensors instead of
# numbers, watching, and rules for hundreds of ops. Lesson 12 builds a tape the way this
# library does: a list of records in the order the ops ran, which is already a topological
# order, so no search is needed.

# %% [markdown]
# ## Words of this lesson
#
# | word | what it means here |
# |---|---|
# | **persistent tape** | a tape that keeps its records after `gradient`, so it can answer again (`persistent=True`) |
# | **intermediate result** | a tensor computed on the tape between the inputs and the target; it can be a source too |
# | **unconnected** | a source with no recorded path to the target: its gradient is `None` (or zeros, if asked) |
# | **seed** | the cotangent the backward pass starts with: 1 at a scalar target |
# | **topological order** | an order in which every value comes after the values it was computed from |
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
# **Exercise 1.** A persistent tape and an intermediate result: $h = 2x$, $y = h^2$ at
# $x = 1.5$. Predict $dy/dh$ and then $dy/dx$.

# %% tags=["solution"]
x = ad.Variable(1.5)
with ad.GradientTape(persistent=True) as tape:
    h = 2.0 * x
    y = h * h

my_prediction = ...  # dy/dh
### BEGIN SOLUTION
my_prediction = 6.0          # dy/dh
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, h),
      hint="differentiate h**2 with respect to h, at h = 2 * 1.5")

# %% tags=["solution"]
my_prediction = ...  # dy/dx
### BEGIN SOLUTION
my_prediction = 12.0         # dy/dx
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, x),
      hint="the chain rule: dy/dh times dh/dx")

# %% [markdown]
# **Exercise 2.** `a * a` is recorded, `b * a` is computed while the tape is paused.
# What is the gradient with respect to `a` (with `a = 2`, `b = 5`)?

# %% tags=["solution"]
a = ad.Variable(2.0)
b = ad.Variable(5.0)
with ad.GradientTape() as tape:
    first = a * a
    with tape.stop_recording():
        second = b * a
    y = first + second

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 4.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, a),
      hint="the tape saw only what ran while it was recording: which terms of y did it record?")

# %% [markdown]
# **Exercise 3.** `y = s * stop_gradient(s)` with `s = 3`. What is `dy/ds`?

# %% tags=["solution"]
s = ad.Variable(3.0)
with ad.GradientTape() as tape:
    y = s * ad.stop_gradient(s)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 3.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, s),
      hint="to the tape, stop_gradient(s) is a constant c: differentiate s * c")

# %% [markdown]
# **Exercise 4.** Two sources, one of which the target does not use, with
# `unconnected_gradients='zero'`. What does `tape.gradient` return? (A list of two
# entries.)

# %% tags=["solution"]
used = ad.Variable(1.0)
unused = ad.Variable(1.0)
with ad.GradientTape() as tape:
    y = used * 10.0

my_prediction = ...  # your prediction: a list of two entries
### BEGIN SOLUTION
my_prediction = [10.0, 0.0]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, [used, unused], unconnected_gradients="zero"),
      hint="one entry at a time: what does the target do with each source, and what does "
           "unconnected_gradients='zero' change?")

# %% [markdown]
# **Exercise 5.** `relu` of a negative number. `None` or `0.0`?

# %% tags=["solution"]
r = ad.Variable(-1.5)
with ad.GradientTape() as tape:
    y = ad.nn.relu(r) + 1.0

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 0.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, r),
      hint="is relu recorded, connecting y to r? Then what is its slope at -1.5?")

# %% [markdown]
# **Exercise 6 (homework).** The hand-built `Value` of section 7, on $y = (x + x) \cdot x$
# at $x = 2$, with fresh values. What is `x.grad`?

# %% tags=["solution"]
x = Value(2.0)
y = (x + x) * x
y.backward()

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 8.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, x.grad,
      hint="simplify y first and differentiate; or add up the shares each record sends back "
           "to x")

# %% [markdown]
# **Next:** lesson 3 collects the usual reasons a gradient comes back `None`, and the
# explainer that names them.
