# Lesson 8 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 08
# %% [markdown]
# # Lesson 8: Jacobians
#
# `tape.gradient` answers one question: how does the **sum** of the target change when a
# source changes? When the target is a vector, that sum throws information away. The
# **Jacobian** keeps it: one row per target element, one column per source element, entry
# $(i, j) = \partial y_i / \partial x_j$.
#
# **You will learn**
# 1. `tape.jacobian` for a scalar source and for a tensor source, and the rule for its shape;
# 2. how a Jacobian relates to the gradient (sum over the target's axes);
# 3. why the whole Jacobian costs one backward pass, and how to trade speed for memory;
# 4. per-example Jacobians with `tape.batch_jacobian`, and the one case where they are
#    silently wrong (BatchNormalization in training mode);
# 5. to read Jacobians as pictures.
#
# The lesson ends with *predict the shape and the gradient* exercises.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 3 |
# | 1. What the gradient loses | 2 |
# | 2. A scalar source: a curve and its derivative | 3 |
# | 3. A tensor source: the kernel of a layer | 7 |
# | 4. One backward pass for the whole Jacobian | 7 |
# | 5. Batch Jacobians | 5 |
# | 6. Teaching moment: BatchNormalization in training mode | 8 |
# | summary and the words of the lesson | 3 |
# | exercises 1 to 4 | 15 |
# | in all | 53 |
#
# Exercises 5 to 7 are homework.

# %%
%matplotlib inline
%config InlineBackend.figure_formats = ['png']
import matplotlib.pyplot as plt
import numpy as np

import autodiff as ad
import widgets
from widgets.exercises import check  # None only matches None; numbers must be close

# %% [markdown]
# ## 1. What the gradient loses
#
# A running total, $y = \text{cumsum}(x)$: $y_0 = x_0$, $y_1 = x_0 + x_1$, $y_2 = x_0 + x_1
# + x_2$. Each output depends on a different set of inputs. The gradient adds the three
# outputs up before differentiating, so all it can say is "$x_0$ appears in three outputs,
# $x_2$ in one":

# %%
x = ad.constant([1.0, 2.0, 3.0])
with ad.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = ad.cumsum(x)

print("gradient:", tape.gradient(y, x).numpy())
print("jacobian:")
print(tape.jacobian(y, x).numpy())

# %% [markdown]
# The Jacobian is lower triangular: row $i$ says which inputs output $i$ depends on. Its
# column sums are the gradient. Keep that in mind; it is the general rule (section 3).
#
# ## 2. A scalar source: a curve and its derivative
#
# Slide a bump $y = e^{-(x - s)^2}$ along the $x$ axis by a shift $s$. The target is a
# whole curve (201 points), the source a single number. The Jacobian has **the shape of the
# target**: entry $i$ is how fast point $i$ of the curve moves when $s$ grows.

# %%
xs = ad.linspace(-4.0, 4.0, 201)
shift = ad.Variable(0.0, name="shift")

with ad.GradientTape() as tape:
    curve = ad.exp(-(xs - shift) ** 2)

dcurve_dshift = tape.jacobian(curve, shift)
print("curve:", curve.shape, "  source:", shift.shape, "  jacobian:", dcurve_dshift.shape)

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(xs.numpy(), curve.numpy(), label="curve, s = 0")
ax.plot(xs.numpy(), dcurve_dshift.numpy(), label="d curve / d s (jacobian)")
ax.plot(xs.numpy(), 2 * xs.numpy() * np.exp(-xs.numpy() ** 2), "k:", label="2x exp(-x^2), by hand")
ax.set_xlabel("x")
ax.legend()
plt.show()

# %% [markdown]
# Moving the bump to the right raises the points on its right flank and lowers those on its
# left flank: the Jacobian is positive for $x > 0$ and negative for $x < 0$. The gradient
# would have summed those 201 numbers into one (about 0, by symmetry).
#
# ## 3. A tensor source: the kernel of a layer
#
# A `Dense` layer maps a batch of inputs `(4, 3)` to outputs `(4, 5)` with a kernel `(3, 5)`.
# The Jacobian of the output with respect to the kernel pairs every output element with
# every kernel element:
#
# > **Shape rule:** `tape.jacobian(target, source).shape == target.shape + source.shape`.

# %%
ad.random.set_seed(2)
x = ad.random.normal([4, 3])
layer = ad.layers.Dense(5, activation="tanh")

