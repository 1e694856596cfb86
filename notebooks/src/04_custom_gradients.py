# Lesson 4 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 04
# %% [markdown]
# # Lesson 4: Custom gradients
#
# Usually the tape derives every gradient from the rules of the ops you used. Sometimes you
# want to decide yourself what flows backwards:
#
# 1. **change the gradient on purpose**: clip it, reverse it, or let it pass through an op
#    that has none (rounding);
# 2. **repair a numerically bad gradient**: a formula can have a perfectly good derivative
#    that the chain rule evaluates as `inf / inf`;
# 3. **save work**: reuse a value from the forward pass instead of recomputing it;
# 4. **give a brand-new op a gradient**: an op written directly on arrays, which the tape
#    cannot see inside.
#
# Cases 1 to 3 use the decorator `ad.custom_gradient`; case 4 uses `ad.primitive` with
# `ad.RegisterGradient`. At the end we save a model with a custom gradient and load it in a
# fresh Python process.

# %%
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

import autodiff as ad

# %% [markdown]
# ## 1. The shape of a custom gradient
#
# A function decorated with `@ad.custom_gradient` returns **two** things: its result `y`,
# and a function `grad_fn` that the tape will call during the backward pass. `grad_fn`
# receives the gradient arriving at `y` from above (the *upstream* gradient, often called
# `dy`) and returns the gradient to send to each input.
#
# A first example is the *gradient reversal* trick from domain adaptation: the value passes
# through unchanged, but the gradient comes back with its sign flipped (and scaled).

# %%
@ad.custom_gradient
def reverse_gradient(x):
    def grad_fn(dy):
        return -0.5 * dy            # what the input receives
    return ad.identity(x), grad_fn  # the value is x itself

x = ad.Variable(3.0, name="x")
with ad.GradientTape() as tape:
    y = reverse_gradient(x * x)

print("y =", y.numpy())
print(tape)
print("dy/dx =", tape.gradient(y, x), "  (the true 2x = 6, times -0.5)")

# %% [markdown]
# The tape shows how this works: the whole call becomes **one record**, `IdentityN` (the
# name TensorFlow gives it), whose derivative rule is our `grad_fn`. The ops inside the
# function (here just `Identity`) are recorded as usual, but the backward pass never goes
# through them: the result `y` is the output of `IdentityN`, so the walk back from `y` meets
# `IdentityN` and jumps straight to its input `v0`.
#
# Step by step: the tape seeds $dy/dy = 1$ at `y`, `IdentityN` calls `grad_fn(1.0)` and
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
# `ad.round` has no gradient (lesson 2: the result is `None`). Quantized networks still need
# to learn *through* rounding, so they pretend, for the backward pass only, that rounding is
# the identity. This is the **straight-through estimator**:

# %%
@ad.custom_gradient
def round_straight_through(x):
    def grad_fn(dy):
        return dy                    # as if the op were y = x
    return ad.round(x), grad_fn

level = ad.Variable(1.3, name="level")
with ad.GradientTape(persistent=True) as tape:
    rounded = ad.round(level * 2.0) / 2.0                    # to the nearest 0.5
    rounded_st = round_straight_through(level * 2.0) / 2.0

print("values:               ", rounded.numpy(), rounded_st.numpy())
print("gradient, ad.round:   ", tape.gradient(rounded, level))
print("gradient, st-rounding:", tape.gradient(rounded_st, level))
del tape

# %% [markdown]
# ## 4. Numerical stability: `log(1 + exp(x))`
#
# The function $f(x) = \log(1 + e^x)$ (softplus) has the well-behaved derivative
# $f'(x) = e^x / (1 + e^x) = \sigma(x)$, which is never above 1. Yet in `float32` the
# tape's gradient at $x = 100$ is `nan`: $e^{100}$ overflows to `inf`, and the chain rule
# multiplies $1 / (1 + \infty) = 0$ by $e^x = \infty$.
#
# (NumPy would print overflow warnings; `np.errstate` silences them for this cell. Values are
# rounded to 4 decimals when printed: the last digits of `exp` and `log` can differ between
# processors.)

# %%
def softplus_naive(x):
    return ad.math.log(1.0 + ad.exp(x))

big = ad.constant([0.0, 10.0, 100.0])
with np.errstate(over="ignore", invalid="ignore"):
    with ad.GradientTape() as tape:
        tape.watch(big)
        y = softplus_naive(big)
    print("value:   ", y.numpy().round(4))
    print("gradient:", tape.gradient(y, big).numpy().round(4))

