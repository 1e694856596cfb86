# Lesson 13 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 13
# %% [markdown]
# # Lesson 13: Training a tiny network, end to end
#
# Every lesson so far asked the tape for a gradient and looked at it. Training is what the
# gradients are for: compute a loss, ask the tape for the gradient of the loss with respect
# to every weight, nudge every weight a little downhill, repeat. This lesson trains a small
# network to separate two interleaved half-moons, and draws the boundary it learns.
#
# **You will learn**
# 1. a model as an `ad.keras.Model` of `Dense` layers, and its `trainable_variables`;
# 2. one training step by hand: tape, loss, gradients, `assign_sub`;
# 3. the gradients of a `Dense` layer derived on the board, and checked against the tape;
# 4. the same step with `ad.optimizers.Adam`, and what its first step does;
# 5. a training loop, its loss curve, and the decision boundary as a picture;
# 6. the gradient of a lookup table (`gather`), and the `IndexedSlices` TensorFlow returns
#    for it.
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
# | 1. The data: two moons | 2 |
# | 2. The model | 5 |
# | 3. One step by hand | 3 |
# | 4. The gradients of a `Dense` layer, on the board | 8 |
# | 5. Adam | 6 |
# | 6. The training loop | 2 |
# | 7. The decision boundary | 3 |
# | 8. Gradients of the trained network with respect to its ... | 3 |
# | 9. Looking rows up: the gradient of `gather` | 6 |
# | summary and the words of the lesson | 3 |
# | exercises 1 to 3 | 9 |
# | in all | 53 |
#
# Exercises 4 to 6 are homework.

# %%
%matplotlib inline
%config InlineBackend.figure_formats = ['png']
import matplotlib.pyplot as plt
import numpy as np

import autodiff as ad
from widgets.exercises import check  # None only matches None; numbers must be close

ad.random.set_seed(11)

# %% [markdown]
# ## 1. The data: two moons
#
# 300 points in the plane on two half circles that hook into each other, with a little
# noise. Label 0 for the upper moon, 1 for the lower one. No straight line separates them,
# so the network must learn a curved boundary.

# %%
def two_moons(n, noise=0.1, seed=0):
    """n points on two interleaved half circles, and their labels 0 and 1."""
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0.0, np.pi, n)
    label = rng.integers(0, 2, n)
    x = np.where(label == 0, np.cos(angle), 1.0 - np.cos(angle))
    y = np.where(label == 0, np.sin(angle), 0.5 - np.sin(angle))
    points = np.stack([x, y], axis=1) + rng.normal(0.0, noise, (n, 2))
    return points.astype(np.float32), label.astype(np.int32)

points, labels = two_moons(300)
x_train, y_train = ad.constant(points), ad.constant(labels)

fig, ax = plt.subplots(figsize=(6, 3.6))
ax.scatter(points[:, 0], points[:, 1], c=labels, cmap="coolwarm", s=12, edgecolors="none")
ax.set(title="Two moons: 300 points, two classes", xlabel="$x_0$", ylabel="$x_1$")
ax.set_aspect("equal")
plt.show()
print("inputs:", x_train.shape, x_train.dtype, "  labels:", y_train.shape, y_train.dtype)

# %% [markdown]
# ## 2. The model
#
# Three dense layers: 2 inputs, two hidden layers of 16 units with `relu`, and 2 outputs,
# one *logit* (an unnormalized score) per class. The model is written as a Keras 3 user
# writes it: a subclass of `ad.keras.Model` (TensorFlow: `keras.Model`) that assigns its
# layers in `__init__` and computes in `call`. The model finds the variables of the layers
# it holds, so `model.trainable_variables` lists every weight to train, in the order the
# layers were assigned. Each `Dense` layer creates its kernel and bias the first time it is
# called, when it sees the size of its input.
#
# (Why `keras.Model` and not `tf.Module`, which older tutorials use? On TensorFlow 2.21, a
# `tf.Module` holding Keras 3 layers finds none of their variables: its gradient list is
# empty.)
#
# **Predict.** How many numbers does the model have to learn? (Each layer has a kernel of
# shape `[inputs, units]` and a bias of shape `[units]`.)