with ad.GradientTape(persistent=True) as tape:
    y = layer(x)

j = tape.jacobian(y, layer.kernel)
print("y:", y.shape, "  kernel:", layer.kernel.shape, "  jacobian:", j.shape)

# %% [markdown]
# Four axes are hard to imagine. `widgets.jacobian_image` flattens the target axes into rows
# (4 × 5 = 20) and the source axes into columns (3 × 5 = 15), and colours each entry: red
# positive, blue negative, white exactly zero.

# %%
widgets.jacobian_image(j, title="d layer(x) / d kernel: 20 outputs x 15 kernel entries")

# %% [markdown]
# Most of the picture is white, and the pattern has a reason: output `y[b, u]` uses only
# column `u` of the kernel, so `j[b, u, i, v]` is zero unless `u == v`. Each row has just
# three non-zero entries, $\tanh'(z_{bu})\, x_{bi}$ for $i = 0, 1, 2$.
#
# Summing the Jacobian over the **target's** axes adds up every output's sensitivity: that
# is exactly the gradient of the sum, which `tape.gradient` computes directly.

# %%
g = tape.gradient(y, layer.kernel)
j_sum = ad.reduce_sum(j, axis=[0, 1])
print("gradient:", g.shape, "  jacobian summed over the target axes:", j_sum.shape)
print("equal:", np.allclose(g.numpy(), j_sum.numpy(), atol=1e-6))

different_columns = [j[:, u, :, v] for u in range(5) for v in range(5) if u != v]
print("j[b, u, i, v] == 0 whenever u != v:", all(np.all(block.numpy() == 0) for block in different_columns))
del tape

# %% [markdown]
# ### One target per call
#
# `gradient` accepts a list of targets (it differentiates their sum). `jacobian` does not:
# a Jacobian of two targets would be two matrices of different shapes, not one sum. Its
# **sources** can be a list (one Jacobian per source comes back), but its **target** must
# be one tensor. Pass a list and it refuses with an `AttributeError`, the exception
# TensorFlow raises (its message says less: only that a list has no `.shape`).

# %%
with ad.GradientTape(persistent=True) as tape:
    y = layer(x)
    y_total = ad.reduce_sum(y)

per_source = tape.jacobian(y, [layer.kernel, layer.bias])
print("one target, two sources:", [tuple(j_s.shape) for j_s in per_source])
try:
    tape.jacobian([y, y_total], layer.kernel)
except AttributeError as error:
    print("AttributeError:", error)
print("one call per target:", tuple(tape.jacobian(y_total, layer.kernel).shape))
del tape

# %% [markdown]
# ## 4. One backward pass for the whole Jacobian
#
# Row $i$ of a Jacobian is an ordinary gradient, with one change: instead of seeding the
# backward pass with ones ("differentiate the sum"), seed it with the one-hot vector $e_i$
# ("differentiate output $i$ only"). That is what `output_gradients` does:

# %%
x = ad.constant([0.5, 1.0, 1.5, 2.0])
with ad.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = ad.cumsum(ad.sin(x))

jacobian = tape.jacobian(y, x)
row_2 = tape.gradient(y, x, output_gradients=ad.constant([0.0, 0.0, 1.0, 0.0]))
print("row 2 of the jacobian  :", np.round(jacobian.numpy()[2], 4) + 0.0)
print("gradient seeded with e2:", np.round(row_2.numpy(), 4) + 0.0)

# %% [markdown]
# So a Jacobian with $n$ rows could be $n$ backward passes. `autodiff` (like TensorFlow's
# default) does better: it stacks the $n$ seeds into one tensor, the identity matrix of
# shape `(n,) + y.shape`, and runs **one** backward pass with it. Every derivative rule
# accepts extra leading axes on its cotangent and treats them as a batch, so the whole
# stack travels through the rules together.
#
# To watch it happen we make a tiny op that does nothing forward (the identity) and, in its
# gradient, prints the shape of the cotangent it receives. (`batch_aware=True` promises that
# the gradient handles the extra leading axes; returning the cotangent unchanged does.)
#
# (Op types live in one global registry: running this cell a second time raises a
# `KeyError`. Restart the kernel, or use a new name.)

# %%
@ad.primitive("ShowCotangent", batch_aware=True)
def show_cotangent(xp, x):
    return x


