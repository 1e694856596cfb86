# Lesson 9 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 09
# %% [markdown]
# # Lesson 9: Hessians and Newton's method
#
# A gradient says which way is downhill. It does not say how far to go: for that you need
# to know how the slope itself changes, the **curvature**. The second derivatives of a
# loss with respect to all pairs of parameters form a square matrix, the **Hessian**.
# With it, one step can jump straight to the bottom of a bowl.
#
# **You will learn**
# 1. the Hessian of a layer's kernel with two nested tapes and `jacobian`, and two
#    shortcuts TensorFlow does not have (`tape.hessian`, `ad.functional.hessian`);
# 2. how to read a Hessian as an image;
# 3. a Newton step: flatten, solve, update; and a picture of Newton against gradient
#    descent on a curved valley.
#
# Lesson 10 continues with what you can do *without* building the Hessian. Cells marked
# **Predict** have a blank for your guess and a check below it.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 3 |
# | 1. The Hessian is the Jacobian of the gradient | 8 |
# | 2. The Hessian as a picture | 5 |
# | 3. A Newton step | 10 |
# | summary and the words of the lesson | 3 |
# | exercises 1 to 4 | 12 |
# | in all | 41 |

# %%
%matplotlib inline
%config InlineBackend.figure_formats = ['png']
import matplotlib.pyplot as plt
import numpy as np

import autodiff as ad
import widgets
from widgets.exercises import check  # None only matches None; numbers must be close

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
# Jacobian of that gradient (lesson 8) with respect to the same kernel.

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
# **The indentation matters.** `inner.gradient` runs *inside* the `with outer` block, so
# the outer tape records the backward pass itself: the gradient is an ordinary computation
# made of ordinary ops, and it can be differentiated again.
#
# **Predict.** Move `inner.gradient` one level out, after the `with outer` block. What does
# `outer.jacobian(grad, layer.kernel)` return: a `(4, 3, 4, 3)` tensor, zeros, or `None`?

# %% tags=["solution"]
with ad.GradientTape() as outer:
    with ad.GradientTape() as inner:
        loss = ad.reduce_mean(layer(inputs) ** 2)
grad_outside = inner.gradient(loss, layer.kernel)   # outer has stopped recording
hess_outside = outer.jacobian(grad_outside, layer.kernel)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = None
### END SOLUTION

# %% tags=["check"]
check(my_prediction, hess_outside,
      hint="did the outer tape record any op between the kernel and grad_outside?")

# %% [markdown]
# `None`: the outer tape recorded the forward pass, but not the ops that computed the
# gradient, so for it nothing connects the kernel to `grad_outside`.
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
# ### Newton and gradient descent on a curved valley
#
# The least-squares loss was a perfect bowl. Most losses are not. Here is a two-parameter
# loss with a curved, narrow valley (a scaled Rosenbrock function),
# $L(a, b) = (a - 1)^2 + 10\,(b - a^2)^2$, minimum at $(1, 1)$. Both methods start at
# $(-1, 1.5)$: six Newton steps (no ridge) against a hundred steps of gradient descent.

# %%
def valley(p):
    a, b = p[0], p[1]
    return (a - 1.0) ** 2 + 10.0 * (b - a * a) ** 2

def newton_path(start, steps):
    p = ad.Variable(start)
    path = [p.numpy().copy()]
    for _ in range(steps):
        with ad.GradientTape(persistent=True) as tape:
            f = valley(p)
        g, h = tape.gradient(f, p), tape.hessian(f, p)           # (2,) and (2, 2)
        p.assign_sub(ad.reshape(ad.linalg.solve(h, ad.reshape(g, [2, 1])), [2]))
        path.append(p.numpy().copy())
    return np.array(path)

def descent_path(start, steps, learning_rate):
    p = ad.Variable(start)
    path = [p.numpy().copy()]
    for _ in range(steps):
        with ad.GradientTape() as tape:
            f = valley(p)
        p.assign_sub(learning_rate * tape.gradient(f, p))
        path.append(p.numpy().copy())
    return np.array(path)

newton = newton_path([-1.0, 1.5], 6)
descent = descent_path([-1.0, 1.5], 100, 0.02)

