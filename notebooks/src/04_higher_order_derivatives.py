# Lesson 4 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 04
# %% [markdown]
# # Lesson 4: Higher-order derivatives and several tapes
#
# Lesson 1 said that a tape records every operation on a watched value. The backward pass
# that `tape.gradient` runs is made of operations too (multiplications, powers, sums). So if
# a *second* tape is recording while the first one computes its gradient, the second tape
# writes the backward pass down, and can differentiate it: that is a second derivative.
# Nothing new is needed: no special "Hessian mode", just one tape inside another.
#
# **You will learn**
# 1. how nested tapes give second and third derivatives;
# 2. what a constant watched only by the inner tape gives as a second derivative (and the
#    fix);
# 3. how several tapes can record the same code while each follows its own values;
# 4. to draw a function with its first four derivatives, and explore them interactively;
# 5. a real use of a gradient of a gradient: input-gradient regularization.
#
# The lesson ends with *predict the gradient* exercises.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 3 |
# | 1. A tape inside a tape | 5 |
# | 2. Teaching moment: a constant watched only by the inner tape | 6 |
# | 3. Several tapes at once | 4 |
# | 4. A picture of four derivatives | 7 |
# | 5. A shortcut: `ad.functional.grad` | 8 |
# | summary and the words of the lesson | 3 |
# | exercises 1 to 6 | 18 |
# | in all | 54 |
#
# Exercise 7 is homework.

# %%
%matplotlib inline
%config InlineBackend.figure_formats = ['png']
import numpy as np

import autodiff as ad
import widgets
from widgets.exercises import check  # None only matches None; numbers must be close

# %% [markdown]
# ## 1. A tape inside a tape
#
# Take $y = x^4$ at $x = 1.5$. By hand: $y' = 4x^3 = 13.5$, $y'' = 12x^2 = 27$ and
# $y''' = 24x = 36$.
#
# The inner tape records the forward computation. Its `gradient` call runs **inside** the
# outer tape's `with` block, so the outer tape records the operations of that backward pass.

# %%
x = ad.Variable(1.5, name="x")

with ad.GradientTape() as outer:
    with ad.GradientTape() as inner:
        y = x ** 4
    dy_dx = inner.gradient(y, x)        # computed while `outer` records
    print(outer)

d2y_dx2 = outer.gradient(dy_dx, x)
print("dy/dx   =", dy_dx)
print("d2y/dx2 =", d2y_dx2)

# %% [markdown]
# Read the outer tape. Its first record, `v1 = Pow(x, v0)`, is the forward pass $x^4$ (the
# outer tape watches `x` too, since it is a trainable Variable). The other two records are
# the **inner tape's backward pass**, written down as ordinary operations: the rule for `Pow`
# computes $x^3$ (`v3`) and multiplies it by the incoming cotangent times the exponent,
# $1 \cdot 4$ (`v5`). That product of two constants was computed too, but no tape watches
# either factor, so no tape records it. `v5` *is* `dy_dx`, so the outer tape can
# differentiate it like any other result.
#
# One more tape gives one more derivative. Each `gradient` call sits inside the block of
# the tape that will differentiate its result:

# %%
with ad.GradientTape() as t3:
    with ad.GradientTape() as t2:
        with ad.GradientTape() as t1:
            y = x ** 4
        d1 = t1.gradient(y, x)
    d2 = t2.gradient(d1, x)
d3 = t3.gradient(d2, x)

print("first, second, third:", float(d1), float(d2), float(d3))

# %% [markdown]
# > **Where the `gradient` call sits matters.** Had `d1 = t1.gradient(y, x)` been written
# > after the `with t2` block, `t2` would not have recorded it, and `t2.gradient(d1, x)`
# > would be `None`: `t2` would know only the forward pass, not how `d1` was computed.
#
# ## 2. Teaching moment: a constant watched only by the inner tape
#
# Replace the Variable with a constant. A constant must be watched, so the inner tape
# watches it. The outer tape does not.
#
# **Predict.** The first derivative is $4c^3 = 13.5$ as before. What does the outer tape
# give for the second derivative: 27.0, 0.0, or `None`?

# %% tags=["solution"]
c = ad.constant(1.5)