@ad.RegisterGradient("ShowCotangent")
def _show_cotangent_grad(op, upstream):
    print("    ShowCotangent's gradient got a cotangent of shape", tuple(upstream.shape))
    return upstream


with ad.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = ad.cumsum(ad.sin(show_cotangent(x)))

print("tape.gradient:")
g = tape.gradient(y, x)
print("tape.jacobian:")
j = tape.jacobian(y, x)

# %% [markdown]
# The gradient pushes one cotangent of shape `(4,)`; the Jacobian pushes a stack of four, in
# a single pass.
#
# This is also where the name **VJP** (lesson 1) comes from. A cotangent $u$ arriving at an
# op's output, times the op's Jacobian $J$, gives the cotangents of its inputs: $u^\top J$,
# a *vector-Jacobian product*. Each op's rule computes that product directly (for `Mul`,
# "multiply by the other factor"), never the matrix $J$ itself.
#
# The price is memory: every cotangent in the backward pass carries the extra axis of
# length $n$, so a Jacobian with a million rows needs a million times the memory of a
# gradient at once. Two knobs trade speed for memory:
#
# * `parallel_iterations=k` pushes the seeds $k$ at a time: $\lceil n/k \rceil$ passes, each
#   $k$ rows deep;
# * `experimental_use_pfor=False` gives up the stacking and loops, one `gradient` call per
#   row. As in TensorFlow, that needs a persistent tape.

# %%
print("parallel_iterations=2:")
j_chunked = tape.jacobian(y, x, parallel_iterations=2)
print("experimental_use_pfor=False:")
j_loop = tape.jacobian(y, x, experimental_use_pfor=False)
print("all three agree:", np.array_equal(j.numpy(), j_chunked.numpy()) and np.array_equal(j.numpy(), j_loop.numpy()))
del tape

# %% [markdown]
# ## 5. Batch Jacobians
#
# A model applied to a batch treats each example on its own. Say a two-layer network maps a
# batch of 5 inputs with 3 features to 5 outputs with 2 features. What we usually want is
# one small Jacobian per example: `(5, 2, 3)`. The full Jacobian is bigger, `(5, 2, 5, 3)`,
# because it also contains the derivative of every example's output with respect to every
# *other* example's input (all zeros).

# %%
ad.random.set_seed(1)
x = ad.random.normal([5, 3])
layer1 = ad.layers.Dense(4, activation="elu")
layer2 = ad.layers.Dense(2, activation="elu")

with ad.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
    tape.watch(x)
    y = layer2(layer1(x))

full = tape.jacobian(y, x)
print("full jacobian:", full.shape)

# %% [markdown]
# `widgets.batch_jacobian_patches` draws it as a 5 × 5 grid of patches: patch $(b, c)$ is
# $\partial y_b / \partial x_c$, a 2 × 3 block. Only the diagonal patches are coloured:

# %%
widgets.batch_jacobian_patches(full)

# %% [markdown]
# The per-example Jacobians are the diagonal patches. `ad.einsum('bxby->bxy', full)` picks
# them out (the repeated `b` means "the same example on both sides").
# `tape.batch_jacobian(y, x)` computes them directly, without ever building the zeros:

# %%
per_example = ad.einsum("bxby->bxy", full)
batch = tape.batch_jacobian(y, x)
print("einsum of the full one:", per_example.shape, "  batch_jacobian:", batch.shape)
print("equal:", np.allclose(per_example.numpy(), batch.numpy(), atol=1e-6))

# %% [markdown]
# How can `batch_jacobian` be cheaper? It seeds one cotangent per output **position** (2
# here), set to 1 in *every* example at once, instead of one per output element (10). What
# comes back for example $b$ is then $\sum_{c} \partial y_c / \partial x_b$, the sum of
# column $b$ of the patch grid. That equals the diagonal patch only because the other
# patches in the column are zero.
#
# ## 6. Teaching moment: BatchNormalization in training mode
#
# `ad.layers.BatchNormalization` in training mode normalizes each feature with the mean and
# variance **of the current batch**. So every output depends on every example, and the
# off-diagonal patches are no longer zero.

# %%
ad.random.set_seed(1)
x = ad.random.normal([5, 3])
layer1 = ad.layers.Dense(4, activation="elu")
bn = ad.layers.BatchNormalization()
layer2 = ad.layers.Dense(2, activation="elu")