# %% [markdown]
# A custom gradient computes the derivative from a formula that cannot overflow into a
# `nan`: $1 - 1/(1 + e^x)$ is 1 when $e^x$ is `inf`. It also *reuses* `e`, computed once in
# the forward pass: the closure keeps it for `grad_fn`.

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
# overflow; this is what `ad.nn.softplus` does internally.

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

# %% [markdown]
# ## 5. Caching forward values
#
# `softplus_custom` already reused `e` from the forward pass. The same idea pays off when
# the forward computes something expensive that the derivative needs again. Scaling a
# vector to unit length, $y = v / \lVert v \rVert$, has the vjp
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
# ## 6. Check a hand-written gradient
#
# A custom gradient is a promise the tape cannot verify: if `grad_fn` is wrong, every
# gradient through it is silently wrong. `ad.testing.check_grads` compares the tape's
# derivatives with finite differences, $\frac{f(x + \epsilon v) - f(x - \epsilon v)}{2
# \epsilon}$ along random directions $v$. (It works in `float64`, where finite differences
# are accurate.) It raises an `AssertionError` on a mismatch and returns quietly otherwise.

# %%
points = np.array([-30.0, -1.0, 0.5, 4.0, 30.0])
ad.testing.check_grads(softplus_stable, [points], order=1)
print("softplus_stable: first derivatives agree with finite differences")
ad.testing.check_grads(unit_vector, [np.array([3.0, -4.0, 1.0])], order=1)
print("unit_vector:     first derivatives agree with finite differences")

@ad.custom_gradient
def softplus_wrong(x):
    def grad_fn(dy):
        return dy * ad.sigmoid(-x)           # a sign mistake
    return ad.nn.softplus(x), grad_fn

try:
    ad.testing.check_grads(softplus_wrong, [points], order=1)
except AssertionError as error:
    lines = str(error).splitlines()
    print(lines[0])
    print(lines[3])

# %% [markdown]
# ## 7. Variables inside a custom gradient
#
# If the function reads a trainable Variable that is **not** one of its inputs, the tape
# must learn the gradient for that variable too. `grad_fn` then has to accept a keyword
# argument `variables` and return two things: the gradients for the inputs, and a list with
# one gradient per variable. Forgetting this is an error, raised when the function runs:

# %%
gain = ad.Variable(2.0, name="gain")

@ad.custom_gradient
def amplify(x):
    def grad_fn(dy):
        return dy * gain
    return gain * x, grad_fn

signal = ad.constant([1.0, -2.0, 0.5])
try:
    with ad.GradientTape() as tape:
        tape.watch(signal)
        amplify(signal)
except TypeError as error:
    print("TypeError:", error)

# %% [markdown]
# With `variables`:

# %%
@ad.custom_gradient
def amplify(x):
    def grad_fn(dy, variables=None):
        print("  grad_fn was given:", [v.name for v in variables])
        grad_x = dy * gain                       # d(gain * x)/dx
        grad_gain = ad.reduce_sum(dy * x)        # d(gain * x)/dgain, summed over elements
        return grad_x, [grad_gain]
    return gain * x, grad_fn

with ad.GradientTape() as tape:
    tape.watch(signal)
    out = amplify(signal)

print(tape)
grad_signal, grad_gain = tape.gradient(out, [signal, gain])
print("d out / d signal:", grad_signal.numpy())
print("d out / d gain:  ", grad_gain.numpy(), " (1 - 2 + 0.5)")

# %% [markdown]
# The `IdentityN` record now has two inputs, the argument and the variable, and its rule
# returns a gradient for each.

# %% [markdown]
# ## 8. Second derivatives and nested custom gradients
#
# If `grad_fn` is written with library ops, an outer tape records them while the inner
# tape's backward pass runs, so second derivatives work without any extra effort:

# %%
@ad.custom_gradient
def square(x):
    def grad_fn(dy):
        return dy * 2.0 * x
    return x * x, grad_fn

def first_and_second(f, at):
    x = ad.constant(at)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy_dx = inner.gradient(y, x)
    return dy_dx, outer.gradient(dy_dx, x)

print("square at 3: first %s, second %s" % first_and_second(square, 3.0))

# %% [markdown]
# You can also control the *second* backward pass by making `grad_fn` itself a custom
# gradient. The inner custom gradient defines the derivative of the backward function
# **with respect to its own inputs**. So what happens when `x` is only *captured* from the
# outer function instead of being an input? **Predict** before you run: is the second
# derivative `None` (the rule `backward_grad` says nothing about `x`), or `2.0`?