# %% tags=["solution"]
class MLP(ad.keras.Model):
    """2 -> 16 -> 16 -> 2 logits, relu in between."""

    def __init__(self):
        super().__init__(name="mlp")
        self.hidden1 = ad.keras.layers.Dense(16, activation="relu")
        self.hidden2 = ad.keras.layers.Dense(16, activation="relu")
        self.logits = ad.keras.layers.Dense(2)

    def call(self, x):
        return self.logits(self.hidden2(self.hidden1(x)))

model = MLP()
model(x_train)                         # the first call builds the kernels and biases
n_parameters = sum(int(np.prod(v.shape)) for v in model.trainable_variables)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 354
### END SOLUTION

# %% tags=["check"]
check(my_prediction, n_parameters,
      hint="go layer by layer: how many inputs and units has each of the three layers?")

# %% tags=["reveal"]
for v in model.trainable_variables:
    print(f"{v.path:28s} {tuple(v.shape)}")

# %% [markdown]
# ## 3. One step by hand
#
# The loss is the **cross-entropy** between the logits and the labels:
# `ad.nn.sparse_softmax_cross_entropy_with_logits` turns each row of logits into
# probabilities with a softmax and takes $-\log$ of the probability of the true class;
# we average over the 300 points. One tape records the forward pass, and one call asks it
# for the gradient with respect to all six variables at once (lesson 1: a list of sources
# gives a list of gradients, in order).

# %%
def loss_fn(model, x, y):
    logits = model(x)
    return ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(y, logits))

with ad.GradientTape() as tape:
    loss = loss_fn(model, x_train, y_train)
gradients = tape.gradient(loss, model.trainable_variables)

print(f"loss before: {float(loss):.3f}   (log 2 = {np.log(2):.3f}: a coin toss)")
print("one gradient per variable, same shapes:",
      [tuple(g.shape) == tuple(v.shape) for g, v in zip(gradients, model.trainable_variables)])
for g, v in zip(gradients, model.trainable_variables):
    v.assign_sub(0.5 * g)              # plain gradient descent, learning rate 0.5
print(f"loss after one step: {float(loss_fn(model, x_train, y_train)):.3f}")

# %% [markdown]
# That is all of training. `assign_sub` changes the variable **in place**, so the next tape
# still watches the same variable; replacing it with `v = v - 0.5 * g` would leave a plain
# tensor behind, and the next gradient would be `None` (lesson 3).
#
# ## 4. The gradients of a `Dense` layer, on the board
#
# What did the tape compute for each kernel? Take one layer without its activation,
# $y = x W + b$: a batch $x$ of shape $(N, n)$ ($N$ examples of $n$ features), a kernel $W$
# of shape $(n, m)$ and a bias $b$ of shape $(m)$, so $y$ is $(N, m)$. Whatever comes after
# the layer, the backward pass arrives at $y$ with a cotangent $g = \partial L / \partial y$,
# also $(N, m)$. Write one element out, $y_{ki} = \sum_j x_{kj} W_{ji} + b_i$, and
# differentiate:
#
# * $W_{ji}$ appears in $y_{ki}$ for every example $k$, multiplied by $x_{kj}$:
#   $\partial L / \partial W_{ji} = \sum_k x_{kj}\, g_{ki}$, that is
#   $\dfrac{\partial L}{\partial W} = x^\top g$, shape $(n, m)$;
# * $x_{kj}$ appears in $y_{ki}$ for every unit $i$, multiplied by $W_{ji}$:
#   $\dfrac{\partial L}{\partial x} = g\, W^\top$, shape $(N, n)$;
# * $b_i$ is added to $y_{ki}$ for every example: $\dfrac{\partial L}{\partial b} = \sum_k
#   g_{k\cdot}$, the cotangent summed over the batch, shape $(m)$.
#
# The shapes are a good way to remember it: each gradient has the shape of its source, and
# there is only one way to multiply $x$ $(N, n)$ and $g$ $(N, m)$ into an $(n, m)$ matrix.
# The tape can check all three. It gives $g$ too, because an intermediate result can be a
# source (lesson 2):

