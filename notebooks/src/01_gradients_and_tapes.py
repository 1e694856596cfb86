# Lesson 1 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 01
# %% [markdown]
# # Lesson 1: Gradients and tapes
#
# A neural network learns by nudging its numbers in the direction that lowers a loss.
# Finding that direction means computing derivatives, thousands of them, exactly and fast.
# Nobody writes them by hand: a program *records* what the forward computation did and
# then *plays the recording backwards*. The recording is called a **tape**.
#
# This lesson uses `autodiff`, a small library whose API copies TensorFlow 2's
# `tf.GradientTape` (write `ad.` where TensorFlow code says `tf.`). Its tape is plain data
# that you can print and inspect.
#
# **You will learn**
# 1. how to ask a tape for a derivative, and what the tape wrote down to answer;
# 2. which values a tape follows (Variables, constants, `watch`);
# 3. how to ask for many gradients at once (nested sources and targets, vector targets).
#
# A **Predict** cell asks for your guess before the tape answers, and the lesson ends with
# *predict the gradient* exercises.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 3 |
# | 1. A first derivative | 9 |
# | 2. The tape is data | 4 |
# | 3. Variables, constants, and `watch` | 13 |
# | 4. Many gradients at once: nested sources and targets | 3 |
# | 5. Vector targets are summed too | 4 |
# | summary and the words of the lesson | 3 |
# | exercises 1 to 5 | 15 |
# | in all | 54 |

# %%
%matplotlib inline
%config InlineBackend.figure_formats = ['png']
import matplotlib.pyplot as plt
import numpy as np

import autodiff as ad
import widgets
from widgets.exercises import check  # None only matches None; numbers must be close

# %% [markdown]
# ## 1. A first derivative
#
# Take $f(x) = x^3 - 2x$. By hand, $f'(x) = 3x^2 - 2$, so at $x = 1.5$ the slope is
# $3 \cdot 2.25 - 2 = 4.75$. Now let the tape find it.
#
# A value we want derivatives for is stored in an `ad.Variable`. Inside the
# `with ad.GradientTape() as tape:` block, every operation on it (and on results computed
# from it) is recorded, and `tape.gradient(target, source)` answers "how fast does `target`
# change when `source` changes?".

# %%
x = ad.Variable(1.5, name="x")

with ad.GradientTape() as tape:
    y = x ** 3 - 2.0 * x

print("y     =", y)
print(tape)

# %% [markdown]
# `print(tape)` shows the recording, one line per operation, in the order the operations ran.
# This list is the whole secret of reverse-mode differentiation (it is sometimes called a
# *Wengert list*):
#
# * Each line is a **record**: an output on the left, an op type and its inputs on the right.
#   The op types carry TensorFlow's names: `Pow` for `**`, `Mul` for `*`, `Sub` for `-`.
# * The variable appears by its name, `x`. Every other tensor gets a number: `v1` is $x^3$,
#   `v3` is $2x$, `v4` is the result $y$. The constants the code mixed in (the exponent `3`
#   and the factor `2.0`) are `v0` and `v2`.
# * The header counts the records and names the watched tensors they start from (here `x`).
#
# Now ask for the derivative:

# %%
dy_dx = tape.gradient(y, x)
print("dy/dx =", dy_dx)