with ad.GradientTape() as outer:
    with ad.GradientTape() as inner:
        inner.watch(c)
        y = c ** 4
    dy_dc = inner.gradient(y, c)
    print("records on the outer tape:", len(outer.records))

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = None
### END SOLUTION

# %% tags=["check"]
check(my_prediction, outer.gradient(dy_dc, c),
      hint="which tape watches c? Did the outer tape record anything?")

# %% tags=["reveal"]
print("dy/dc   =", dy_dc)

# %% [markdown]
# > **Teaching moment: the second derivative is `None`.** An older TensorFlow tutorial runs
# > this very pattern (on $x^3$ at $x = 1$) and expects the second derivative 6.0.
# > TensorFlow 2, and this library, give `None`.
# >
# > Why: *each tape has its own set of watched values.* `inner.watch(c)` tells the inner tape
# > only. A tape records an operation when one of its inputs is watched **by that tape**, so
# > the outer tape saw `c ** 4` and the backward pass's `c ** 3`, `4 * ...`, and recorded
# > none of them (0 records above). For the outer tape, `dy_dc` is a constant that came from
# > nowhere, with no path back to `c`.
# >
# > The fix: the outer tape watches `c` too. (Variables never hit this, because every tape
# > watches a trainable Variable by itself when it is read.)

# %%
with ad.GradientTape() as outer:
    outer.watch(c)
    with ad.GradientTape() as inner:
        inner.watch(c)
        y = c ** 4
    dy_dc = inner.gradient(y, c)

print("dy/dc   =", dy_dc)
print("d2y/dc2 =", outer.gradient(dy_dc, c))

# %% [markdown]
# ## 3. Several tapes at once
#
# Tapes can also record side by side, in one `with` statement. Any number can be active at
# the same time, each watching a different set of values, and each answers only for its own.
# Below, `tape_a` follows `a` and `tape_b` follows `b` through $y = \sin(a)\, e^{b}$.
# (Both are persistent, because we ask each of them twice.)

# %%
a = ad.constant(0.5)
b = ad.constant(1.0)

with ad.GradientTape(persistent=True) as tape_a, ad.GradientTape(persistent=True) as tape_b:
    tape_a.watch(a)
    tape_b.watch(b)
    y = ad.sin(a) * ad.exp(b)

print(tape_a)
print(tape_b)

# %% [markdown]
# Each tape numbers the tensors it saw on its own, so `v0` is `a` on the first tape and
# `b` on the second. `tape_a` recorded `Sin` and the product, never `Exp`: the exponential's
# input was not watched by `tape_a`. `tape_b` is the mirror image. So each tape knows the
# derivative for its own source, and `None` for the other one:

# %%
for name, tape in [("tape_a", tape_a), ("tape_b", tape_b)]:
    dy_da, dy_db = tape.gradient(y, [a, b])
    print(f"{name}:  dy/da = {dy_da if dy_da is None else round(float(dy_da), 4)}"
          f"   dy/db = {dy_db if dy_db is None else round(float(dy_db), 4)}")

print("by hand: cos(0.5) e =", round(np.cos(0.5) * np.e, 4), "  sin(0.5) e =", round(np.sin(0.5) * np.e, 4))
del tape_a, tape_b

# %% [markdown]
# This is what makes section 6 possible: one tape for the derivative with respect to the
# input, another for the derivative with respect to the weights.
#
# ## 4. A picture of four derivatives
#
# One tape per derivative, nested, gives as many derivatives as you like.
# `widgets.plot_derivatives(f, x, order=4)` does exactly that (four tapes around one call
# of `f`) and draws $f$ with its first four derivatives. Take $f(x) = \sin^2 x$:

# %%
def f(x):
    return ad.sin(x) ** 2


xs = np.linspace(-np.pi, np.pi, 301)
fig = widgets.plot_derivatives(f, xs, order=4)
fig

# %% [markdown]
# The curves keep the same shape and grow: since $\sin^2 x = (1 - \cos 2x)/2$, every
# derivative is a sine or cosine of $2x$, twice as tall as the one before:
# $f' = \sin 2x$, $f'' = 2\cos 2x$, $f''' = -4\sin 2x$, $f^{(4)} = -8\cos 2x$.
# The figure keeps the numbers it drew (line $n$ is the $n$-th derivative), and they agree
# with the formulas at all 301 points:

