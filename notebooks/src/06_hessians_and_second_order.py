# Lesson 6 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 06
# %% [markdown]
# # Lesson 6: Hessians and second-order optimization
#
# A gradient says which way is downhill. It does not say how far to go: for that you need
# to know how the slope itself changes, the **curvature**. The second derivatives of a
# loss with respect to all pairs of parameters form a square matrix, the **Hessian**.
# With it, one step can jump straight to the bottom of a bowl; without building it, its
# products with vectors still tell you a lot, cheaply. And on the way we meet the other
# half of automatic differentiation: **forward mode**.
#
# **You will learn**
# 1. the Hessian of a layer's kernel with two nested tapes and `jacobian`, and two
#    shortcuts TensorFlow does not have (`tape.hessian`, `ad.functional.hessian`);
# 2. how to read a Hessian as an image;
# 3. a Newton step: flatten, solve, update;
# 4. Hessian-vector products, and why they cost about as much as a gradient;
# 5. forward mode (`ForwardAccumulator`), and when it beats reverse mode (count the passes).
#
# The lesson ends with *predict the gradient* exercises.

# %%
%matplotlib inline
%config InlineBackend.figure_formats = ['png']
import numpy as np

import autodiff as ad
import widgets

ad.random.set_seed(6)

# %% [markdown]
# ## 1. The Hessian is the Jacobian of the gradient
#
# Our model is one dense layer with a `tanh`, 4 inputs and 3 units, on a batch of 8
# examples. Its loss is the mean squared output (a stand-in for any loss). The kernel has
# $4 \times 3 = 12$ numbers, so the gradient has 12 entries and the Hessian
# $12 \times 12 = 144$.
#
# `tape.gradient` only differentiates a scalar, so it cannot produce a matrix. The recipe
# is: compute the gradient **while an outer tape records**, then ask the outer tape for the
# Jacobian of that gradient (lesson 5) with respect to the same kernel.

# %%
inputs = ad.random.normal([8, 4])
layer = ad.layers.Dense(3, activation="tanh")
layer(inputs)                                   # builds the kernel (4, 3) and bias (3,)

with ad.GradientTape() as outer:
    with ad.GradientTape() as inner:
        loss = ad.reduce_mean(layer(inputs) ** 2)
    grad = inner.gradient(loss, layer.kernel)   # recorded by `outer`
hess = outer.jacobian(grad, layer.kernel)

print("kernel  :", layer.kernel.shape)
print("gradient:", grad.shape)
print("Hessian :", hess.shape)

# %% [markdown]
# The Hessian's shape is the kernel's shape twice: `hess[i, j, k, l]` is
# $\partial^2 \text{loss} / \partial W_{ij} \partial W_{kl}$.
#
# > **Teaching moment: the indentation matters.** `inner.gradient` runs *inside* the
# > `with outer` block, so the outer tape records the backward pass itself: the gradient is
# > an ordinary computation made of ordinary ops, and it can be differentiated again.
# > Move that line one level out and `outer.jacobian` returns `None`: it recorded nothing
# > between the kernel and `grad`.
#
# ### Two shortcuts
#
# TensorFlow stops at the recipe above. `autodiff` wraps it twice: `tape.hessian` on a
# tape that recorded the loss, and `ad.functional.hessian`, which turns a Python function
# into its Hessian function. All three give the same numbers:

# %%
with ad.GradientTape() as tape:
    loss = ad.reduce_mean(layer(inputs) ** 2)
hess_tape = tape.hessian(loss, layer.kernel)

def loss_of_kernel(kernel):
    return ad.reduce_mean(ad.tanh(inputs @ kernel + layer.bias) ** 2)

hess_fn = ad.functional.hessian(loss_of_kernel)(layer.kernel)

print("tape.hessian       agrees:", np.allclose(hess_tape.numpy(), hess.numpy(), atol=1e-6))
print("functional.hessian agrees:", np.allclose(hess_fn.numpy(), hess.numpy(), atol=1e-6))

# %% [markdown]
# ## 2. The Hessian as a picture
#
# A $12 \times 12$ table of numbers is hard to read; an image is not. Flatten the two
# kernel axes into one (`reshape` to `[12, 12]`) and colour each entry: red for positive,
# blue for negative, white for zero. `widgets.hessian_image` does this, and with several
# sources it draws every block. Asking `tape.hessian` for `[kernel, bias]` gives the four
# blocks $H_{\text{kernel},\text{kernel}}$, $H_{\text{kernel},\text{bias}}$, and so on:

