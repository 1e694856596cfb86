# Lesson 10 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 10
# %% [markdown]
# # Lesson 10: Hessian-vector products and forward mode
#
# Lesson 9 built whole Hessians. For a model with $n$ parameters that is $n^2$ numbers:
# fine for 12, impossible for a million. This lesson gets curvature information without
# ever forming the matrix, and on the way meets the other half of automatic
# differentiation: **forward mode**.
#
# **You will learn**
# 1. Hessian-vector products with two tapes, and the sharpest curvature of a loss by power
#    iteration, which bounds the learning rate of gradient descent;
# 2. forward mode: tangents pushed forward with `ForwardAccumulator`, and built from scratch
#    with dual numbers;
# 3. the cheaper Hessian-vector product, forward-over-reverse, and how a zero tangent can
#    still turn into NaN;
# 4. when forward mode beats reverse mode (count the passes).
#
# Cells marked **Predict** have a blank for your guess and a check below it.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 5 |
# | 1. Hessian-vector products with two tapes | 7 |
# | 2. Forward mode | 8 |
# | 3. Forward-over-reverse: the cheaper product | 11 |
# | 4. Count the passes | 4 |
# | summary and the words of the lesson | 3 |
# | exercises 1 to 3 | 9 |
# | in all | 47 |
#
# The appendix is reading for after the hour.

# %%
import numpy as np

import autodiff as ad
from widgets.exercises import check  # None only matches None; numbers must be close

ad.random.set_seed(8)

# %% [markdown]
# Two models, as in lesson 9: a `tanh` layer (4 inputs, 3 units) whose loss is the mean
# squared output, and a linear least-squares fit of 2 outputs from 4 inputs, whose loss is
# a quadratic function of its kernel. `eigvalsh` of the `tanh` loss's full $12 \times 12$
# Hessian gives the number we will later find without the matrix.

# %%
inputs = ad.random.normal([8, 4])
layer = ad.layers.Dense(3, activation="tanh")
layer(inputs)

def loss_of_kernel(kernel):
    return ad.reduce_mean(ad.tanh(inputs @ kernel + layer.bias) ** 2)

hessian_12 = ad.reshape(ad.functional.hessian(loss_of_kernel)(layer.kernel), [12, 12])
top_eigenvalue = np.linalg.eigvalsh(hessian_12.numpy())[-1]

true_kernel = ad.constant([[1.0, -2.0], [0.5, 0.0], [0.0, 1.5], [-1.0, 1.0]])
targets = inputs @ true_kernel + 0.1 * ad.random.normal([8, 2])
linear = ad.layers.Dense(2, kernel_initializer="zeros")
linear(inputs)

def mse():
    return ad.reduce_mean((linear(inputs) - targets) ** 2)

def loss_of_linear_kernel(kernel):
    return ad.reduce_mean((inputs @ kernel + linear.bias - targets) ** 2)

print("largest eigenvalue of the tanh loss's Hessian: %.3f" % top_eigenvalue)

# %% [markdown]
# ## 1. Hessian-vector products with two tapes
#
# Many second-order ideas need only $H v$ for a few vectors $v$, never $H$ itself. Two
# tapes give it at the cost of a couple of gradients, for any $n$. The dot product
# $g \cdot v$ of the gradient with a **fixed** vector $v$ is a scalar, and its gradient is
# $\nabla (g \cdot v) = H v$ (differentiate $\sum_i v_i\, \partial L / \partial w_i$ with
# respect to $w_j$). So: compute $g$ while an outer tape records (lesson 4), form
# $g \cdot v$, and ask the outer tape for its gradient. That is one more backward pass,
# not $n$ of them. The recipe is called **reverse-over-reverse**.

# %%
v = ad.random.normal([4, 2])
with ad.GradientTape() as outer:
    with ad.GradientTape() as inner:
        loss = mse()
    g = inner.gradient(loss, linear.kernel)
    g_dot_v = ad.reduce_sum(g * v)                 # a scalar
hv_reverse = outer.gradient(g_dot_v, linear.kernel)

full = ad.functional.hessian(loss_of_linear_kernel)(linear.kernel)
hv_full = ad.reshape(ad.reshape(full, [8, 8]) @ ad.reshape(v, [8, 1]), [4, 2])
print("hvp shape:", hv_reverse.shape)
print("equals H @ v:", np.allclose(hv_reverse.numpy(), hv_full.numpy(), atol=1e-5))