# %%
curves = [line.get_ydata() for line in fig.axes[0].lines[:5]]
by_hand = [np.sin(xs) ** 2, np.sin(2 * xs), 2 * np.cos(2 * xs), -4 * np.sin(2 * xs), -8 * np.cos(2 * xs)]
for n, (tape_curve, formula) in enumerate(zip(curves, by_hand)):
    print(f"derivative {n}: matches the formula: {np.allclose(tape_curve, formula, atol=1e-4)}")

# %% [markdown]
# > **Why a sum gives every point's derivative.** `gradient` differentiates the *sum* of its
# > target (lesson 1). Here that is harmless: $f$ works element by element, so output $i$
# > depends only on input $i$, and the derivative of the sum with respect to `xs[i]` is
# > $f'(x_i)$. For a function that mixes elements you would need a Jacobian (lesson 8).
#
# ### Explore it
#
# `widgets.DerivativeExplorer` shows the same curves with two sliders: the point $x_0$ and
# how many derivatives to show. The dashed line is the tangent at $x_0$; its slope is
# $f'(x_0)$, computed by a tape at that point. Here it is for $\tanh$:

# %% tags=["nbval-ignore-output"]
explorer = widgets.DerivativeExplorer(ad.tanh, x_range=(-3, 3), order=2)
explorer

# %% [markdown]
# (The tests do not compare the output of the cell above. All that a notebook file keeps of
# a live widget is ipywidgets' shortened text description of it, which changes with the
# ipywidgets version and says nothing about derivatives. The numbers and the picture are
# checked below instead.)
#
# The sliders need a running kernel. Setting the widget's `x0` from code moves the slider
# too, and `explorer.figure` draws the current view as an ordinary figure, which also shows
# in a static copy of this notebook:

# %%
explorer.x0 = 0.5
print("tanh(0.5)  =", round(explorer.value, 4))
print("tanh'(0.5) =", round(explorer.slope, 4), "  1 - tanh(0.5)^2 =", round(1 - np.tanh(0.5) ** 2, 4))
explorer.figure

# %% [markdown]
# Try it with the kernel running: move $x_0$ to where $\tanh''$ crosses zero (the tangent is
# steepest there), or raise the order to 4 and notice how quickly the higher derivatives
# grow.
#
# ## 5. A shortcut: `ad.functional.grad`
#
# `ad.functional.grad(f)` returns a *function* that computes $f'$ (it opens a tape, watches
# the argument, calls `f`, and asks for the gradient). Because the inner call happens while
# the outer tape records, `grad` composes, like $\frac{d}{dx}$ on paper:

# %%
grad = ad.functional.grad
quartic = lambda x: x ** 4

print("f'(1.5)   =", grad(quartic)(1.5))
print("f''(1.5)  =", grad(grad(quartic))(1.5))
print("f'''(1.5) =", grad(grad(grad(quartic)))(1.5))

# %% [markdown]
# Each level watches its own argument, so the trap of section 2 cannot happen here.
#
# ### The old form: `gradients_function`
#
# Older eager-mode tutorials write `gradients_function(f)`. It is the same idea with two
# differences: the new function differentiates with respect to **every** argument (or the
# ones listed in `params`) and always returns a **list**, one derivative per argument.
# `ad.gradients_function` keeps it, so those tutorials run; beside it, the same
# derivatives with a tape and with `ad.functional.grad`:

# %%
f2 = lambda x, y: x * x * y

print("gradients_function:", ad.gradients_function(f2)(3.0, 2.0))
x3, y2 = ad.constant(3.0), ad.constant(2.0)
with ad.GradientTape() as tape:
    tape.watch([x3, y2])
    out = f2(x3, y2)
print("a tape:            ", tape.gradient(out, [x3, y2]))
print("functional.grad:   ", ad.functional.grad(f2, argnums=(0, 1))(x3, y2))

# %% [markdown]
# Nesting works as with `grad`, with one catch: each level returns a list, so take element
# `[0]` before differentiating again.