# %%
with ad.GradientTape() as tape:
    loss = ad.reduce_mean(layer(inputs) ** 2)
blocks = tape.hessian(loss, [layer.kernel, layer.bias])

print([[tuple(block.shape) for block in row] for row in blocks])
widgets.hessian_image(blocks, names=["kernel", "bias"])

# %% [markdown]
# Three things to see in the picture:
#
# * It is **symmetric** about its diagonal: $\partial^2 L / \partial a \partial b =
#   \partial^2 L / \partial b \partial a$. The check below is the numeric version.
# * It is **sparse in a pattern**: the loss is a sum of one term per unit, and unit $j$
#   reads only column $j$ of the kernel, so an entry that pairs two different units is
#   exactly zero (white). Flattening puts $W_{ij}$ at position $3i + j$, so the entries
#   that can be nonzero sit three apart.
# * Its **signs are mixed**: some directions curve up, others down. The eigenvalues say
#   how many of each.

# %%
n = 12
h_mat = ad.reshape(hess, [n, n]).numpy()
eigenvalues = np.linalg.eigvalsh(h_mat)
print("symmetric:", np.allclose(h_mat, h_mat.T, atol=1e-6))
print("eigenvalues below zero:", int(np.sum(eigenvalues < 0)), "of", n)
print("largest eigenvalue: %.3f" % eigenvalues[-1])

# %% [markdown]
# Negative eigenvalues mean the loss is not a bowl here: along some directions it curves
# downwards, as on a saddle. Keep that in mind for the next section.
#
# ## 3. A Newton step
#
# Near a point $w$, a loss looks like a quadratic bowl:
# $L(w + d) \approx L(w) + g^\top d + \tfrac12 d^\top H d$. The bottom of that bowl is at
# $d = -H^{-1} g$. Newton's method takes exactly that step. With a matrix library:
#
# 1. flatten the gradient to a column `[n, 1]` and the Hessian to a matrix `[n, n]`;
# 2. solve $(H + \varepsilon I)\,d = g$ (never invert $H$ explicitly; the small ridge
#    $\varepsilon I$ keeps the solve safe when $H$ is singular or nearly so);
# 3. reshape $d$ back to the kernel's shape and subtract it: `assign_sub`.
#
# Where the loss really *is* a quadratic, one step lands on the minimum. A linear layer
# with a squared error is such a case: a least-squares fit of 2 outputs from 4 inputs.

# %%
true_kernel = ad.constant([[1.0, -2.0], [0.5, 0.0], [0.0, 1.5], [-1.0, 1.0]])
targets = inputs @ true_kernel + 0.1 * ad.random.normal([8, 2])
linear = ad.layers.Dense(2, kernel_initializer="zeros")   # no activation: quadratic loss
linear(inputs)

def mse():
    return ad.reduce_mean((linear(inputs) - targets) ** 2)

def newton_step(variable, eps=1e-3):
    with ad.GradientTape(persistent=True) as tape:
        loss = mse()
    g = tape.gradient(loss, variable)
    h = tape.hessian(loss, variable)
    size = int(np.prod(variable.shape))
    g_vec = ad.reshape(g, [size, 1])
    h_mat = ad.reshape(h, [size, size])
    update = ad.linalg.solve(h_mat + eps * ad.eye(size), g_vec)
    variable.assign_sub(ad.reshape(update, variable.shape))

print(f"loss before        : {float(mse()):.5f}")
newton_step(linear.kernel)
print(f"after one Newton   : {float(mse()):.5f}")
newton_step(linear.kernel)
print(f"after a second one : {float(mse()):.5f}")

# %% [markdown]
# One step takes the loss down to the noise floor; the second changes almost nothing (the
# ridge made the first step a hair short). For comparison, plain gradient descent on the
# same problem from the same start (a zero kernel), with a learning rate of 0.1:

# %%
linear_gd = ad.layers.Dense(2, kernel_initializer="zeros")
linear_gd(inputs)

for step in range(1, 21):
    with ad.GradientTape() as tape:
        loss = ad.reduce_mean((linear_gd(inputs) - targets) ** 2)
    linear_gd.kernel.assign_sub(0.1 * tape.gradient(loss, linear_gd.kernel))
    if step in (1, 5, 20):
        print(f"gradient descent, loss before step {step:>2}: {float(loss):.5f}")