# %% [markdown]
# 4.75, as computed by hand. To get it, the tape started at `y` with the derivative
# $\partial y / \partial y = 1$ and walked the three records **backwards**: `Sub` passes
# $+1$ to $x^3$ and $-1$ to $2x$; `Mul` turns the $-1$ into $-1 \cdot 2 = -2$ for `x`;
# `Pow` turns the $+1$ into $3x^2 = 6.75$ for `x`. The two contributions to `x` are
# **added**: $6.75 - 2 = 4.75$.
#
# Each op type knows only its own little derivative rule; the tape strings the rules
# together in reverse (the chain rule). Lesson 12 reads the code that does it.
#
# To *watch* the walk, record the same computation on a new tape and give it to the **tape
# player**. Press **Play** (or click the player and use the arrow keys): the three records
# appear in the order they ran, then the backward pass visits them in reverse, showing the
# derivative that arrives at each op and what it sends to each input.
#
# The player's sentences use two words that the rest of the course uses too:
#
# * The **cotangent** of a tensor `v` is $\partial y / \partial v$: how much the target $y$
#   changes per unit change of `v`. The backward pass starts with the cotangent
#   $\partial y / \partial y = 1$ at `y`. "The cotangent -1.0 arrives at Mul
#   (v3 = v2 * x)" says $\partial y / \partial v_3 = -1$.
# * An op's **VJP** is its backward rule: it turns the cotangent of the op's output into a
#   contribution for each input. (The letters stand for *vector-Jacobian product*; lesson 8
#   shows where the name comes from.) The player writes each rule with small changes:
#   `d(v2·x) = x·dv2 + v2·dx` reads "when `v2` moves by `dv2` and `x` by `dx`, the product
#   moves by `x·dv2 + v2·dx`", so `x` receives the arriving cotangent times `v2`.

# %%
with ad.GradientTape() as replayed:
    y = x ** 3 - 2.0 * x
widgets.TapePlayer(replayed, target=y, sources=x, names={"y": y})

# %% [markdown]
# (The player runs the backward pass itself, so it uses up its tape just as `gradient`
# does. Lesson 11 shows more of it.)
#
# A tape like this one can answer **once**. After `gradient` it frees its records:

# %%
print(tape)

# %% [markdown]
# ## 2. The tape is data
#
# The records are ordinary Python objects. `tape.records` is a tuple of them, and
# `tape.names()` gives the display names used by `print(tape)`. Let's look at a slightly
# bigger computation, a neuron with a sigmoid: $\sigma(w \cdot a + b)$.

# %%
w = ad.Variable(0.8, name="w")
b = ad.Variable(-0.3, name="b")
a = ad.constant(2.0)

with ad.GradientTape() as tape:
    z = w * a + b
    out = ad.sigmoid(z)

names = tape.names()
for record in tape.records:
    inputs = ", ".join(names[i] for i in record.input_ids)
    outputs = ", ".join(names[i] for i in record.output_ids)
    print(f"record {record.index}: {outputs} = {record.op_type}({inputs})   saves: {record.primitive.saves}")

grads = tape.gradient(out, [w, b])
print("gradients, rounded:", [round(float(g), 4) for g in grads])

# %% [markdown]
# A record holds the op type, the ids of its inputs and outputs, and what the op's derivative
# rule will need later: `saves` says which. The rule for `Mul` needs its inputs
# ($\partial(wa)/\partial w = a$), the rule for `Sigmoid` needs only its output
# ($\sigma' = \sigma(1 - \sigma)$), and the rule for `AddV2` needs nothing but shapes.
#
# (Values that come out of functions like `sigmoid`, `exp` or `cos` are rounded when we print
# them in these lessons: their last digits can differ from one processor to another.)
#
# Check the numbers: $z = 1.3$, $\sigma'(z) = \sigma(z)(1 - \sigma(z)) \approx 0.1683$, so
# $\partial\,\text{out}/\partial b \approx 0.1683$ and $\partial\,\text{out}/\partial w =
# 0.1683 \cdot a \approx 0.3366$. Asking for a **list** of sources returns a list of gradients
# in the same order.

# %% [markdown]
# ## 3. Variables, constants, and `watch`
#
# So far every source has been an `ad.Variable`. Values in a model also come as
# **constants** (`ad.constant`): input data, fixed numbers. What does a tape do with one?
#
# **Predict.** `c` is a constant, 4.0, and `y = c * c` is computed inside the tape. What is
# `tape.gradient(y, c)`: 8.0, 0.0, `None`, or an error? Type your guess in place of `...`,
# run the cell, then run the check below it.