# %%
x_small = x_train[:5]                                  # 5 examples, 2 features
dense = ad.keras.layers.Dense(3)                       # 3 units, no activation
with ad.GradientTape(persistent=True) as tape:
    tape.watch(x_small)
    y = dense(x_small)
    loss = ad.reduce_mean((y - 1.0) ** 2)
g = tape.gradient(loss, y)                             # the cotangent at y, (5, 3)
by_tape = tape.gradient(loss, [dense.kernel, dense.bias, x_small])
by_board = [ad.matmul(ad.transpose(x_small), g),       # x^T g
            ad.reduce_sum(g, axis=0),                  # g summed over the batch
            ad.matmul(g, ad.transpose(dense.kernel))]  # g W^T
for name, t, b in zip(["dL/dW", "dL/db", "dL/dx"], by_tape, by_board):
    print(f"{name}: shape {tuple(t.shape)}, board = tape: {np.allclose(t.numpy(), b.numpy(), atol=1e-6)}")
del tape

# %% [markdown]
# These three products are the whole backward pass of a dense layer; the tape runs them for
# each of the model's three layers, from the last to the first, handing $g W^\top$ on as the
# cotangent of the layer below.
#
# **Predict.** One example $x = [[1, 2]]$, a kernel $W = [[0.5], [-1]]$ (2 features, 1
# unit), no bias, and the loss $L = 3y$, so that $g = 3$. What is $\partial L / \partial W$?
# (A nested list of the kernel's shape.)

# %% tags=["solution"]
x_one = ad.constant([[1.0, 2.0]])
kernel_one = ad.Variable([[0.5], [-1.0]])
with ad.GradientTape() as tape:
    loss_one = ad.reduce_sum(3.0 * ad.matmul(x_one, kernel_one))

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [[3.0], [6.0]]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(loss_one, kernel_one),
      hint="x^T g: what shape does it have, and what goes into each entry?")

# %% [markdown]
# ## 5. Adam
#
# Plain gradient descent uses one learning rate for every weight. **Adam** keeps, for every
# weight, a running average of its gradient and of its gradient squared, and divides one by
# the square root of the other: each weight gets a step scaled to its own gradients.
# `ad.optimizers.Adam` follows Keras's update rule; `apply_gradients` takes
# `(gradient, variable)` pairs.
#
# **Predict.** At Adam's very first step the two averages are just $g$ and $g^2$ (Adam
# corrects them for having started at zero). With `learning_rate=0.01`, by how much does
# the **largest-moving** weight of the model change?

# %% tags=["solution"]
optimizer = ad.optimizers.Adam(learning_rate=0.01)
before = [v.numpy().copy() for v in model.trainable_variables]
with ad.GradientTape() as tape:
    loss = loss_fn(model, x_train, y_train)
variables = model.trainable_variables
optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
largest_change = round(max(float(np.abs(v.numpy() - b).max()) for v, b in zip(variables, before)), 5)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 0.01
### END SOLUTION

# %% tags=["check"]
check(my_prediction, largest_change, rtol=1e-3,
      hint="write the step with the two averages put in, and see what is left of g")