# %% [markdown]
# > **Teaching moment: Newton's method heads for *flat*, not for *low*.** The step solves
# > "where is the gradient of the quadratic model zero?". In a bowl that is the minimum.
# > Where the Hessian has negative eigenvalues, like the `tanh` layer's in section 2, that
# > point is a maximum along those directions, and the step may go uphill. Practical
# > second-order methods therefore change the Hessian (a larger ridge, or only its
# > positive part), and most use it only through the products of the next section.
#
# The price is the other problem. The Hessian of $n$ parameters has $n^2$ entries, and the
# solve costs about $n^3$ operations. Our 8-number kernel is trivial; a model with a
# million parameters has a Hessian of $10^{12}$ numbers: 4 terabytes in `float32`.

# %% [markdown]
# ## 4. Hessian-vector products
#
# Many second-order ideas need only $H v$ for a few vectors $v$, never $H$ itself. There is
# a way to get $Hv$ at the cost of a couple of gradients, for any $n$: differentiate the
# gradient *in the direction* $v$. `ad.functional.hvp(f, x, v)` does it:

# %%
def loss_of_linear_kernel(kernel):
    return ad.reduce_mean((inputs @ kernel + linear.bias - targets) ** 2)

v = ad.random.normal([4, 2])
hv = ad.functional.hvp(loss_of_linear_kernel, linear.kernel, v)

full = ad.functional.hessian(loss_of_linear_kernel)(linear.kernel)
hv_full = ad.reshape(ad.reshape(full, [8, 8]) @ ad.reshape(v, [8, 1]), [4, 2])
print("hvp shape:", hv.shape)
print("equals H @ v:", np.allclose(hv.numpy(), hv_full.numpy(), atol=1e-5))

# %% [markdown]
# How does it work? **Forward-over-reverse.** A forward-mode accumulator (section 5) rides
# along while the tape computes the gradient. The accumulator carries a *tangent*
# $v$ through every op, including the ops of the backward pass, so at the end the
# gradient's tangent is $\frac{d}{dt}\nabla L(w + t v) = H v$. Written out by hand:

# %%
with ad.autodiff.ForwardAccumulator(linear.kernel, v) as acc:   # outside
    with ad.GradientTape() as tape:                              # inside
        loss = mse()
    g = tape.gradient(loss, linear.kernel)     # the accumulator sees these ops too
hv_by_hand = acc.jvp(g)
print("same as functional.hvp:", np.allclose(hv_by_hand.numpy(), hv.numpy(), atol=1e-6))

# %% [markdown]
# The order matters: the accumulator must be **outside** the tape, so that it is active
# while `tape.gradient` runs.
#
# Why is it cheap? Count passes. The forward pass runs once (carrying one tangent), and the
# backward pass runs once (also carrying one tangent): a small constant times the cost of
# one gradient, whatever $n$ is. Building the whole Hessian instead takes one such product
# per column, $n$ of them.
#
# One use: the **largest eigenvalue** of the Hessian, the sharpest curvature, which limits
# the learning rate of gradient descent (steps larger than $2 / \lambda_{\max}$ diverge).
# Power iteration finds it with products alone: multiply by $H$, normalise, repeat.
# Here it is on the `tanh` layer of section 1:

# %%
u = ad.random.normal([4, 3])
for _ in range(30):
    hu = ad.functional.hvp(loss_of_kernel, layer.kernel, u)
    u = hu / ad.norm(hu)
top = float(ad.reduce_sum(u * ad.functional.hvp(loss_of_kernel, layer.kernel, u)))

print("power iteration: %.3f" % top)
print("eigvalsh       : %.3f" % eigenvalues[-1])

# %% [markdown]
# Thirty Hessian-vector products, and the $12 \times 12$ matrix was never formed.
#
# ## 5. Forward mode, and when it wins
#
# Reverse mode (every tape so far) starts from an output and sends a *cotangent* back: one
# backward pass gives one **row** of the Jacobian, $u^\top J$. Forward mode starts from an
# input and pushes a *tangent* forward alongside the computation: one pass gives one
# **column**, $J v$. `ad.autodiff.ForwardAccumulator(primals, tangents)` does it; there is
# no recording and no backward pass, and `acc.jvp(y)` reads off the tangent of `y`.

# %%
x = ad.constant([1.0, 2.0, 3.0])
with ad.autodiff.ForwardAccumulator(x, ad.constant([1.0, 0.0, 0.0])) as acc:
    y = x * x                    # dy_i/dx_j = 2 x_i when i == j
print("J v with v = e0:", acc.jvp(y))