# %% [markdown]
# `ad.functional.hvp(f, x, v)` computes the same product in one call (section 3 shows the
# cheaper way it works).
#
# ### The sharpest curvature, and the learning rate
#
# The largest eigenvalue $\lambda_{\max}$ of the Hessian is the sharpest curvature of the
# loss. **Power iteration** finds it with products alone: multiply by $H$, normalise,
# repeat. Here it is on the `tanh` layer:

# %%
u = ad.random.normal([4, 3])
for _ in range(30):
    hu = ad.functional.hvp(loss_of_kernel, layer.kernel, u)
    u = hu / ad.norm(hu)
top = float(ad.reduce_sum(u * ad.functional.hvp(loss_of_kernel, layer.kernel, u)))

print("power iteration: %.3f" % top)
print("eigvalsh       : %.3f" % top_eigenvalue)

# %% [markdown]
# Thirty Hessian-vector products, and the $12 \times 12$ matrix was never formed.
#
# Why care? Take a **quadratic** loss, like the linear model's. One step of gradient descent
# with learning rate $\eta$ multiplies the distance to the minimum along each eigenvector of
# $H$ by $1 - \eta \lambda$. Along the top eigenvector that factor is below $-1$ as soon as
# $\eta > 2 / \lambda_{\max}$: from then on every step overshoots further than the last,
# and gradient descent diverges (unless it starts with no distance at all along that
# direction). For other losses the same number, taken near a minimum, is a guide rather than
# a law. The linear model on both sides of $2 / \lambda_{\max}$:

# %%
w = ad.random.normal([4, 2])
for _ in range(30):
    hw = ad.functional.hvp(loss_of_linear_kernel, linear.kernel, w)
    w = hw / ad.norm(hw)
lambda_max = float(ad.reduce_sum(w * ad.functional.hvp(loss_of_linear_kernel, linear.kernel, w)))
print(f"lambda_max = {lambda_max:.3f}, so 2 / lambda_max = {2 / lambda_max:.3f}")

for factor in (0.9, 1.1):
    learning_rate = factor * 2 / lambda_max
    kernel = ad.Variable(ad.zeros([4, 2]))
    for step in range(40):
        with ad.GradientTape() as tape:
            loss = loss_of_linear_kernel(kernel)
        kernel.assign_sub(learning_rate * tape.gradient(loss, kernel))
    print(f"learning rate {factor} * 2 / lambda_max: loss after 40 steps {float(loss):.3g}")

# %% [markdown]
# ## 2. Forward mode
#
# Reverse mode (every tape so far) starts from an output and sends a cotangent back: one
# backward pass gives one **row** of the Jacobian, $u^\top J$ (lesson 8). Forward mode starts
# from an input and pushes a **tangent** forward alongside the computation: a direction
# $v$ in which the inputs move, carried through every op as "how fast this value moves
# when the inputs move along $v$". One pass gives one **column** of the Jacobian, $J v$: a
# *Jacobian-vector product*, or **JVP**.
#
# `ad.autodiff.ForwardAccumulator(primals, tangents)` does it: the *primals* are the
# inputs (the point where we differentiate), the *tangents* their directions. There is no
# recording and no backward pass; `acc.jvp(y)` reads off the tangent of `y`.
#
# **Predict.** $y = x \cdot x$ elementwise at $x = [1, 2, 3]$, with the tangent
# $v = e_0 = [1, 0, 0]$. What is `acc.jvp(y)`? (A list of three numbers.)

# %% tags=["solution"]
x = ad.constant([1.0, 2.0, 3.0])
with ad.autodiff.ForwardAccumulator(x, ad.constant([1.0, 0.0, 0.0])) as acc:
    y = x * x

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [2.0, 0.0, 0.0]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, acc.jvp(y),
      hint="which entries of y move when only x_0 moves, and how fast?")

# %% [markdown]
# The tangent $e_0$ picked the first column of the Jacobian, $\partial y / \partial x_0$.
#
# ### Forward mode from scratch: dual numbers
#
# Forward mode needs no tape at all. Carry each value together with its tangent, a pair
# $(a, \dot a)$ called a **dual number**, and give every operation a rule for the pair:
#
# * $(a, \dot a) + (b, \dot b) = (a + b,\; \dot a + \dot b)$
# * $(a, \dot a) \cdot (b, \dot b) = (ab,\; \dot a b + a \dot b)$ (the product rule)
# * $\sin (a, \dot a) = (\sin a,\; \cos a \cdot \dot a)$ (the chain rule)
#
# Seed the input with tangent 1, run the function, and read the derivative off the
# result. (Lesson 2 built the reverse-mode counterpart for numbers; lesson 12 builds a tape
# the way this library does.)

# %%
import math