# %% tags=["solution"]
c = ad.constant(4.0)

with ad.GradientTape() as tape:
    y = c * c

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = None
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, c),
      hint="think about what the tape wrote down while y = c * c ran")

# %% [markdown]
# Recording costs memory: every record keeps some values alive until the backward pass. So a
# tape does not record everything. It records an operation only if one of its inputs is
# **watched**, and an operation's outputs become watched in turn, so "watched" spreads
# forward through the computation. What is watched from the start?
#
# * a trainable `ad.Variable` is watched automatically the moment the tape sees it being read;
# * an `ad.constant` (or any other Tensor) is **not**, unless you call `tape.watch(t)`.
#
# So a tape around `y = c * c` records nothing at all:

# %%
with ad.GradientTape() as tape:
    y = c * c

print(tape)

# %% [markdown]
# > **Teaching moment: an unwatched constant gives `None`, not an error and not zero.**
# > It is tempting to expect a number: a constant is a value like any other, and `y`
# > clearly depends on it. TensorFlow 2, and this library, return `None`: nothing was
# > recorded (lesson 6 meets this again inside a custom gradient), so the tape has no
# > path from `y` back to `c`. `None` means "this tape cannot see a connection", which is
# > different from "the slope is 0". Lesson 3 lists all the ways to end up with `None`.
#
# Watching the constant fixes it:

# %%
with ad.GradientTape() as tape:
    tape.watch(c)
    y = c * c

print(tape)
print("dy/dc  :", tape.gradient(y, c))

# %% [markdown]
# ### What gets watched: four kinds of value
#
# A small model has a weight that should learn, a scale that should stay fixed, a value
# derived from another variable, and input data. Each enters the loss through its own
# term. Only one of the four is watched automatically:

# %%
weight = ad.Variable(3.0, name="weight")                          # trainable Variable
scale = ad.Variable(0.5, name="scale", trainable=False)            # frozen Variable
shifted = ad.Variable(1.0, name="shifted") + 1.0                    # Variable + number = Tensor
data = ad.constant(2.0)                                             # a constant

with ad.GradientTape() as tape:
    loss = 2.0 * weight + ad.exp(scale) + shifted * shifted + ad.sqrt(data)

grads = tape.gradient(loss, [weight, scale, shifted, data])
for name, g in zip(["weight", "scale", "shifted", "data"], grads):
    print(f"{name:>8}: {g}")
print("watched variables:", [v.name for v in tape.watched_variables()])

# %% [markdown]
# * `scale` was created with `trainable=False`: frozen values are not watched.
# * `shifted` looks like a variable, but adding `1.0` to a Variable produces a new **Tensor**,
#   a constant as far as the tape is concerned. (This one bites in training loops: lesson 3.)
# * `data` is a constant.
#
# (Lesson 3 asks you to predict a subtle case: an unwatched value multiplied *directly* by a
# watched one.)
#
# `tape.watch` accepts a single tensor or a list (or any nested structure) of them. Now all
# four gradients exist: $2$, $e^{0.5}$, $2 \cdot 2$ and $1 / (2\sqrt{2})$.

# %%
with ad.GradientTape() as tape:
    tape.watch([scale, shifted, data])
    loss = 2.0 * weight + ad.exp(scale) + shifted * shifted + ad.sqrt(data)

for name, g in zip(["weight", "scale", "shifted", "data"],
                   tape.gradient(loss, [weight, scale, shifted, data])):
    print(f"{name:>8}: {float(g):.4f}")

# %% [markdown]
# Sometimes you want the opposite: a model has many variables, and you want the gradient
# for only one of them, without paying to record the rest. Turn off automatic watching with
# `watch_accessed_variables=False` and watch exactly what you need:

# %%
first = ad.Variable(2.0, name="first")
second = ad.Variable(5.0, name="second")

with ad.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(first)
    y = first * first + second * second