with ad.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
    tape.watch(x)
    y = layer2(bn(layer1(x), training=True))

full = tape.jacobian(y, x)
print("full jacobian:", full.shape)

# %% [markdown]
# **Predict.** Now call `tape.batch_jacobian(y, x)` on this tape. Does it raise an error,
# or return a `(5, 2, 3)` tensor? And if it returns one, is it equal to the diagonal patches
# of `full` (the true per-example Jacobians)? Predict `"error"`, `True` or `False`.

# %% tags=["solution"]
try:
    batch = tape.batch_jacobian(y, x)
    per_example = ad.einsum("bxby->bxy", full)
    outcome = bool(np.allclose(per_example.numpy(), batch.numpy(), atol=1e-6))
except Exception:
    outcome = "error"

my_prediction = ...  # your prediction: "error", True or False
### BEGIN SOLUTION
my_prediction = False
### END SOLUTION

# %% tags=["check"]
check(my_prediction, outcome,
      hint="batch_jacobian seeds one cotangent per output position, in every example at once: "
           "what does it add up when the off-diagonal patches are not zero?")

# %% tags=["reveal"]
print("batch_jacobian shape:", batch.shape)

# %% [markdown]
# > **Teaching moment: `batch_jacobian` does not check.** It still runs and returns the
# > expected shape, `(5, 2, 3)`, but its numbers are the column sums described above, not the
# > per-example Jacobians. TensorFlow behaves the same way, and so does `autodiff`: checking
# > would cost as much as the full Jacobian.
#
# The patches show why, and the widget, which has the full Jacobian at hand, warns:

# %%
widgets.batch_jacobian_patches(full)

# %% [markdown]
# When in doubt, ask `ad.testing.check_batch_independence`. It computes the full Jacobian
# (so use it in a test, not in a training loop), returns whether it is block-diagonal, and
# warns when it is not:

# %%
print("training=True: ", ad.testing.check_batch_independence(tape, y, x))

print("training=False:", ad.testing.check_batch_independence(
    lambda batch: layer2(bn(layer1(batch), training=False)), x))

# %% [markdown]
# In inference mode (`training=False`) BatchNormalization uses its stored moving averages,
# which do not depend on the batch: each example is on its own again.
#
# ## Words of this lesson
#
# | word | what it means here |
# |---|---|
# | **Jacobian** | all the partial derivatives $\partial y_i / \partial x_j$ of a tensor target, shaped `target.shape + source.shape` |
# | **one-hot seed** | a cotangent that is 1 at one element of the target and 0 elsewhere: it picks one row |
# | **VJP** | vector-Jacobian product $u^\top J$: what every op's backward rule computes, without building $J$ |
# | **batch Jacobian** | one small Jacobian per example, `(batch, out, in)`, right only when examples do not mix |
#
# ## Summary
#
# * `tape.jacobian(target, source)` has shape `target.shape + source.shape`; for a scalar
#   source that is the target's shape.
# * Summing a Jacobian over the target's axes gives `tape.gradient`.
# * Row $i$ is a gradient seeded with $e_i$. All rows go through **one** backward pass as a
#   stack of cotangents; `parallel_iterations` bounds how many at a time, and
#   `experimental_use_pfor=False` loops instead.
# * `tape.batch_jacobian` gives the per-example Jacobians, `einsum('bxby->bxy')` of the full
#   one, **only if** examples do not influence each other. BatchNormalization in training
#   mode breaks that; `ad.testing.check_batch_independence` and
#   `widgets.batch_jacobian_patches` show it.
#
# ## Exercises: predict the gradient (and the shape)
#
# For each exercise, work out the answer **on paper first**, then type it into
# `my_prediction` and run the cell. The check compares your prediction with the tape's
# answer (a shape is a tuple).

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
# **Exercise 1.** The target has shape `(3,)`, the source `(2, 2)`. What is the shape of
# the Jacobian?

# %% tags=["solution"]
x = ad.ones([2, 2])
with ad.GradientTape() as tape:
    tape.watch(x)
    y = ad.constant([1.0, 2.0, 3.0]) * ad.reduce_sum(x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = (3, 2, 2)
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tuple(tape.jacobian(y, x).shape),
      hint="a Jacobian's shape is the target's shape followed by the source's")

# %% [markdown]
# **Exercise 2.** $y = x^2$ elementwise, at $x = [1, 2, 3]$. Write out the Jacobian.