# %% [markdown]
# The step is $\text{lr} \cdot g / (\sqrt{g^2} + \hat\epsilon)$, and $g / \sqrt{g^2}$ is the
# sign of $g$: the size of the gradient hardly matters at first, only its sign. The small
# $\hat\epsilon$ keeps the division safe. Keras adds its `epsilon` ($10^{-7}$ by default) before
# the bias correction, which makes it $\hat\epsilon = 10^{-7} / \sqrt{1 - 0.999} \approx 3.2
# \cdot 10^{-6}$ at the first step: a weight with $|g| = 1$ moves by lr to five digits, one
# with $|g| = 10^{-3}$ by about $0.9968\,\text{lr}$, one with $|g| = 10^{-5}$ by only about
# $0.76\,\text{lr}$, and one whose gradient is zero (behind a `relu` that never fires) does
# not move. Over many steps the averages take over.
#
# ## 6. The training loop
#
# Repeat the step. We keep the loss of every step to draw its curve, and print a few.

# %%
losses = []
for step in range(1, 301):
    with ad.GradientTape() as tape:
        loss = loss_fn(model, x_train, y_train)
    variables = model.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    losses.append(float(loss))
    if step in (1, 50, 100, 300):
        print(f"step {step:3d}  loss {losses[-1]:.3f}")

predicted = ad.argmax(model(x_train), axis=1).numpy()
print(f"accuracy on the training points: {np.mean(predicted == labels):.2f}")

fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(np.arange(1, 301), losses)
ax.set(xlabel="step", ylabel="loss", yscale="log", title="Cross-entropy during training")
plt.show()

# %% [markdown]
# ## 7. The decision boundary
#
# The network is a function from the plane to two logits. Evaluate it on a grid of points
# covering the picture, turn the logits into the probability of class 1 with a softmax, and
# colour the plane by it. The line where the probability is 0.5 is the **decision
# boundary**: the curve the training found.

# %%
grid_x0, grid_x1 = np.meshgrid(np.linspace(-1.6, 2.6, 160), np.linspace(-1.1, 1.6, 110))
grid = ad.constant(np.stack([grid_x0.ravel(), grid_x1.ravel()], axis=1).astype(np.float32))
probability = ad.nn.softmax(model(grid))[:, 1].numpy().reshape(grid_x0.shape)

fig, ax = plt.subplots(figsize=(7, 4.2))
shade = ax.contourf(grid_x0, grid_x1, probability, levels=np.linspace(0, 1, 11), cmap="coolwarm",
                    alpha=0.55)
ax.contour(grid_x0, grid_x1, probability, levels=[0.5], colors="black", linewidths=1.5)
ax.scatter(points[:, 0], points[:, 1], c=labels, cmap="coolwarm", s=12, edgecolors="white",
           linewidths=0.4)
fig.colorbar(shade, ax=ax, label="probability of class 1")
ax.set(title="What the network learned (black: probability 0.5)", xlabel="$x_0$", ylabel="$x_1$")
ax.set_aspect("equal")
plt.show()

# %% [markdown]
# The boundary bends around the tips of the moons. It is made of straight pieces: every
# `relu` unit is a line in the plane where it switches on, and the network glues those
# lines together. Far from the data the colours are confident for no good reason: the
# network has never seen a point there.
#
# ## 8. Gradients of the trained network with respect to its **input**
#
# The same tape can differentiate with respect to the input instead of the weights: watch
# the input tensor (lesson 1). The gradient of the class-1 logit with respect to a point
# says which way to move that point to raise the network's score for class 1, and its
# length says how steeply the score changes. Try a point near the boundary and one deep
# inside the upper moon:

# %%
probe = ad.constant([[0.5, 0.25], [-1.0, 0.2]])      # near the boundary, deep in class 0
with ad.GradientTape() as tape:
    tape.watch(probe)
    class_one = model(probe)[:, 1]
direction = tape.gradient(class_one, probe).numpy()
for point, d in zip(probe.numpy(), direction):
    print(f"at {point}: d(logit 1)/d(point) has length {np.linalg.norm(d):.2f}")

# %% [markdown]
# Both are steep, the point far from the boundary even more so: to push the loss towards
# zero, training made the logits large, and with them their slopes. Small moves of an input
# change the scores a lot; that is where *adversarial examples* (inputs nudged along this
# gradient until the class flips) begin.