# %%
@ad.custom_gradient
def square_nested_captured(x):
    def grad_fn(dy):
        @ad.custom_gradient
        def backward(dy):                        # x is captured, not an input
            def backward_grad(ddy):
                return ddy * 2.0 * x             # d(backward)/d(dy) only
            return dy * 2.0 * x, backward_grad
        return backward(dy)
    return x * x, grad_fn

print("captured x:  first %s, second %s" % first_and_second(square_nested_captured, 3.0))

# %% [markdown]
# It is `2.0`, in TensorFlow 2 and here, and the reason is a rule about *when* a custom
# gradient is recorded as one op. A `custom_gradient` function becomes a single `IdentityN`
# record only if some recording tape watches one of its inputs (or a variable it reads).
# When no recording tape does, there is nothing to attach the rule to, so the function just
# runs its body as ordinary ops, and each tape records those ops as usual.
#
# Follow it through. The inner tape's backward pass calls `grad_fn(dy)` with a seed `dy`
# that no tape watches, so `backward(dy)` has no watched input: its body, `dy * 2.0 * x`,
# runs as plain `Mul`s, and the outer tape records them because it watches `x`. The outer
# tape then differentiates those `Mul`s: $\partial (2x\,dy)/\partial x = 2$ at $dy = 1$.
# Our `backward_grad` is never called: the number is right because the ordinary ops
# happen to compute the true derivative, not because of our rule. To be sure your rule is
# the one used, make `x` an input.
#
# Make `x` an input of the inner function and return a gradient for it as well, and the
# second derivative is computed by *our* rule, $2\,dy$:

# %%
@ad.custom_gradient
def square_nested(x):
    def grad_fn(dy):
        @ad.custom_gradient
        def backward(dy, x):
            def backward_grad(ddy):
                return ddy * 2.0 * x, ddy * 2.0 * dy    # d/d(dy), d/dx of 2 x dy
            return dy * 2.0 * x, backward_grad
        return backward(dy, x)
    return x * x, grad_fn

print("x as input:  first %s, second %s" % first_and_second(square_nested, 3.0))

# %% [markdown]
# ## 9. A new op with a registered gradient
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
# The tape does not know the derivative of `Hypot` yet. A gradient function receives `op`,
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
# ## 10. Custom gradients in saved models
#
# A saved model stores the traced computation of each `ad.function` as data (op types and
# their inputs), not Python code. A custom gradient is Python code, so it is saved only if
# you ask: `ad.saved_model.SaveOptions(experimental_custom_gradients=True)` traces `grad_fn`
# as well and stores its graph.
#
# The module below squares its input and clips the gradient's norm to 0.5 on the way back.
# At $v = 2$ the true gradient of $v^2$ would be 4; with the clip, the upstream 1 becomes
# 0.5 and the gradient is $0.5 \cdot 2v = 2$.

# %%
@ad.custom_gradient
def clip_to_half(x):
    def grad_fn(dy):
        return ad.clip_by_norm(dy, 0.5)
    return ad.identity(x), grad_fn

class ClippedSquare(ad.Module):
    @ad.function(input_signature=[ad.TensorSpec(None)])
    def __call__(self, x):
        return clip_to_half(x * x)

workdir = tempfile.mkdtemp()
with_grads = os.path.join(workdir, "with_custom_gradients")
without_grads = os.path.join(workdir, "without_custom_gradients")
ad.saved_model.save(ClippedSquare(), with_grads,
                    options=ad.saved_model.SaveOptions(experimental_custom_gradients=True))
ad.saved_model.save(ClippedSquare(), without_grads,
                    options=ad.saved_model.SaveOptions(experimental_custom_gradients=False))
version = ad.saved_model.current_version(with_grads)
print(sorted(os.listdir(version)))

# %% [markdown]
# A save writes the model into a fresh version directory, then switches a small pointer
# file (`saved_model.current`) to it in one atomic step, so a notebook loading the model
# meanwhile gets the old model or the new one, never half of each.
# `ad.saved_model.current_version(path)` is the directory the pointer names. It holds JSON
# (the graphs) and an `.npz` file (the arrays). Let's look at how the `IdentityN` node was
# saved each way:

# %%
def custom_gradient_entry(path):
    with open(os.path.join(ad.saved_model.current_version(path), "saved_model.json")) as f:
        document = json.load(f)
    trace = document["functions"]["__call__"]["traces"][0]
    node = next(n for n in trace["graph"]["nodes"] if n["op"] == "IdentityN")
    return node["custom_gradient"]

saved = custom_gradient_entry(with_grads)
print("with:    the gradient graph's ops:", [n["op"] for n in saved["graph"]["nodes"]])
print("without:", custom_gradient_entry(without_grads))