grid_a, grid_b = np.meshgrid(np.linspace(-1.6, 1.6, 200), np.linspace(-1.6, 2.0, 200))
surface = (grid_a - 1.0) ** 2 + 10.0 * (grid_b - grid_a ** 2) ** 2
fig, ax = plt.subplots(figsize=(6.5, 5))
ax.contour(grid_a, grid_b, surface, levels=np.geomspace(0.05, 200, 14), cmap="Greys", linewidths=0.8)
ax.plot(descent[:, 0], descent[:, 1], ".-", color="tab:blue", ms=3, label="gradient descent, 100 steps")
ax.plot(newton[:, 0], newton[:, 1], "o-", color="tab:red", label="Newton, 6 steps")
for i, (a, b) in enumerate(newton):
    ax.annotate(str(i), (a, b), textcoords="offset points", xytext=(6, 4), color="tab:red")
ax.plot([1.0], [1.0], "k*", ms=14, label="minimum (1, 1)")
ax.set(xlabel="a", ylabel="b", title="Newton vs gradient descent on a curved valley")
ax.legend(loc="lower right")
plt.show()

print("Newton, loss at each step:", [round(float(valley(ad.constant(p))), 4) for p in newton])
print(f"gradient descent, loss after 100 steps: {float(valley(ad.constant(descent[-1]))):.4f}")

# %% [markdown]
# Gradient descent crawls: it follows the steepest direction, which points across the
# narrow valley, not along it, and its learning rate must stay small enough for the
# steepest direction. Newton's steps rescale every direction by its curvature, so it
# arrives in six steps, but look at the path: steps 1 to 4 jump around and the loss goes
# *up* twice (the numbers above). Far from the minimum the quadratic model is a poor guide.
#
# > **Teaching moment: Newton's method heads for *flat*, not for *low*.** The step solves
# > "where is the gradient of the quadratic model zero?". In a bowl that is the minimum.
# > Where the Hessian has negative eigenvalues, like the `tanh` layer's in section 2, that
# > point is a maximum along those directions, and the step may go uphill. Practical
# > second-order methods therefore change the Hessian (a larger ridge, or only its
# > positive part), and most use it only through its products with vectors (lesson 10).
#
# The price is the other problem. The Hessian of $n$ parameters has $n^2$ entries, and the
# solve costs about $n^3$ operations. Our 8-number kernel is trivial; a model with a
# million parameters has a Hessian of $10^{12}$ numbers: 4 terabytes in `float32`.

# %% [markdown]
# ## Words of this lesson
#
# | word | what it means here |
# |---|---|
# | **Hessian** | the matrix of second derivatives $\partial^2 L / \partial w_i \partial w_j$: the Jacobian of the gradient |
# | **curvature** | how fast the slope changes along a direction; the Hessian's eigenvalues are the curvatures along its eigenvectors |
# | **saddle** | a point where the loss curves up along some directions and down along others (eigenvalues of both signs) |
# | **Newton step** | the step $d = -H^{-1} g$ to the flat point of the local quadratic model |
# | **ridge** | the small $\varepsilon I$ added to $H$ before solving, so the solve stays safe |
#
# ## Summary
#
# * The Hessian is the Jacobian of the gradient: nested tapes, `inner.gradient` inside the
#   outer block (outside it, the outer tape sees no path: `None`), then `outer.jacobian`.
#   `tape.hessian(loss, sources)` and `ad.functional.hessian(f)` do it in one call. Its
#   shape is the source's shape twice.
# * `widgets.hessian_image` shows it: symmetric, often structured, and its eigenvalue signs
#   tell a bowl from a saddle.
# * A Newton step solves $(H + \varepsilon I) d = g$ on the flattened Hessian and subtracts
#   $d$; on a quadratic loss it lands on the minimum in one step, on a curved valley it
#   takes a few (not always downhill), where gradient descent takes hundreds. It costs
#   $n^2$ memory and $n^3$ time.
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
      hint="a Newton step is x - f'(x) / f''(x): put in the starting point")

# %% [markdown]
# **Next:** lesson 10 gets curvature without the Hessian: Hessian-vector products, and
# forward mode.