# %% [markdown]
# ## 9. Looking rows up: the gradient of `gather`
#
# Some layers do not multiply their weights with the input: they **look rows up**. A word
# embedding is a table with one row of features per word of the vocabulary, and a sentence
# fetches the rows of its words with `ad.gather(table, ids)`. Only the rows that were looked
# up take part in the loss.
#
# **Predict.** A table of 6 rows and 2 features; the ids `[4, 1, 4]` fetch row 4 twice and
# row 1 once, and the loss is the sum of the fetched numbers. What is the gradient of row 4
# of the table? (A list of two numbers.)

# %% tags=["solution"]
table = ad.Variable(np.arange(12.0, dtype=np.float32).reshape(6, 2))
ids = ad.constant([4, 1, 4])
with ad.GradientTape() as tape:
    rows = ad.gather(table, ids)                 # shape (3, 2)
    lookup_loss = ad.reduce_sum(rows)
table_gradient = ad.convert_to_tensor(tape.gradient(lookup_loss, table))

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [2.0, 2.0]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, table_gradient[4],
      hint="each lookup of a row sends it the cotangent of its copy, ones here; how many times "
           "was row 4 looked up?")

# %% tags=["reveal"]
print(table_gradient.numpy())

# %% [markdown]
# Row 4 was used twice, so its two contributions add up, as for `x * x` in lesson 1; row 1
# gets one; the other rows get real zeros (the table is connected to the loss, those rows
# just did not move it).
#
# Here the gradient is an ordinary tensor of the table's shape, mostly zeros.
# **TensorFlow returns something else**: an `IndexedSlices`, which keeps only the rows that
# were looked up, in lookup order and with a repeated id kept twice (`indices` `[4, 1, 4]`,
# `values` of shape `(3, 2)`), and the table's shape (`dense_shape`). For a vocabulary of a
# million words and a batch that uses a hundred, that saves a million rows of zeros, and
# optimizers can update just the rows in `indices`. `tf.convert_to_tensor` turns it into
# the dense tensor printed above, adding the repeated rows together. That is why the cell
# calls `ad.convert_to_tensor`: it changes nothing here, and makes the same code run on
# TensorFlow. This library always returns the dense tensor, a deliberate difference that
# its README lists.

# %% [markdown]
# ## Words of this lesson
#
# | word | what it means here |
# |---|---|
# | **logit** | an unnormalized score, one per class; a softmax turns them into probabilities |
# | **cross-entropy** | $-\log$ of the probability the model gives the true class, averaged |
# | **learning rate** | the factor on the gradient in a step, `lr` |
# | **decision boundary** | the curve where the model's probability of a class is 0.5 |
# | **embedding** | a table of rows (one per word or id) that a model looks up with `gather` |
# | **`IndexedSlices`** | TensorFlow's gradient of a lookup: the looked-up rows and their indices, not the whole table |
#
# ## Summary
#
# * A model is an `ad.keras.Model` holding layers (as in Keras 3); `model.trainable_variables`
#   lists every weight, created by the first call.
# * One training step: a tape around the loss, `tape.gradient(loss, variables)`, then
#   update each variable in place (`assign_sub`, or `optimizer.apply_gradients`).
# * A dense layer $y = xW + b$ with cotangent $g$ at $y$: $\partial L/\partial W = x^\top g$,
#   $\partial L / \partial x = g W^\top$, $\partial L / \partial b = \sum_k g_k$.
# * Adam's first step moves each weight by the learning rate times the sign of its
#   gradient (a little less where the gradient is tiny, because of `epsilon`); after that
#   its averages adapt the step per weight.
# * A decision boundary is the network evaluated on a grid: it is made of the pieces the
#   `relu` units draw.
# * The gradient of a lookup is the table's shape, with the repeated rows added; TensorFlow
#   returns it as `IndexedSlices` (the rows and their indices), this library as a tensor.
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
# **Exercise 1.** A `Dense(3)` layer called on inputs with 5 features. How many numbers
# does it learn?