print("recorded:", [record.op_type for record in tape.records])
print("watched variables:", [v.name for v in tape.watched_variables()])
print(tape.gradient(y, [first, second]))

# %% [markdown]
# Only `first` is watched. The tape recorded `first * first` and the final `AddV2` (one of its
# inputs is watched) but not `second * second`, so the gradient for `second` is `None`.

# %% [markdown]
# ## 4. Many gradients at once: nested sources and targets
#
# Models keep their parameters in dictionaries and lists. `gradient` accepts any nested
# structure of sources and returns the gradients **in the same structure**:

# %%
params = {"w": ad.Variable([1.0, -2.0], name="w"), "b": ad.Variable(0.5, name="b")}
inputs = ad.constant([3.0, 1.0])

with ad.GradientTape() as tape:
    prediction = ad.reduce_sum(params["w"] * inputs) + params["b"]   # 3 - 2 + 0.5 = 1.5
    loss = (prediction - 2.0) ** 2

grads = tape.gradient(loss, params)
print(grads)

# %% [markdown]
# $\partial\,\text{loss}/\partial\,\text{prediction} = 2(1.5 - 2) = -1$, so the gradient for
# `b` is $-1$ and for `w` it is $-1 \cdot$ `inputs` $= [-3, -1]$. Each gradient has the shape
# of its source.
#
# Targets can be nested too. Several targets are **added up**: the tape differentiates their
# sum.

# %%
u = ad.Variable(2.0, name="u")
with ad.GradientTape() as tape:
    square = u * u         # d/du = 2u = 4
    cube = u * u * u       # d/du = 3u^2 = 12

print(tape.gradient({"square": square, "cube": cube}, u))   # 4 + 12

# %% [markdown]
# ## 5. Vector targets are summed too
#
# The same rule covers a target that is a vector or matrix: the tape differentiates the
# **sum of its elements**. For an elementwise function this is handy: the sum's gradient is
# the list of slopes at every point, so one call differentiates $\tanh$ at 201 points.

# %%
xs = ad.linspace(-3.0, 3.0, 201)
with ad.GradientTape() as tape:
    tape.watch(xs)
    ys = ad.tanh(xs)

slopes = tape.gradient(ys, xs)
print("shapes:", ys.shape, slopes.shape)
print("slope at x = 0 (the middle of the grid):", slopes.numpy()[100])

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(xs.numpy(), ys.numpy(), label="tanh(x)")
ax.plot(xs.numpy(), slopes.numpy(), label="gradient of sum(tanh(xs))")
ax.plot(xs.numpy(), 1 - np.tanh(xs.numpy()) ** 2, "k:", label="1 - tanh(x)^2, by hand")
ax.set_xlabel("x")
ax.legend()
plt.show()

# %% [markdown]
# The summing is only "harmless" because each output depends on one input. When outputs
# mix inputs, the sum mixes their gradients: to keep each output's gradient separate you
# need a Jacobian (lesson 8).
#
# To weight the outputs differently instead of summing them equally, pass
# `output_gradients`, one weight per element:

# %%
v = ad.constant([1.0, 2.0, 3.0])
with ad.GradientTape() as tape:
    tape.watch(v)
    sq = v * v                          # slopes 2v = [2, 4, 6]

print(tape.gradient(sq, v, output_gradients=ad.constant([1.0, 0.0, -1.0])))