# %%
d1 = lambda x: ad.gradients_function(quartic)(x)[0]
print("f''(1.5) with gradients_function:", ad.gradients_function(d1)(1.5)[0])
#
# ## 6. A gradient of a gradient at work: input-gradient regularization
#
# A model whose output jumps when its *input* changes a little is easy to fool: a small,
# invisible change of an image can flip a classifier's answer. One defence is to penalize
# the size of the **input gradient** $\nabla_x \text{out}$ during training, so that the
# model learns to be smooth in its input. Training needs the gradient of that penalty with
# respect to the **weights**: a derivative of a derivative, with respect to something else.
#
# 1. An inner tape watches only the input `x` (`watch_accessed_variables=False`: the weights
#    are not its business) and gives $g = \partial\,\text{out} / \partial x$.
# 2. The penalty is the norm of $g$.
# 3. The outer tape watches the layer's Variables (automatically), recorded both the forward
#    pass and the inner backward pass, and so can differentiate the penalty.

# %%
ad.random.set_seed(3)
x = ad.random.normal([6, 3])                   # 6 examples, 3 features
layer = ad.layers.Dense(4, activation="tanh")

with ad.GradientTape() as outer:
    with ad.GradientTape(watch_accessed_variables=False) as inner:
        inner.watch(x)
        out = ad.reduce_sum(layer(x) ** 2)
    input_gradient = inner.gradient(out, x)    # shape (6, 3), like x
    penalty = ad.norm(input_gradient)

grads = outer.gradient(penalty, layer.trainable_variables)
for variable, g in zip(layer.trainable_variables, grads):
    print(f"{variable.path:>14}: variable {tuple(variable.shape)}, gradient {tuple(g.shape)}")

# %% [markdown]
# One gradient per weight, shaped like it. A few steps of gradient descent on the penalty
# alone show that it works: the model becomes flatter in its input.
# (A real training step would add the penalty, times a small factor, to the usual loss.)

# %%
def input_gradient_norm(layer, x):
    with ad.GradientTape(watch_accessed_variables=False) as inner:
        inner.watch(x)
        out = ad.reduce_sum(layer(x) ** 2)
    return ad.norm(inner.gradient(out, x))


for step in range(16):
    with ad.GradientTape() as outer:
        penalty = input_gradient_norm(layer, x)
    if step % 5 == 0:
        print(f"step {step:2d}: |input gradient| = {float(penalty):.3f}")
    for variable, g in zip(layer.trainable_variables,
                           outer.gradient(penalty, layer.trainable_variables)):
        variable.assign_sub(0.1 * g)

# %% [markdown]
# ## Words of this lesson
#
# | word | what it means here |
# |---|---|
# | **nested tapes** | a tape opened inside another's block; the outer one records the inner one's backward pass |
# | **watched set** | the tensors one tape follows; every tape has its own |
# | **input gradient** | the gradient of a model's output with respect to its input, not its weights |
#
# ## Summary
#
# * A backward pass is made of ordinary operations, so a tape that records while another
#   tape computes its gradient can differentiate that gradient: nest one tape per derivative.
# * Put each `gradient` call inside the block of the tape that must differentiate it.
# * Each tape has its own watched set. A constant watched only by the inner tape has no
#   second derivative (`None`): the outer tape must `watch` it too.
# * Several tapes can record the same code, each following its own values.
# * `widgets.plot_derivatives` and `widgets.DerivativeExplorer` draw $f$ with its
#   derivatives; `ad.functional.grad` composes into `grad(grad(f))`.
# * Input-gradient regularization: an inner tape for $\partial\,\text{out}/\partial x$, an
#   outer tape for the derivative of its norm with respect to the weights.
#
# ## Exercises: predict the gradient
#
# For each exercise, work out the answer **on paper first**, then type it into
# `my_prediction` and run the cell. The check compares your prediction with the tape's
# answer (`None` counts as an answer too, and a shape is a tuple).

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
# **Exercise 1.** $y = x^3$ at $x = 2$, two nested tapes. What is $d^2y/dx^2$?

# %% tags=["solution"]
x = ad.Variable(2.0)
with ad.GradientTape() as outer:
    with ad.GradientTape() as inner:
        y = x ** 3
    dy_dx = inner.gradient(y, x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 12.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, outer.gradient(dy_dx, x),
      hint="differentiate x**3 twice, then put in x = 2")