class Dual:
    """A value and its tangent; the arithmetic carries both along."""

    def __init__(self, value, tangent=0.0):
        self.value, self.tangent = value, tangent

    def __add__(self, other):
        other = other if isinstance(other, Dual) else Dual(other)
        return Dual(self.value + other.value, self.tangent + other.tangent)

    def __mul__(self, other):
        other = other if isinstance(other, Dual) else Dual(other)
        return Dual(self.value * other.value,
                    self.tangent * other.value + self.value * other.tangent)

    __radd__, __rmul__ = __add__, __mul__

def dual_sin(d):
    return Dual(math.sin(d.value), math.cos(d.value) * d.tangent)

def f(x):
    return x * x * 3.0 + dual_sin(x)          # f'(x) = 6x + cos x

out = f(Dual(2.0, 1.0))                        # seed: dx/dx = 1
print(f"f(2) = {out.value:.4f}, f'(2) = {out.tangent:.4f}")
print(f"6 * 2 + cos(2) = {6 * 2 + math.cos(2.0):.4f}")

# %% [markdown]
# One pass, no recording, no backward walk: the derivative arrives with the value.
# `ForwardAccumulator` does exactly this, with tensors for values and tangents and a JVP
# rule per op (`autodiff/forward.py`).
#
# ## 3. Forward-over-reverse: the cheaper product
#
# Now combine the two modes. A `ForwardAccumulator` **around** a tape carries a tangent $v$
# through every op, including the ops of the backward pass that `tape.gradient` runs, so at
# the end the gradient's tangent is $\frac{d}{dt}\nabla L(w + t v) = H v$:

# %%
with ad.autodiff.ForwardAccumulator(linear.kernel, v) as acc:   # outside
    with ad.GradientTape() as tape:                              # inside
        loss = mse()
    g = tape.gradient(loss, linear.kernel)     # the accumulator sees these ops too
hv_forward = acc.jvp(g)
print("same as reverse-over-reverse:", np.allclose(hv_forward.numpy(), hv_reverse.numpy(), atol=1e-5))

# %% [markdown]
# The order matters: the accumulator must be **outside** the tape, so that it is active
# while `tape.gradient` runs.
#
# Both recipes cost a small multiple of one gradient. The difference is memory:
# reverse-over-reverse makes the outer tape **record the whole backward pass** (and keep its
# intermediate values) to walk it back once more, while forward-over-reverse carries one
# tangent alongside and records nothing extra. That is why `ad.functional.hvp` uses the
# accumulator.
#
# ### Zero tangents
#
# Many inputs of the ops have no tangent of their own: the data, the bias, the backward
# pass's seed 1, the exponent 2 of a square. The accumulator gives each of them a tangent of
# **zeros**, and the JVP rules multiply those zeros through. Multiplying by zero changes
# nothing, one would think.
#
# **Predict.** Can a zero tangent really change an answer? Take
# $L(k) = \sum_i e^{b_i} k_i^2$ with `b = [1, 100, 2]` in float32, where $e^{100}$
# overflows to `inf`, at $k = [1, 2, 3]$ along $v = [1, 1, 1]$. On paper
# $Hv = 2 e^{b} v$, so element 1 "should" be `inf`. What does the engine give for element
# 1: `np.inf` or `np.nan`?

# %% tags=["solution"]
b = ad.Variable([1.0, 100.0, 2.0])

def overflowing_loss(k):
    return ad.reduce_sum(ad.exp(b) * k * k)

k, along = ad.constant([1.0, 2.0, 3.0]), ad.constant([1.0, 1.0, 1.0])
with np.errstate(over="ignore", invalid="ignore"):
    hv_eager = ad.functional.hvp(overflowing_loss, k, along)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = np.nan
### END SOLUTION

# %% tags=["check"]
check(my_prediction, hv_eager[1],
      hint="the gradient's seed has a tangent of zeros, and it meets exp(100) * k")

# %% tags=["reveal"]
print("Hv:", hv_eager.numpy().round(4))

# %% [markdown]
# NaN: inside the backward pass the seed's zero tangent is multiplied by
# $e^{100} k_1 = \infty$, and $0 \cdot \infty$ is NaN. TensorFlow gives the same NaN (the
# project's conformance tests run this code on TensorFlow). When an HVP turns into NaN where
# you expected a large number, look for an overflow.
#
# A compiler can save the work of multiplying zeros. Compiled into a program
# (`ad.function(..., jit_compile=True)`; lesson 11 reads a compiled gradient), the `tanh`
# layer's HVP comes out twice: a fast program that skips every zero tangent, and an exact
# one that multiplies them through. A few lines of each (the appendix prints both whole):