# %% tags=["solution"]
x = ad.constant([1.0, 2.0, 3.0])
with ad.GradientTape() as tape:
    tape.watch(x)
    y = x * x

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [[2.0, 0.0, 0.0],
                 [0.0, 4.0, 0.0],
                 [0.0, 0.0, 6.0]]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.jacobian(y, x),
      hint="entry [i][j] is d y_i / d x_j, and y_i depends on x_i alone")

# %% [markdown]
# **Exercise 3.** A scalar source: $y = s \cdot [1, 2, 3]$ with $s = 2$. Predict the
# Jacobian, then the gradient.

# %% tags=["solution"]
s = ad.Variable(2.0)
with ad.GradientTape(persistent=True) as tape:
    y = s * ad.constant([1.0, 2.0, 3.0])

my_prediction = ...  # jacobian
### BEGIN SOLUTION
my_prediction = [1.0, 2.0, 3.0]        # jacobian
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.jacobian(y, s),
      hint="a scalar source: one d y_i / d s for each entry of the target")

# %% tags=["solution"]
my_prediction = ...  # gradient
### BEGIN SOLUTION
my_prediction = 6.0                    # gradient
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, s),
      hint="a gradient is the Jacobian summed over the target's entries")

# %% [markdown]
# **Exercise 4.** A reversed running total: $y = \text{cumsum}(x, \text{reverse=True})$ for
# three inputs ($y_0 = x_0 + x_1 + x_2$, ..., $y_2 = x_2$). Write out the Jacobian.

# %% tags=["solution"]
x = ad.constant([1.0, 2.0, 3.0])
with ad.GradientTape() as tape:
    tape.watch(x)
    y = ad.cumsum(x, reverse=True)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [[1.0, 1.0, 1.0],
                 [0.0, 1.0, 1.0],
                 [0.0, 0.0, 1.0]]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.jacobian(y, x),
      hint="entry [i][j] is d y_i / d x_j: which x_j are added up in y_i?")

# %% [markdown]
# **Exercise 5 (homework).** `Dense(4)` on inputs of shape `(2, 3)`. What is the shape of
# the Jacobian of the output with respect to the **bias**?

# %% tags=["solution"]
layer = ad.layers.Dense(4)
x = ad.ones([2, 3])
with ad.GradientTape() as tape:
    y = layer(x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = (2, 4, 4)
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tuple(tape.jacobian(y, layer.bias).shape),
      hint="the target's shape, then the source's: what shapes do the output and bias have?")

# %% [markdown]
# **Exercise 6.** A batch of 8 examples, 5 features in, 2 out. What shape does
# `batch_jacobian` return?

# %% tags=["solution"]
x = ad.ones([8, 5])
with ad.GradientTape() as tape:
    tape.watch(x)
    y = ad.matmul(x, ad.ones([5, 2]))

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = (8, 2, 5)
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tuple(tape.batch_jacobian(y, x).shape),
      hint="batch_jacobian keeps the batch axis once: what comes after it?")

# %% [markdown]
# **Exercise 7.** Is `batch_jacobian` safe here? Predict what `check_batch_independence`
# returns for each function (True: the examples are independent).
# The first mixes the features *within* an example; the second subtracts the batch mean.

# %% tags=["solution"]
x = ad.constant(np.arange(12.0, dtype=np.float32).reshape(4, 3))

my_prediction = ...  # each row plus its own sum
### BEGIN SOLUTION
my_prediction = True          # each row plus its own sum
### END SOLUTION

# %% tags=["check"]
check(my_prediction, ad.testing.check_batch_independence(
    lambda x: x + ad.reduce_sum(x, axis=1, keepdims=True), x),
      hint="does example b's output use any other example's input?")

# %% tags=["solution"]
my_prediction = ...  # each row minus the mean over the batch
### BEGIN SOLUTION
my_prediction = False         # each row minus the mean over the batch
### END SOLUTION

# %% tags=["check"]
check(my_prediction, ad.testing.check_batch_independence(
    lambda x: x - ad.reduce_mean(x, axis=0), x),
      hint="does example b's output use any other example's input? Think about the batch mean")

# %% [markdown]
# **Next:** lesson 9 differentiates a gradient with `jacobian`: Hessians and Newton steps;
# lesson 10 adds Hessian-vector products and forward mode.