# %% [markdown]
# The tangent $e_0$ picked the first column of the Jacobian, $\partial y / \partial x_0$.
#
# ### Count the passes
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
# (`tape.jacobian` from lesson 5 sends all 50 cotangents through **one** vectorized backward
# pass; it saves Python overhead, but the arithmetic is still that of 50 rows.)

# %% [markdown]
# ## Summary
#
# * The Hessian is the Jacobian of the gradient: nested tapes, `inner.gradient` inside the
#   outer block, then `outer.jacobian`. `tape.hessian(loss, sources)` and
#   `ad.functional.hessian(f)` do it in one call. Its shape is the source's shape twice.
# * `widgets.hessian_image` shows it: symmetric, often structured, and its eigenvalue signs
#   tell a bowl from a saddle.
# * A Newton step solves $(H + \varepsilon I) d = g$ on the flattened Hessian and subtracts
#   $d$; on a quadratic loss it lands on the minimum in one step, but it costs $n^2$ memory
#   and $n^3$ time.
# * A Hessian-vector product (`ad.functional.hvp`, or a `ForwardAccumulator` around a tape)
#   costs a few gradients and never forms $H$.
# * Forward mode gives one Jacobian column per pass, reverse mode one row: forward for tall
#   Jacobians, reverse for wide ones (and every loss).
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

# %%
from widgets.exercises import check  # None only matches None; numbers must be close


def as_matrix(blocks):
    """A nest of scalar Hessian blocks H[i][j] as a NumPy matrix."""
    return np.array([[float(b) for b in row] for row in blocks])

# %% [markdown]
# **Exercise 1.** $f(x) = x^3$ at $x = 2$. What does `tape.hessian(f, x)` return?

# %% tags=["solution"]
x = ad.Variable(2.0)
with ad.GradientTape() as tape:
    f = x ** 3

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 12.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.hessian(f, x),
      hint="the Hessian of a scalar function of one scalar is its second derivative")

# %% [markdown]
# **Exercise 2.** Two sources: $f(a, b) = a^2 b + b^3$ at $a = 1$, $b = 2$. Predict the
# $2 \times 2$ matrix of blocks $[[H_{aa}, H_{ab}], [H_{ba}, H_{bb}]]$.

# %% tags=["solution"]
a = ad.Variable(1.0)
b = ad.Variable(2.0)
with ad.GradientTape() as tape:
    f = a * a * b + b ** 3

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [[4.0, 2.0], [2.0, 12.0]]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, as_matrix(tape.hessian(f, [a, b])),
      hint="H_ab is d/db of df/da: differentiate twice, then put in a = 1, b = 2")

# %% [markdown]
# **Exercise 3.** A vector source: $f(x) = \sum_i x_i^2$ for $x$ with 3 entries. What is
# its Hessian? (A $3 \times 3$ list of lists.)

# %% tags=["solution"]
x = ad.Variable([1.0, -4.0, 0.5])
with ad.GradientTape() as tape:
    f = ad.reduce_sum(x * x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.hessian(f, x),
      hint="differentiate the sum of x_i**2 twice: which of the second derivatives are zero?")

# %% [markdown]
# **Exercise 4.** A Newton step on $f(x) = (x - 3)^2 + 1$ from $x = 0$, without a ridge.
# Where does $x$ land?

# %% tags=["solution"]
x = ad.Variable(0.0)
with ad.GradientTape(persistent=True) as tape:
    f = (x - 3.0) ** 2 + 1.0
g = tape.gradient(f, x)
h = tape.hessian(f, x)
x.assign_sub(g / h)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 3.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, x,
      hint="a Newton step is x - f'(x) / f''(x); on a parabola it lands exactly on the minimum")

# %% [markdown]
# **Exercise 5.** A Hessian-vector product: $f(x) = \sum_i x_i^3$ at $x = [1, 2]$, with
# $v = [1, 1]$. What is $Hv$?

# %% tags=["solution"]
my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [6.0, 12.0]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, ad.functional.hvp(lambda x: ad.reduce_sum(x ** 3),
                                       ad.constant([1.0, 2.0]), ad.constant([1.0, 1.0])),
      hint="the Hessian of the sum of x_i**3 is diagonal, with 6 x_i on it; multiply it by v")

# %% [markdown]
# **Exercise 6.** Forward mode: $y = 3x_0 + x_1 x_2$ at $x = [1, 2, 5]$, with the tangent
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
# **Exercise 7.** Counting passes: a function from 3 inputs to 40 outputs. How many
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
# **Next:** lesson 7 opens the tape player and the `None`-gradient explainer: the tools
# for *seeing* what a tape did, and for finding the step where a gradient went missing.
