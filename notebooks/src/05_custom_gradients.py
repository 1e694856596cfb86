# Lesson 5 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 05
# %% [markdown]
# # Lesson 5: Custom gradients
#
# Usually the tape derives every gradient from the rules of the ops you used. Sometimes you
# want to decide yourself what flows backwards:
#
# 1. **change the gradient on purpose**: clip it, reverse it, or let it pass through an op
#    that has none (rounding);
# 2. **save work**: reuse a value from the forward pass instead of recomputing it.
#
# Both use the decorator `ad.custom_gradient`, for functions of one result or of several.
# Lesson 6 goes further (Variables, second derivatives, saved models), and lesson 7 uses
# custom gradients to repair gradients that come out as `nan`.
#
# Several cells ask you to **predict** before you run: type your guess into
# `my_prediction`, run the cell, then run the check below it.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 3 |
# | 1. The shape of a custom gradient | 7 |
# | 2. Clipping in the backward pass | 2 |
# | 3. A value without its gradient: straight-through rounding | 6 |
# | 4. Caching forward values | 2 |
# | 5. Several outputs: one upstream gradient each | 7 |
# | 6. Check a hand-written gradient | 2 |
# | summary and the words of the lesson | 2 |
# | exercises 1 to 5 | 15 |
# | in all | 46 |

# %%
%matplotlib inline
%config InlineBackend.figure_formats = ['png']
import numpy as np

import autodiff as ad
import widgets
from widgets.exercises import check  # None only matches None; numbers must be close

# %% [markdown]
# ## 1. The shape of a custom gradient
#
# A function decorated with `@ad.custom_gradient` returns **two** things: its result `y`,
# and a function `grad_fn` that the tape will call during the backward pass. `grad_fn`
# receives the gradient arriving at `y` from above (the *upstream* gradient, often called
# `dy`) and returns the gradient to send to each input.
#
# A first example is the *gradient reversal* trick from domain adaptation: the value passes
# through unchanged, but the gradient comes back scaled by a negative factor. Read
# `grad_fn` below to see which.
#
# **Predict.** `x = 3` goes through `x * x` and then through `reverse_gradient`. What does
# `tape.gradient(y, x)` return?

# %% tags=["solution"]
@ad.custom_gradient
def reverse_gradient(x):
    def grad_fn(dy):
        return -0.5 * dy            # what the input receives
    return ad.identity(x), grad_fn  # the value is x itself

x = ad.Variable(3.0, name="x")
with ad.GradientTape(persistent=True) as tape:   # persistent: the player replays it below
    y = reverse_gradient(x * x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = -3.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, x),
      hint="follow the gradient down from y: first through grad_fn, then through x * x")

# %% tags=["reveal"]
print("y =", y.numpy())
print(tape)

# %% [markdown]
# The tape shows how this works: the whole call becomes **one record**, named after the
# function (`reverse_gradient`, as on TensorFlow's tape), whose derivative rule is our
# `grad_fn`. The ops inside the function (here just `Identity`) are recorded as usual, but
# the backward pass never goes through them: the result `y` is the output of the
# `reverse_gradient` record, so the walk back from `y` meets it and jumps straight to its
# input `v0`. (Inside a traced function or a saved model, the same call is a graph node of
# type `IdentityN`: lesson 6 opens one.)
#
# ### Watch it skip
#
# The tape player (lesson 11 shows all it can do) plays the forward records, then the
# backward pass one step at a time. Press **Play**, or step with the arrow keys: the
# gradient goes from `y` into `reverse_gradient`, then to `Mul`, and the `Identity` record inside
# the function is never visited.

# %%
widgets.TapePlayer(tape, target=y, sources=x)

# %% [markdown]
# Step by step: the tape seeds $dy/dy = 1$ at `y`, the `reverse_gradient` record calls `grad_fn(1.0)` and
# sends $-0.5$ to `x * x`, and `Mul` turns that into $-0.5 \cdot 2x = -3$.