# %%
kernel = ad.constant(layer.kernel.numpy())

def hvp_of_tanh_loss(kernel, direction):
    return ad.functional.hvp(loss_of_kernel, kernel, direction)

compiled_hvp = ad.function(hvp_of_tanh_loss, jit_compile=True)
print("same as eager:", np.allclose(compiled_hvp(kernel, u).numpy(),
                                    hvp_of_tanh_loss(kernel, u).numpy(), atol=1e-6))

# %% tags=["nbval-ignore-output"]
program = compiled_hvp.experimental_get_compiler_ir(kernel, u)(stage="python")
fast, exact = program.split("def hvp_of_tanh_loss_exact")
print("the fast program's checks:")
for line in fast.splitlines():
    if "isfinite" in line:
        print("   ", line.split("#")[0].strip())
print("the exact program's zero tangents:")
for line in exact.splitlines():
    if "ZerosLike" in line:
        print("   ", line.strip("# ").split(" is constant")[0])

# %% [markdown]
# Skipping a zero is safe only while what it would have met is finite, as the prediction
# showed. So the fast program checks those values first (`v · v`, a sum of squares, is
# finite only if every element of `v` is); if one is inf or NaN it gives up, and the exact
# program runs instead. That is why the compiled HVP of the overflowing loss is NaN too:

# %%
with np.errstate(over="ignore", invalid="ignore"):
    hv_compiled = ad.function(lambda k, v: ad.functional.hvp(overflowing_loss, k, v),
                              jit_compile=True)(k, along)
print("eager   :", hv_eager.numpy().round(4))
print("compiled:", hv_compiled.numpy().round(4))

# %% [markdown]
# ## 4. Count the passes
#
# Take a **tall** Jacobian: 2 parameters (an amplitude and a frequency) and 50 outputs (a
# sampled wave). The full Jacobian is $50 \times 2$.
#
# * Forward mode needs one pass per **input**: 2 passes, with tangents $e_0$ and $e_1$.
# * Reverse mode needs one backward pass per **output**: 50 passes, with cotangents
#   $e_0, \dots, e_{49}$.
#
# The cell below builds it both ways and counts.

# %%
times = ad.linspace(0.0, 1.0, 50)

def wave(params):
    return params[0] * ad.sin(params[1] * times)

params = ad.constant([2.0, 3.0])

forward_passes, columns = 0, []
for j in range(2):
    tangent = ad.constant(np.eye(2, dtype="float32")[j])      # e_j
    with ad.autodiff.ForwardAccumulator(params, tangent) as acc:
        out = wave(params)
    columns.append(acc.jvp(out))
    forward_passes += 1
jac_forward = ad.stack(columns, axis=1)

backward_passes, rows = 0, []
with ad.GradientTape(persistent=True) as tape:
    tape.watch(params)
    out = wave(params)
for i in range(50):
    cotangent = ad.constant(np.eye(50, dtype="float32")[i])
    rows.append(tape.gradient(out, params, output_gradients=cotangent))
    backward_passes += 1
jac_reverse = ad.stack(rows, axis=0)
del tape

print("Jacobian shape :", jac_forward.shape)
print("forward passes :", forward_passes)
print("backward passes:", backward_passes)
print("same Jacobian  :", np.allclose(jac_forward.numpy(), jac_reverse.numpy(), atol=1e-5))

# %% [markdown]
# Same matrix, 2 passes against 50. The rule of thumb: a Jacobian with $m$ outputs and
# $n$ inputs costs $n$ forward passes or $m$ backward passes, so
#
# | shape of the Jacobian | example | cheaper mode |
# |---|---|---|
# | **tall** ($m \gg n$): few inputs, many outputs | a curve of a few parameters, sensitivities of a simulation | forward |
# | **wide** ($m \ll n$): many inputs, few outputs | a loss of a million weights ($m = 1$) | reverse |
#
# Training is the wide case in the extreme: one loss, millions of weights. That is why
# deep learning runs on reverse mode, and why a tape exists at all.
#
# (`tape.jacobian` from lesson 8 sends all 50 cotangents through **one** vectorized backward
# pass; it saves Python overhead, but the arithmetic is still that of 50 rows.)