# %% [markdown]
# ## Words of this lesson
#
# | word | what it means here |
# |---|---|
# | **tape** | a recording of the operations that ran on watched values (`ad.GradientTape`) |
# | **record** | one line of a tape: an op type, its inputs, its outputs |
# | **watched** | followed by a tape: trainable Variables by themselves, other tensors after `tape.watch` |
# | **target**, **source** | in `tape.gradient(target, sources)`: what is differentiated, and with respect to what |
# | **cotangent** | $\partial\,\text{target} / \partial v$ for a tensor $v$: the number the backward pass carries to $v$ |
# | **VJP** | an op's backward rule: the cotangent of its output in, one contribution per input out |
#
# ## Summary
#
# * Inside `with ad.GradientTape() as tape:`, every operation that touches a watched value
#   is recorded; `print(tape)` shows the records in the order they ran.
# * `tape.gradient(target, sources)` walks the records backwards, adding up contributions.
# * Trainable Variables are watched automatically; constants, frozen Variables and Tensors
#   computed from Variables are not: `tape.watch` them, or get `None`.
# * Sources can be nested (dicts, lists): the gradients come back in the same shape.
#   Several targets, or a non-scalar target, are summed.
#
# ## Exercises: predict the gradient
#
# For each exercise, work out the answer **on paper first**, then type it into
# `my_prediction` and run the cell. The check compares your prediction with the tape's
# answer (`None` counts as an answer too).

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
# **Exercise 1.** $y = x^3 + x$ at $x = 2$. What is $dy/dx$?

# %% tags=["solution"]
x = ad.Variable(2.0)
with ad.GradientTape() as tape:
    y = x * x * x + x

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 13.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, x),
      hint="differentiate x**3 and x one at a time, add them, then put in x = 2")

# %% [markdown]
# **Exercise 2.** A Variable and a constant in one product: `x = 3` is a Variable,
# `k = 2` a constant nobody watched, and $y = k x^2$. What does
# `tape.gradient(y, [x, k])` return? (A list of two entries, each a number or `None`.)

# %% tags=["solution"]
x = ad.Variable(3.0)
k = ad.constant(2.0)
with ad.GradientTape() as tape:
    y = k * x * x

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [12.0, None]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, [x, k]),
      hint="one entry at a time: which of the two does the tape follow, and for the one it "
           "follows, what is the derivative at that point?")

# %% [markdown]
# **Exercise 3.** A vector target: `y = 5 * v` for a watched vector `v = [1, 2, 3]`.
# What is `tape.gradient(y, v)`? (Give a list.)

# %% tags=["solution"]
v = ad.constant([1.0, 2.0, 3.0])
with ad.GradientTape() as tape:
    tape.watch(v)
    y = 5.0 * v

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [5.0, 5.0, 5.0]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, v),
      hint="a vector target is summed first: how much does the sum grow when one entry of v "
           "grows by 1?")

# %% [markdown]
# **Exercise 4.** Nested sources. With `w = 3` and `b = -1`, the loss is $(2w + b)^2$.
# Predict both gradients.

# %% tags=["solution"]
params = {"w": ad.Variable(3.0), "b": ad.Variable(-1.0)}
with ad.GradientTape() as tape:
    loss = (2.0 * params["w"] + params["b"]) ** 2

grads = tape.gradient(loss, params)
my_prediction = {"w": ..., "b": ...}  # your predictions
### BEGIN SOLUTION
my_prediction = {"w": 20.0, "b": 10.0}
### END SOLUTION

# %% tags=["check"]
check(my_prediction["w"], grads["w"],
      hint="the chain rule: 2 * (2w + b) times the derivative of 2w + b with respect to w")
check(my_prediction["b"], grads["b"],
      hint="the chain rule: 2 * (2w + b) times the derivative of 2w + b with respect to b")

# %% [markdown]
# **Exercise 5.** A frozen variable: `temperature = ad.Variable(4.0, trainable=False)` and
# `y = temperature ** 2`. What is the gradient of `y` with respect to `temperature`?

# %% tags=["solution"]
temperature = ad.Variable(4.0, trainable=False)
with ad.GradientTape() as tape:
    y = temperature ** 2

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = None
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, temperature),
      hint="which Variables does a tape watch without being asked? Look at trainable")

# %% [markdown]
# **Next:** lesson 2 takes control of the tape: keeping it for several questions, asking
# about intermediate results, pausing it, resetting it, blocking gradients on purpose;
# lesson 3 tracks down the places where a gradient turns into `None`.