# %% [markdown]
# ## 2. Clipping in the backward pass
#
# Exploding gradients can wreck a training step. A custom gradient can cap the size of the
# gradient *at one point of the model*, without changing the forward computation. Here the
# identity clips the norm of whatever flows back through it to at most 1:

# %%
@ad.custom_gradient
def clip_backward(x):
    def grad_fn(dy):
        return ad.clip_by_norm(dy, 1.0)
    return ad.identity(x), grad_fn

w = ad.Variable([3.0, 4.0], name="w")
with ad.GradientTape(persistent=True) as tape:
    plain_loss = ad.reduce_sum(w ** 2)
    clipped_loss = ad.reduce_sum(clip_backward(w) ** 2)

print("same value:       ", plain_loss.numpy(), clipped_loss.numpy())
print("plain gradient:   ", tape.gradient(plain_loss, w).numpy(), " norm 10")
print("clipped gradient: ", tape.gradient(clipped_loss, w).numpy(), " norm 1")
del tape

# %% [markdown]
# ## 3. A value without its gradient: straight-through rounding
#
# Quantized networks round their weights, and still need to learn *through* the rounding.
#
# **Predict.** What is the gradient of `ad.round(level * 2) / 2` with respect to `level`?
# A number (which?) or `None`? (Lesson 3 has the rule.)

# %% tags=["solution"]
level = ad.Variable(1.3, name="level")
with ad.GradientTape() as tape:
    rounded = ad.round(level * 2.0) / 2.0                    # to the nearest 0.5

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = None
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(rounded, level),
      hint="does Round have a gradient at all? Lesson 3's table of None gradients lists it")

# %% [markdown]
# `Round` has no gradient, so nothing reaches `level`. The fix is to pretend, for the
# backward pass only, that rounding is the identity. This is the **straight-through
# estimator**:

# %%
@ad.custom_gradient
def round_straight_through(x):
    def grad_fn(dy):
        return dy                    # as if the op were y = x
    return ad.round(x), grad_fn

with ad.GradientTape() as tape:
    rounded_st = round_straight_through(level * 2.0) / 2.0

print("value:   ", rounded_st.numpy())
print("gradient:", tape.gradient(rounded_st, level))

# %% [markdown]
# ### The same trick with `stop_gradient`
#
# You can build the straight-through estimator without a decorator. `ad.stop_gradient`
# (lesson 2) passes a value forward and blocks its gradient, so
#
# $$ x + \operatorname{stop\_gradient}(\operatorname{round}(x) - x) $$
#
# has the **value** $\operatorname{round}(x)$ (the $x$ cancels) and the **gradient** of $x$
# alone, 1. Many quantization codes write it this way.

# %%
with ad.GradientTape() as tape:
    doubled = level * 2.0
    rounded_sg = (doubled + ad.stop_gradient(ad.round(doubled) - doubled)) / 2.0

print("value:   ", rounded_sg.numpy())
print("gradient:", tape.gradient(rounded_sg, level))

# %% [markdown]
# ## 4. Caching forward values
#
# The forward pass often computes something expensive that the derivative needs again.
# Scaling a vector to unit length, $y = v / \lVert v \rVert$, has the vjp
# $(dy - y\,(y \cdot dy)) / \lVert v \rVert$: it needs the norm and the output, both of
# which the forward has just computed. The closure keeps them, so the backward pass does
# not recompute the norm (and records nothing but a few multiplications).

# %%
@ad.custom_gradient
def unit_vector(v):
    norm = ad.norm(v)
    y = v / norm
    def grad_fn(dy):
        return (dy - y * ad.reduce_sum(y * dy)) / norm      # reuses y and norm
    return y, grad_fn

v = ad.Variable([3.0, 4.0], name="v")
weights = ad.constant([1.0, 2.0])
with ad.GradientTape(persistent=True) as tape:
    custom = ad.reduce_sum(unit_vector(v) * weights)
    automatic = ad.reduce_sum(v / ad.norm(v) * weights)

print("custom gradient:   ", tape.gradient(custom, v).numpy().round(5))
print("automatic gradient:", tape.gradient(automatic, v).numpy().round(5))
del tape