# %% tags=["solution"]
dense = ad.keras.layers.Dense(3)
dense(ad.ones([4, 5]))

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 18
### END SOLUTION

# %% tags=["check"]
check(my_prediction, sum(int(np.prod(v.shape)) for v in dense.trainable_variables),
      hint="a kernel of shape [inputs, units] and a bias of shape [units]")

# %% [markdown]
# **Exercise 2.** One example, logits `[0, 0]`, true class 0. The gradient of the
# cross-entropy with respect to the logits? (It is the softmax minus the one-hot label.)

# %% tags=["solution"]
logits = ad.constant([[0.0, 0.0]])
with ad.GradientTape() as tape:
    tape.watch(logits)
    loss = ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(
        ad.constant([0]), logits))

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [[-0.5, 0.5]]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(loss, logits),
      hint="what is the softmax of two equal logits, and how does the gradient of the "
           "cross-entropy with respect to the logits use it?")

# %% [markdown]
# **Exercise 3.** The `Dense` layer of section 4 on the board: two examples
# $x = [[1, 2], [3, 4]]$, a layer of 3 units, and the loss $L = 2 \sum y$, so that $g = 2$
# everywhere. What is $\partial L / \partial b$? (A list of three numbers.)

# %% tags=["solution"]
x_two = ad.constant([[1.0, 2.0], [3.0, 4.0]])
dense3 = ad.keras.layers.Dense(3)
with ad.GradientTape() as tape:
    loss_two = 2.0 * ad.reduce_sum(dense3(x_two))

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [4.0, 4.0, 4.0]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(loss_two, dense3.bias),
      hint="the bias's gradient is the cotangent g summed over the examples of the batch")

# %% [markdown]
# **Exercise 4 (homework).** The same two examples and layer: what is
# $\partial L / \partial W$, the kernel's gradient? (A nested list of shape `(2, 3)`.)

# %% tags=["solution"]
with ad.GradientTape() as tape:
    loss_two = 2.0 * ad.reduce_sum(dense3(x_two))

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [[8.0, 8.0, 8.0], [12.0, 12.0, 12.0]]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(loss_two, dense3.kernel),
      hint="x^T g: row j of the answer is feature j summed over the examples, times g = 2")

# %% [markdown]
# **Exercise 5 (homework).** Plain gradient descent: a weight `w = 1.0`, the loss
# `(3w - 1)**2`, learning rate 0.1. What is `w` after one step?

# %% tags=["solution"]
w = ad.Variable(1.0)
with ad.GradientTape() as tape:
    loss = (3.0 * w - 1.0) ** 2
w.assign_sub(0.1 * tape.gradient(loss, w))

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = -0.2
### END SOLUTION

# %% tags=["check"]
check(my_prediction, round(float(w), 4),
      hint="differentiate (3w - 1)**2 at w = 1 (the chain rule), then step against it")

# %% [markdown]
# **Exercise 6 (homework).** Adam's first step on the same weight, starting again from
# `w = 1.0`, with `learning_rate=0.1`. What is `w` after it?

# %% tags=["solution"]
w = ad.Variable(1.0)
with ad.GradientTape() as tape:
    loss = (3.0 * w - 1.0) ** 2
ad.optimizers.Adam(learning_rate=0.1).apply_gradients([(tape.gradient(loss, w), w)])

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 0.9
### END SOLUTION

# %% tags=["check"]
check(my_prediction, round(float(w), 4),
      hint="section 5: what decides the size of Adam's first step, and what its direction?")

# %% [markdown]
# **Next:** lesson 14 records a training step of this very model, plays it as layers in
# the tape player, and uses the player to find a NaN and a lost gradient in broken models.
# Lesson 11 shows how to watch a tape step by step, and lesson 12 how to build one.