# %% [markdown]
# ## Words of this lesson
#
# | word | what it means here |
# |---|---|
# | **HVP** | Hessian-vector product $Hv$, computed without forming $H$ |
# | **power iteration** | multiply by $H$, normalise, repeat: the vector turns towards the top eigenvector |
# | **forward mode** | differentiation that pushes tangents forward with the values, with no tape |
# | **primal** | a value the function is differentiated at (the point) |
# | **tangent** | the direction a value moves in, carried forward beside it |
# | **JVP** | Jacobian-vector product $Jv$: the tangent of an output; one Jacobian column per pass |
# | **accumulator** | `ForwardAccumulator`, which carries the tangents while its block runs |
# | **dual number** | a pair (value, tangent) with arithmetic that carries both |
#
# ## Summary
#
# * A Hessian-vector product costs a few gradients and never forms $H$:
#   reverse-over-reverse (the gradient of $g \cdot v$, which records the backward pass) or
#   forward-over-reverse (`ad.functional.hvp`, or a `ForwardAccumulator` **around** a tape).
# * Power iteration with products finds the sharpest curvature $\lambda_{\max}$; on a
#   quadratic loss, gradient descent with a learning rate above $2 / \lambda_{\max}$
#   diverges.
# * Forward mode carries a tangent with each value (dual numbers) and gives one Jacobian
#   column per pass; reverse mode gives one row. Forward for tall Jacobians, reverse for
#   wide ones (and every loss).
# * Zero tangents are multiplied through; where one meets an `inf`, the product is NaN.
#
# ## Exercises: predict the gradient
#
# For each exercise, work it out on paper first, then type your answer into
# `my_prediction` and run the cell.

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
# **Exercise 1.** A Hessian-vector product: $f(x) = \sum_i x_i^3$ at $x = [1, 2]$, with
# $v = [1, 1]$. What is $Hv$?

# %% tags=["solution"]
my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [6.0, 12.0]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, ad.functional.hvp(lambda x: ad.reduce_sum(x ** 3),
                                       ad.constant([1.0, 2.0]), ad.constant([1.0, 1.0])),
      hint="write out the Hessian of the sum of x_i**3 (which entries are zero?), then "
           "multiply it by v")

# %% [markdown]
# **Exercise 2.** Forward mode: $y = 3x_0 + x_1 x_2$ at $x = [1, 2, 5]$, with the tangent
# $v = [0, 1, 0]$. What is `acc.jvp(y)`?

# %% tags=["solution"]
x = ad.constant([1.0, 2.0, 5.0])
with ad.autodiff.ForwardAccumulator(x, ad.constant([0.0, 1.0, 0.0])) as acc:
    y = 3.0 * x[0] + x[1] * x[2]

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 5.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, acc.jvp(y),
      hint="a jvp is a directional derivative: v = [0, 1, 0] picks dy/dx_1")

# %% [markdown]
# **Exercise 3.** Counting passes: a function from 3 inputs to 40 outputs. How many
# forward-mode passes does its full Jacobian take? (The cell counts them.)

# %% tags=["solution"]
def spread(x):
    return ad.linspace(1.0, 40.0, 40) * ad.reduce_sum(x * x)     # 40 outputs

x = ad.constant([0.5, -1.0, 2.0])
passes = 0
for tangent in np.eye(3, dtype="float32"):
    with ad.autodiff.ForwardAccumulator(x, ad.constant(tangent)) as acc:
        out = spread(x)
    acc.jvp(out)
    passes += 1

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 3
### END SOLUTION

# %% tags=["check"]
check(my_prediction, passes,
      hint="forward mode gives one Jacobian column per pass: how many columns are there?")

# %% [markdown]
# **Next:** lesson 11 opens the tape player and the `None`-gradient explainer: the tools
# for *seeing* what a tape did, and for finding the step where a gradient went missing.

# %% [markdown]
# ## Appendix (optional, outside the hour): the whole compiled program
#
# For those who want to read what a compiler writes: the Hessian-vector product of
# section 3, both programs in full.

# %% tags=["nbval-ignore-output"]
print(program)

# %% [markdown]
# Read the first function top down. The forward pass (`c0 @ kernel`, with `c0` the
# `inputs`, the bias, `xp.tanh`) comes with its tangent beside it: `c0 @ direction` times
# `1 - tanh**2`, the chain rule pushed forward. After the "backward pass" comment, the
# gradient's steps and their tangents' steps alternate, down to `c0.T @ ...`: the HVP.
#
# Then compare it with the second function, the **exact** program. It has more lines: the
# zero tangents of section 3 are constants named `k...` (a `ZerosLike` of the `inputs`, of
# the bias, of the seed's chain, of the exponent), and every line that multiplies one of
# them through is there too, down to a whole `log` branch of the power rule multiplied by
# the exponent's zero tangent. The first program has none of those lines. Instead it has the
# `if not isfinite(xp.vdot(...)): return None` checks of section 3, one before the first
# use of each value that a skipped zero would have met.