# %% [markdown]
# ## 5. Several outputs: one upstream gradient each
#
# A custom-gradient function may return several results, as a tuple. Its `grad_fn` then
# receives **one upstream gradient per output**, in the same order (`grad_fn(*upstreams)`),
# and still returns one gradient per input.
#
# Take polar coordinates: `to_polar(x, y)` returns the radius $r = \sqrt{x^2 + y^2}$ and the
# angle $\theta = \operatorname{atan2}(y, x)$. Their derivatives, worked out on paper, are
# $\partial r / \partial x = x / r$, $\partial r / \partial y = y / r$,
# $\partial \theta / \partial x = -y / r^2$ and $\partial \theta / \partial y = x / r^2$. The
# chain rule adds the two outputs' shares for each input: the gradient for `x` is
# $dr \cdot x / r - d\theta \cdot y / r^2$.

# %%
received = []                                  # what grad_fn was given, call by call

@ad.custom_gradient
def to_polar(x, y):
    r = ad.sqrt(x * x + y * y)
    theta = ad.atan2(y, x)
    def grad_fn(dr, dtheta):                   # one upstream gradient per output
        received.append((float(dr), float(dtheta)))
        return dr * x / r - dtheta * y / (r * r), dr * y / r + dtheta * x / (r * r)
    return (r, theta), grad_fn

x = ad.Variable(3.0, name="x")
y = ad.Variable(4.0, name="y")
with ad.GradientTape() as tape:
    r, theta = to_polar(x, y)
    z = r + 2.0 * theta

print(tape)
grad_x, grad_y = tape.gradient(z, [x, y])
print("grad_fn was given (dr, dtheta):", received[-1])
print(f"dz/dx = {float(grad_x):.4f}   by hand 3/5 - 2 * 4/25 = {3 / 5 - 2 * 4 / 25:.4f}")
print(f"dz/dy = {float(grad_y):.4f}   by hand 4/5 + 2 * 3/25 = {4 / 5 + 2 * 3 / 25:.4f}")

# %% [markdown]
# One record, `v5, v6 = to_polar(x, y)`, with two outputs. The target $z = r + 2\theta$ sent
# 1 to `r` and 2 to `theta`, and `grad_fn` received both.
#
# **Predict.** Now the target is `r` alone: `theta` is computed but leads nowhere. The tape
# still calls `grad_fn` with two upstream gradients. What is `dtheta`, the one for the unused
# output: `None`, or a number (which)?

# %% tags=["solution"]
received.clear()
with ad.GradientTape() as tape:
    r, theta = to_polar(x, y)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 0.0
### END SOLUTION

# %% tags=["check"]
gradients = tape.gradient(r, [x, y])          # the call that hands grad_fn its upstreams
check(my_prediction, received[-1][1],
      hint="grad_fn's formulas do arithmetic with dtheta: could the tape hand it None? "
           "And how much does r depend on theta?")

# %% tags=["reveal"]
print("d r / d [x, y]:", [round(float(g), 4) for g in gradients])

# %% [markdown]
# A zero, not `None`, in TensorFlow 2 and here: an output that does not lead to the target
# gets an upstream gradient of zeros, so `grad_fn` can always do arithmetic with every
# argument it receives. The gradient is then $[x/r,\ y/r] = [0.6, 0.8]$, the radius's alone.

# %% [markdown]
# ## 6. Check a hand-written gradient
#
# A custom gradient is a promise the tape cannot verify: if `grad_fn` is wrong, every
# gradient through it is silently wrong. `ad.testing.check_grads` compares the tape's
# derivatives with finite differences, $\frac{f(x + \epsilon v) - f(x - \epsilon v)}{2
# \epsilon}$ along random directions $v$. (It works in `float64`, where finite differences
# are accurate.) It raises an `AssertionError` on a mismatch and returns quietly otherwise.

# %%
ad.testing.check_grads(unit_vector, [np.array([3.0, -4.0, 1.0])], order=1)
print("unit_vector: first derivatives agree with finite differences")