# %% [markdown]
# Saved *with* custom gradients, the gradient is a graph of ordinary ops (the inside of
# `clip_by_norm`). Saved *without*, only a generated name remains: the gradient function
# registered under that name lives in the memory of the process that saved the model.
# That is why loading it **in this process** still differentiates correctly, which can
# hide the problem:

# %%
v = ad.Variable(2.0, name="v")
loaded = ad.saved_model.load(without_grads)
with ad.GradientTape() as tape:
    out = loaded(v)
print("this process, saved without:", tape.gradient(out, v))

# %% [markdown]
# The real test is a **fresh** Python process, as when a colleague loads your model. We run
# a small script in a new interpreter for each saved model:

# %%
child_script = textwrap.dedent("""
    import sys
    import autodiff as ad

    loaded = ad.saved_model.load(sys.argv[1])
    v = ad.Variable(2.0)
    try:
        with ad.GradientTape() as tape:
            out = loaded(v)
        print("value", out.numpy(), "gradient", tape.gradient(out, v).numpy())
    except LookupError as error:
        print("LookupError:", error)
""")

for label, path in [("with", with_grads), ("without", without_grads)]:
    child = subprocess.run([sys.executable, "-c", child_script, path],
                           capture_output=True, text=True, check=True)
    print(f"fresh process, saved {label:<7}:", child.stdout.strip())

shutil.rmtree(workdir)              # the saved models are not needed any more

# %% [markdown]
# Saved with its gradient graph, the loaded model gives the clipped gradient, 2.0. Saved
# without, the fresh process has no gradient for the `IdentityN` op: `LookupError`, exactly
# the error TensorFlow raises in the same situation.

# %% [markdown]
# ## 11. Teaching moment: constants in the `custom_gradient` documentation
#
# > TensorFlow's `tf.custom_gradient` documentation shows a two-input function applied to
# > two `tf.constant`s under a persistent tape, and prints a number for the gradient with
# > respect to each constant. In TensorFlow 2 those calls return `None`: the constants were
# > never watched, so nothing was recorded (lesson 1). A custom gradient does not change
# > what a tape watches.

# %%
@ad.custom_gradient
def product(x, y):
    def grad_fn(dz):
        return dz * y, dz * x
    return x * y, grad_fn

p = ad.constant(2.0)
q = ad.constant(3.0)
with ad.GradientTape(persistent=True) as tape:
    z = product(p, q)
print("unwatched:", tape.gradient(z, p), tape.gradient(z, q))

with ad.GradientTape(persistent=True) as tape:
    tape.watch([p, q])
    z = product(p, q)
print("watched:  ", tape.gradient(z, p), tape.gradient(z, q))
del tape

# %% [markdown]
# ## Summary
#
# * `@ad.custom_gradient`: return `(y, grad_fn)`; the tape records one `IdentityN` op whose
#   rule is `grad_fn(dy)`. Use it to clip, reverse or pass gradients straight through, to
#   replace an unstable derivative, and to reuse forward values.
# * Check a hand-written gradient with `ad.testing.check_grads`.
# * A function that reads Variables needs `grad_fn(dy, variables=None)` returning
#   `(grad_inputs, grad_variables)`.
# * Written with library ops, `grad_fn` is differentiated again by outer tapes. A nested
#   custom gradient defines the derivative with respect to its *own inputs* only.
# * A new op: `ad.primitive("Name")` for the forward, `ad.RegisterGradient("Name")` for the
#   gradient, `ad.no_gradient("Name")` for none. One gradient per op type, globally.
# * Saved models keep custom gradients only with
#   `SaveOptions(experimental_custom_gradients=True)`; test loading in a fresh process.
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
# **Exercise 5.** `hypot(x, 0)` at `x = -2`: the distance from the origin on a line.

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
# **Exercise 6.** `product` (section 11) of two constants, `k = 7` watched and `j = 2` not
# watched. What is the gradient with respect to `k`?

# %% tags=["solution"]
k = ad.constant(7.0)
j = ad.constant(2.0)
with ad.GradientTape() as tape:
    tape.watch(k)
    z = product(k, j)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 2.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(z, k),
      hint="k is watched; j not being watched does not change d(k * j)/dk")

# %% [markdown]
# **Exercise 7.** The same `product`, but neither constant is watched. The gradient with
# respect to `k`?

# %% tags=["solution"]
with ad.GradientTape() as tape:
    z = product(k, j)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = None
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(z, k),
      hint="a tape records an op only when one of its inputs is watched (or a trainable "
           "Variable)")

# %% [markdown]
# **Next:** lesson 5 asks for many gradients at once: Jacobians.