# %% [markdown]
# **Exercise 2.** The same with a *constant* `k = 2`, watched by the inner tape only.
# What does the outer tape return?

# %% tags=["solution"]
k = ad.constant(2.0)
with ad.GradientTape() as outer:
    with ad.GradientTape() as inner:
        inner.watch(k)
        y = k ** 3
    dy_dk = inner.gradient(y, k)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = None
### END SOLUTION

# %% tags=["check"]
check(my_prediction, outer.gradient(dy_dk, k),
      hint="an outer tape records only operations on tensors it watches: does it watch k?")

# %% [markdown]
# **Exercise 3.** The first derivative is computed *after* the outer block has closed.
# $y = 5x^2$ at $x = 1$. What are the inner tape's first derivative and the outer tape's
# answer? (A list: `[dy_dx, outer.gradient(dy_dx, x)]`, each a number or `None`.)

# %% tags=["solution"]
x = ad.Variable(1.0)
with ad.GradientTape() as outer:
    with ad.GradientTape() as inner:
        y = 5.0 * x ** 2
dy_dx = inner.gradient(y, x)              # outside `outer`

my_prediction = ...  # [dy_dx, the outer tape's answer]
### BEGIN SOLUTION
my_prediction = [10.0, None]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, [dy_dx, outer.gradient(dy_dx, x)],
      hint="the inner tape saw y = 5 x**2 being computed; a tape records only while its "
           "with-block is open: when does inner.gradient run?")

# %% [markdown]
# **Exercise 4.** A mixed derivative. $y = x^2 z$ with $x = 3$ and $z = 2$ (both Variables).
# The inner tape differentiates with respect to $x$, the outer one with respect to $z$.
# What is $\frac{\partial}{\partial z}\frac{\partial y}{\partial x}$?

# %% tags=["solution"]
x = ad.Variable(3.0)
z = ad.Variable(2.0)
with ad.GradientTape() as outer:
    with ad.GradientTape() as inner:
        y = x * x * z
    dy_dx = inner.gradient(y, x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 6.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, outer.gradient(dy_dx, z),
      hint="the inner tape gives dy/dx = 2xz; differentiate that with respect to z")

# %% [markdown]
# **Exercise 5.** Two tapes side by side: `tape_p` watches `p = 2`, `tape_q` watches
# `q = 5`, and $y = p \cdot q^2$. Predict `tape_p.gradient(y, [p, q])`, a list of two
# entries, each a number or `None`. (Which records does `tape_p` hold?)

# %% tags=["solution"]
p = ad.constant(2.0)
q = ad.constant(5.0)
with ad.GradientTape(persistent=True) as tape_p, ad.GradientTape() as tape_q:
    tape_p.watch(p)
    tape_q.watch(q)
    y = p * ad.square(q)

my_prediction = ...  # tape_p's [dy/dp, dy/dq]
### BEGIN SOLUTION
my_prediction = [25.0, None]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape_p.gradient(y, [p, q]),
      hint="tape_p watches p, not q: which records did it keep, and for the source it "
           "follows, what does the product rule leave?")

# %% [markdown]
# **Exercise 6.** Composed `grad`: the third derivative of $\sin$ at $0$.

# %% tags=["solution"]
my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = -1.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, grad(grad(grad(ad.sin)))(0.0),
      hint="the derivatives of sin go round: sin, cos, -sin, -cos, sin...")

# %% [markdown]
# **Exercise 7.** Input-gradient regularization for a `Dense(2)` layer on inputs of shape
# `(5, 7)`. What shape does the gradient of the penalty with respect to the layer's kernel
# have?

# %% tags=["solution"]
ad.random.set_seed(0)
x = ad.random.normal([5, 7])
layer = ad.layers.Dense(2, activation="tanh")
with ad.GradientTape() as outer:
    penalty = input_gradient_norm(layer, x)
kernel_gradient = outer.gradient(penalty, layer.kernel)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = (7, 2)
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tuple(kernel_gradient.shape),
      hint="a gradient has the shape of its source: the kernel of a Dense(2) layer on 7 features")

# %% [markdown]
# **Next:** lesson 5 writes gradients by hand, with `ad.custom_gradient`. Lesson 8 keeps
# every output's derivative separate: Jacobians.