@ad.custom_gradient
def unit_vector_wrong(v):
    norm = ad.norm(v)
    y = v / norm
    def grad_fn(dy):
        return (dy + y * ad.reduce_sum(y * dy)) / norm      # a sign mistake
    return y, grad_fn

try:
    ad.testing.check_grads(unit_vector_wrong, [np.array([3.0, -4.0, 1.0])], order=1)
except AssertionError as error:
    print(str(error).splitlines()[0])

# %% [markdown]
# ## Words of this lesson
#
# | word | what it means here |
# |---|---|
# | **custom gradient** | a function whose backward rule you write yourself (`@ad.custom_gradient`) |
# | **upstream gradient** | the cotangent arriving at a function's output from above (`dy`), one per output |
# | **`grad_fn`** | the rule you write: upstream gradients in, one gradient per input out |
# | **straight-through estimator** | an op's value forward, the identity's gradient backward |
#
# ## Summary
#
# * `@ad.custom_gradient`: return `(y, grad_fn)`; the tape records one op, named after the
#   function (`IdentityN` in graphs), whose rule is `grad_fn(dy)`, and the backward pass skips the ops inside. Use it to clip,
#   reverse or pass gradients straight through, and to reuse forward values.
# * A function with several outputs gets one upstream gradient per output,
#   `grad_fn(*upstreams)`; an output that does not lead to the target sends zeros.
# * `x + stop_gradient(f(x) - x)` is the decorator-free straight-through estimator.
# * Check a hand-written gradient with `ad.testing.check_grads`.
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
# **Exercise 1.** `reverse_gradient` (section 1) applied to `4 * t` at `t = 1`.

# %% tags=["solution"]
t = ad.Variable(1.0)
with ad.GradientTape() as tape:
    y = reverse_gradient(4.0 * t)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = -2.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, t),
      hint="what factor does reverse_gradient's grad function apply (section 1)? Then the chain "
           "rule")

# %% [markdown]
# **Exercise 2.** `clip_backward` (section 2, norm at most 1) applied to `5 * u` at `u = 1`.
# The upstream gradient at the clip is 1, already small enough.

# %% tags=["solution"]
u = ad.Variable(1.0)
with ad.GradientTape() as tape:
    y = clip_backward(5.0 * u)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 5.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, u),
      hint="the clip only shrinks a gradient whose norm is above 1: which gradient reaches it "
           "here?")

# %% [markdown]
# **Exercise 3.** And now the clip comes *last*: `10 * clip_backward(u)`. The upstream
# gradient arriving at the clip is 10.

# %% tags=["solution"]
with ad.GradientTape() as tape:
    y = 10.0 * clip_backward(u)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 1.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, u),
      hint="clip the gradient of 10 that arrives to norm 1, then multiply by du/du")

# %% [markdown]
# **Exercise 4.** Straight-through rounding of `3 * m` at `m = 0.9` (the value is 3.0).

# %% tags=["solution"]
m = ad.Variable(0.9)
with ad.GradientTape() as tape:
    y = round_straight_through(3.0 * m)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 3.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, m),
      hint="straight-through: the backward pass treats rounding as if it were the identity")

# %% [markdown]
# **Exercise 5.** A function with two outputs: `sum_and_product(a, b)` returns
# $s = a + b$ and $p = a b$, and its `grad_fn(ds, dp)` sends $ds + dp \cdot b$ to `a`. With
# $a = 2$, $b = 5$ and the target $s + 3p$, what is the gradient with respect to `a`?

# %% tags=["solution"]
@ad.custom_gradient
def sum_and_product(a, b):
    def grad_fn(ds, dp):
        return ds + dp * b, ds + dp * a
    return (a + b, a * b), grad_fn

a = ad.Variable(2.0)
b = ad.Variable(5.0)
with ad.GradientTape() as tape:
    s, p = sum_and_product(a, b)
    target = s + 3.0 * p

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 16.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(target, a),
      hint="which upstream gradients does the target send to s and to p? Put them into "
           "ds + dp * b")

# %% [markdown]
# **Next:** lesson 6 takes custom gradients further: functions that read Variables, second
# derivatives, and custom gradients in saved models.
