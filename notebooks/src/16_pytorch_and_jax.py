# Lesson 16 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 16
#
# Every PyTorch and JAX block in the Markdown cells below is run against the real library
# by tests/compare/test_lesson16_pytorch_jax.py: a ```python block that starts with
# "# PyTorch" or "# JAX" must print exactly the ```text block after it (or, in an
# exercise, the answer of the solution cell after it). Keep them in step when editing.
# %% [markdown]
# # Lesson 16: The same ideas in PyTorch and JAX
#
# Most of you will meet PyTorch or JAX next. Neither has a `GradientTape`, yet both run the
# chain rule backwards from an output as this course's tape does: every op has a vjp, and a
# backward pass calls them in reverse order. What differs is **where the record of the
# computation lives** and **who decides when it is thrown away**:
#
# * `autodiff` (TensorFlow's names): you open a tape; it records what runs inside the
#   `with` block; you ask it for gradients.
# * PyTorch: each result of a recorded op carries a link to the op that made it
#   (`grad_fn`), so the record is a graph hanging off the tensors themselves;
#   `.backward()` walks it and **adds** the gradients into `.grad`.
# * JAX: `jax.grad(f)` takes a *function* and returns a new function; the tracing happens
#   inside it, each time you call it.
#
# The `autodiff` side runs live, as usual. The PyTorch and JAX code is shown with what it
# printed; paste it into a notebook that has `torch` or `jax` (run a library's blocks in
# order: later ones reuse names; on a course hub they are there if your teacher chose
# lesson 16's option). The course's tests run every block against PyTorch 2.13 and
# JAX 0.10 and check that it still prints what is shown.
#
# **You will learn**
# 1. the same derivative three ways, and where each library keeps its record;
# 2. PyTorch's `.backward()`, `.grad` that accumulates, `retain_graph`, `torch.autograd.grad`;
# 3. switching gradients off, and what an unused input gets: `None`, an error, or zeros;
# 4. higher derivatives: nested tapes, `create_graph=True`, `jax.grad(jax.grad(f))`;
# 5. per-example gradients with JAX's `vmap`;
# 6. jvp and vjp, the two products underneath all three libraries.
#
# Custom gradients and checkpointing in the three libraries are an appendix to read after
# class. Cells marked **Predict** have a blank for your guess and a check below it.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 5 |
# | 1. One derivative, three records | 4 |
# | 2. PyTorch: the graph lives on the tensors, and `.grad` adds up | 5 |
# | 3. Switching gradients off, and inputs that are not used | 9 |
# | 4. Higher derivatives | 4 |
# | 5. Per-example gradients with `vmap` | 7 |
# | 6. jvp and vjp: the two products underneath | 5 |
# | summary | 3 |
# | exercises 1 to 3 | 12 |
# | in all | 54 |
#
# Exercises 4 to 6 are homework. The appendix is reading for after the hour.

# %%
import numpy as np

import autodiff as ad
from widgets.exercises import check  # None only matches None; numbers must be close

# %% [markdown]
# ## 1. One derivative, three records
#
# Take $f(x) = x^3 + \sin x$ at $x = 2$, so $f'(2) = 3 \cdot 2^2 + \cos 2 \approx 11.5839$.
# On the tape, you have seen it many times; print the tape to see its records:

# %%
x = ad.Variable(2.0, name="x")
with ad.GradientTape() as tape:
    y = x ** 3 + ad.sin(x)

print(tape)
print("dy/dx =", tape.gradient(y, x).numpy())

# %% [markdown]
# In PyTorch you mark the tensor whose gradient you want with `requires_grad=True`. From
# then on every op that uses it stores, in its result, a `grad_fn`: the node that knows the
# op's vjp, linked to the nodes of its inputs. `y.backward()` walks those links back from
# `y` and leaves the answer in `x.grad`:
#
# ```python
# # PyTorch
# import torch
#
# x = torch.tensor(2.0, requires_grad=True)
# y = x ** 3 + torch.sin(x)
# print(y.grad_fn.name(), [node.name() for node, _ in y.grad_fn.next_functions])
# y.backward()
# print(x.grad)
# ```
#
# ```text
# AddBackward0 ['PowBackward0', 'SinBackward0']
# tensor(11.5839)
# ```
#
# The same three ops as the tape's three records (`Pow`, `Sin`, `AddV2`), but stored the
# other way round: the tape is a list in the order the ops ran, the graph is reached from
# its end.
#
# In JAX you write the function and transform it. `jax.make_jaxpr` shows what JAX records
# when it traces `f`: a little program, again with the same three ops.
#
# ```python
# # JAX
# import jax
# import jax.numpy as jnp
#
# def f(x):
#     return x ** 3 + jnp.sin(x)
#
# print(jax.make_jaxpr(f)(2.0))
# print(jax.grad(f)(2.0))
# ```
#
# ```text
# { lambda ; a:f32[]. let
#     b:f32[] = integer_pow[y=3] a
#     c:f32[] = sin a
#     d:f32[] = add b c
#   in (d,) }
# 11.583853
# ```
#
# `ad.functional.grad` is the same idea written on top of the tape (`autodiff/functional.py`:
# a tape inside a function, about ten lines).

# %% [markdown]
# ## 2. PyTorch: the graph lives on the tensors, and `.grad` adds up
#
# A non-persistent tape answers one `gradient` call and then frees its records. You have
# seen the error a second call gets:

# %%
x = ad.Variable(2.0)
with ad.GradientTape() as tape:
    y = x ** 3 + ad.sin(x)

print(tape.gradient(y, x).numpy())
try:
    tape.gradient(y, x)
except RuntimeError as error:
    print("RuntimeError:", error)

# %% [markdown]
# PyTorch frees the tensors each node saved for its vjp as soon as `backward()` has used
# them, so a second walk over the same graph fails in the same way. `retain_graph=True`
# keeps them, the counterpart of `persistent=True`:
#
# ```python
# # PyTorch
# x = torch.tensor(2.0, requires_grad=True)
# y = x ** 3 + torch.sin(x)
# y.backward()
# try:
#     y.backward()
# except RuntimeError as error:
#     print("RuntimeError:", str(error).split(".")[0])
#
# x = torch.tensor(2.0, requires_grad=True)
# y = x ** 3 + torch.sin(x)
# y.backward(retain_graph=True)
# print(x.grad)
# y.backward()
# print(x.grad)
# ```
#
# ```text
# RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed)
# tensor(11.5839)
# tensor(23.1677)
# ```
#
# Look at the last line. The second `backward()` did not *replace* `x.grad`, it **added**
# to it: $11.5839 + 11.5839$. PyTorch always accumulates into `.grad`. That is handy when a
# batch is too big for memory and you call `backward()` on its pieces one after another,
# and it is why every PyTorch training loop calls `optimizer.zero_grad()` (or sets
# `x.grad = None`) before each step. A tape never accumulates: each `gradient` call
# returns a new tensor, and if you want a sum you add it yourself.
#
# When you want a gradient *returned* rather than stored, PyTorch has
# `torch.autograd.grad(outputs, inputs)`, the closest thing to `tape.gradient`. It returns
# a tuple, one entry per input, and leaves `.grad` alone:
#
# ```python
# # PyTorch
# x = torch.tensor(2.0, requires_grad=True)
# y = x ** 3 + torch.sin(x)
# print(torch.autograd.grad(y, x), x.grad)
# ```
#
# ```text
# (tensor(11.5839),) None
# ```
#
# JAX has nothing to free and nothing to accumulate: `jax.grad(f)` is a function, and each
# call traces `f` afresh and returns a new array. Calling it twice gives the same answer
# twice.
#
# ## 3. Switching gradients off, and inputs that are not used
#
# Three ways to say "do not differentiate through this value": `ad.stop_gradient(v)`,
# PyTorch's `v.detach()` and JAX's `jax.lax.stop_gradient(v)`. Each returns the same
# numbers, cut off from what made them.
#
# **Predict.** $y = x \cdot \text{stop\_gradient}(x)$ at $x = 3$. What is $dy/dx$?

# %% tags=["solution"]
x = ad.Variable(3.0)
with ad.GradientTape() as tape:
    y = x * ad.stop_gradient(x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 3.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, x),
      hint="the stopped factor is a constant as far as the gradient is concerned")

# %% [markdown]
# The same cut in the other two libraries:
#
# ```python
# # PyTorch
# x = torch.tensor(3.0, requires_grad=True)
# y = x * x.detach()
# y.backward()
# print(x.grad)
# ```
#
# ```text
# tensor(3.)
# ```
#
# ```python
# # JAX
# print(jax.grad(lambda x: x * jax.lax.stop_gradient(x))(3.0))
# ```
#
# ```text
# 3.0
# ```
#
# To stop recording a whole block, a tape has `tape.stop_recording()` and PyTorch has
# `torch.no_grad()`. Results computed under `no_grad` have no `grad_fn`, the way nothing
# inside `stop_recording()` leaves a record on the tape. JAX needs neither: only what
# happens inside the function given to `jax.grad` is traced.
#
# ```python
# # PyTorch
# with torch.no_grad():
#     z = x * x
# print(z.requires_grad, z.grad_fn)
# ```
#
# ```text
# False None
# ```
#
# ### An input the result does not use
#
# Lesson 3 was about this moment: ask for the gradient with respect to something the
# target does not depend on. The three libraries give three different answers. On the
# tape it is `None` (or zeros, if you ask for them with `unconnected_gradients`):

# %%
x = ad.Variable(3.0)
z = ad.Variable(5.0)
with ad.GradientTape(persistent=True) as tape:
    y = x * x

print(tape.gradient(y, [x, z]))
print(tape.gradient(y, [x, z], unconnected_gradients="zero"))
del tape

# %% [markdown]
# PyTorch's `torch.autograd.grad` refuses, unless you say that an unused input is fine;
# then it gives `None`, as the tape does, or zeros with `materialize_grads=True`.
# (`backward()` simply leaves the unused tensor's `.grad` at `None`.)
#
# ```python
# # PyTorch
# x = torch.tensor(3.0, requires_grad=True)
# z = torch.tensor(5.0, requires_grad=True)
# try:
#     torch.autograd.grad(x * x, [x, z])
# except RuntimeError as error:
#     print("RuntimeError:", error)
# print(torch.autograd.grad(x * x, [x, z], allow_unused=True))
# print(torch.autograd.grad(x * x, [x, z], allow_unused=True, materialize_grads=True))
# ```
#
# ```text
# RuntimeError: The differentiated Tensor at index 1 appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.
# (tensor(6.), None)
# (tensor(6.), tensor(0.))
# ```
#
# JAX gives zeros: `jax.grad` differentiates a *function* with respect to its arguments,
# and a function that ignores a float argument has derivative zero in it. (The `argnums`
# tuple picks which arguments to differentiate.) An argument given as a Python `int` is
# refused, used or not, with a `TypeError` ("grad requires real- or complex-valued
# inputs"): write `5.0`, not `5`.
#
# ```python
# # JAX
# dx, dz = jax.grad(lambda x, z: x * x, argnums=(0, 1))(3.0, 5.0)
# print(dx, dz)
# ```
#
# ```text
# 6.0 0.0
# ```
#
# `ad.functional.grad` follows JAX here (zeros), while `tape.gradient` follows TensorFlow
# (`None`).
#
# ## 4. Higher derivatives
#
# On a tape, a gradient computed while an outer tape records is itself recorded, so the
# outer tape can differentiate it (lesson 4). If the inner `gradient` call runs *after* the
# outer tape has stopped, the outer tape never saw it and answers `None`:

# %%
x = ad.constant(1.0)
with ad.GradientTape() as outer:
    outer.watch(x)
    with ad.GradientTape() as inner:
        inner.watch(x)
        y = x ** 4
    dy = inner.gradient(y, x)          # inside the outer tape: recorded
print("inside: ", dy.numpy(), outer.gradient(dy, x).numpy())

with ad.GradientTape() as outer:
    outer.watch(x)
    with ad.GradientTape() as inner:
        inner.watch(x)
        y = x ** 4
dy = inner.gradient(y, x)              # after the outer tape closed: not recorded
print("outside:", dy.numpy(), outer.gradient(dy, x))

# %% [markdown]
# PyTorch's switch is `create_graph=True`: the backward pass then builds a graph of its own,
# and the gradient has a `grad_fn` you can differentiate again. Without it the gradient is a
# plain tensor, and differentiating it raises an error instead of giving `None`:
#
# ```python
# # PyTorch
# x = torch.tensor(1.0, requires_grad=True)
# (dy,) = torch.autograd.grad(x ** 4, x, create_graph=True)
# (d2y,) = torch.autograd.grad(dy, x)
# print(dy, d2y)
#
# (dy,) = torch.autograd.grad(x ** 4, x)
# try:
#     torch.autograd.grad(dy, x)
# except RuntimeError as error:
#     print("RuntimeError:", error)
# ```
#
# ```text
# tensor(4., grad_fn=<MulBackward0>) tensor(12.)
# RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn
# ```
#
# In JAX a gradient is a function like any other, so you just apply `jax.grad` twice:
#
# ```python
# # JAX
# print(jax.grad(jax.grad(lambda x: x ** 4))(1.0))
# ```
#
# ```text
# 12.0
# ```
#
# ## 5. Per-example gradients with `vmap`
#
# A batch's loss is usually the mean of one loss per example, and its gradient is then
# the mean of the examples' gradients: each example's own gradient is lost in the
# average. Sometimes you need them one by one (to clip each, as differentially private
# training does, or to find the examples that pull hardest).
#
# On a tape, the per-example gradients are the Jacobian of the **vector** of per-example
# losses with respect to the weights: row $i$ is the gradient of loss $i$ (lesson 8).
#
# **Predict.** Four examples, weights of shape `(3,)`. What shape has
# `tape.jacobian(losses, w)`?

# %% tags=["solution"]
w = ad.Variable([1.0, -1.0, 0.5])
xs = ad.constant(np.arange(12.0, dtype=np.float32).reshape(4, 3) / 10)
ys = ad.constant([0.0, 1.0, 2.0, 3.0])
with ad.GradientTape() as tape:
    losses = (ad.linalg.matvec(xs, w) - ys) ** 2      # one loss per example, shape (4,)
per_example = tape.jacobian(losses, w)

my_prediction = ...  # a shape, as a tuple
### BEGIN SOLUTION
my_prediction = (4, 3)
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tuple(per_example.shape),
      hint="what is a Jacobian's shape made of (lesson 8)? Here the target is the losses")

# %% tags=["reveal"]
print(per_example.numpy())

# %% [markdown]
# `tape.jacobian` gets them in one backward pass that carries a stack of cotangents
# (lesson 8), and `ad.vectorized_map` (lesson 15) from a function of one example.
#
# JAX has a transformation for it. `jax.vmap(g)` turns a function `g` of one example into
# a function of a batch; `in_axes=(None, 0, 0)` says "the weights are shared, `xs` and
# `ys` are batched along their first axis". Applied to `jax.grad(loss)`, it gives the same
# rows as the tape (up to float32 round-off in the last digit):
#
# ```python
# # JAX
# def loss(w, x, y):
#     return (jnp.dot(x, w) - y) ** 2
#
# w = jnp.array([1.0, -1.0, 0.5])
# xs = jnp.arange(12.0).reshape(4, 3) / 10
# ys = jnp.array([0.0, 1.0, 2.0, 3.0])
# per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
# print(per_example)
# ```
#
# ```text
# [[ 0.          0.          0.        ]
#  [-0.51000005 -0.68       -0.85      ]
#  [-2.04       -2.3799999  -2.72      ]
#  [-4.59       -5.1        -5.61      ]]
# ```
#
# PyTorch has the same two transformations in `torch.func`, its JAX-style corner:
# `torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))` gives the same rows.
#
# ## 6. jvp and vjp: the two products underneath
#
# Every one of these functions is built from two products with the Jacobian $J$ of $f$ at
# $x$ (lesson 10):
#
# * the **jvp** $J v$: push a tangent $v$ forward, alongside the values (forward mode);
# * the **vjp** $u^\top J$: pull a cotangent $u$ back from the output (reverse mode).
#
# | | `autodiff` | PyTorch | JAX |
# |---|---|---|---|
# | jvp | `ad.autodiff.ForwardAccumulator(x, v)`, then `acc.jvp(y)` | `torch.func.jvp(f, (x,), (v,))` | `jax.jvp(f, (x,), (v,))` |
# | vjp | `tape.gradient(y, x, output_gradients=u)` | `torch.autograd.grad(y, x, grad_outputs=u)` | `jax.vjp(f, x)`, then `vjp_fn(u)` |
#
# A plain gradient is the vjp with $u = 1$. That is why a tape, asked for the gradient of a
# **vector** target, differentiates its sum ($u$ = all ones, lesson 1), while PyTorch and
# JAX refuse to guess $u$:
#
# ```python
# # PyTorch
# x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
# try:
#     (x ** 2).backward()
# except RuntimeError as error:
#     print("RuntimeError:", error)
# print(torch.autograd.grad(x ** 2, x, grad_outputs=torch.tensor([1.0, 0.0, 1.0])))
# ```
#
# ```text
# RuntimeError: grad can be implicitly created only for scalar outputs
# (tensor([2., 0., 6.]),)
# ```
#
# ```python
# # JAX
# try:
#     jax.grad(lambda x: x ** 2)(jnp.array([1.0, 2.0, 3.0]))
# except TypeError as error:
#     print("TypeError:", error)
# y, vjp_fn = jax.vjp(lambda x: x ** 2, jnp.array([1.0, 2.0, 3.0]))
# print(vjp_fn(jnp.array([1.0, 0.0, 1.0])))
# y, y_dot = jax.jvp(lambda x: x ** 3, (2.0,), (0.5,))
# print(y, y_dot)
# ```
#
# ```text
# TypeError: Gradient only defined for scalar-output functions. Output had shape: (3,).
# (Array([2., 0., 6.], dtype=float32),)
# 8.0 6.0
# ```
#
# The same three answers from `autodiff`:

# %%
x = ad.constant([1.0, 2.0, 3.0])
with ad.GradientTape() as tape:
    tape.watch(x)
    y = x ** 2
print("vjp with u = [1, 0, 1]:", tape.gradient(y, x, output_gradients=ad.constant([1.0, 0.0, 1.0])).numpy())

x = ad.constant(2.0)
with ad.autodiff.ForwardAccumulator(x, ad.constant(0.5)) as acc:
    y = x ** 3
print("jvp of x**3 at 2 with v = 0.5:", y.numpy(), acc.jvp(y).numpy())

# %% [markdown]
# `jax.vjp` runs `f` once and hands back `vjp_fn`, which you may call with many
# cotangents: that is a persistent tape in disguise (`ad.functional.vjp` is written exactly
# that way).
#
# ## Summary: one table for three libraries
#
# | the idea | `autodiff` (TensorFlow's names) | PyTorch | JAX |
# |---|---|---|---|
# | what is recorded | ops inside `with ad.GradientTape()` | ops on tensors with `requires_grad=True` | the function given to `jax.grad` |
# | a gradient | `tape.gradient(y, x)` | `y.backward()` then `x.grad`, or `torch.autograd.grad(y, x)` | `jax.grad(f)(x)` |
# | a second gradient from one record | `persistent=True` | `retain_graph=True` | `jax.vjp`'s `vjp_fn`, called again (each call of `jax.grad(f)` traces anew) |
# | repeated gradients | each call returns a new tensor | **added** into `.grad`; `zero_grad()` | each call returns a new array |
# | stop one value | `ad.stop_gradient(v)` | `v.detach()` | `jax.lax.stop_gradient(v)` |
# | stop a block | `tape.stop_recording()` | `torch.no_grad()` | not needed |
# | an unused input | `None` | an error; `None` with `allow_unused=True` | zeros |
# | a vector target | its sum is differentiated | an error without `grad_outputs` | `TypeError`: use `jax.vjp` |
# | higher derivatives | nested tapes | `create_graph=True` | `jax.grad(jax.grad(f))` |
# | Jacobian | `tape.jacobian` | `torch.func.jacrev`, `torch.func.jacfwd` | `jax.jacrev`, `jax.jacfwd` |
# | per-example gradients | `tape.jacobian` of the losses, or `ad.vectorized_map` | `torch.func.vmap(torch.func.grad(loss))` | `jax.vmap(jax.grad(loss))` |
# | vjp | `tape.gradient(..., output_gradients=u)` | `torch.autograd.grad(..., grad_outputs=u)` | `jax.vjp` |
# | jvp | `ad.autodiff.ForwardAccumulator` | `torch.func.jvp` | `jax.jvp` |
# | custom gradient | `ad.custom_gradient` | `torch.autograd.Function` | `jax.custom_vjp` |
# | recompute, not remember | `ad.recompute_grad` | `torch.utils.checkpoint.checkpoint` | `jax.checkpoint` |
#
# ## Exercises: predict the gradient
#
# Each exercise shows PyTorch or JAX code without its output. Work out what it prints **on
# paper first**, type it into `my_prediction`, and run the cell. The check runs the same
# computation on the tape (the tests of this course make sure PyTorch and JAX print the
# same answer).

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
# **Exercise 1.** What does the last line print (as a number)?
#
# ```python
# # PyTorch
# x = torch.tensor(3.0, requires_grad=True)
# (x * x).backward()
# (2 * x).backward()
# print(x.grad.item())
# ```

# %% tags=["solution"]
x = ad.Variable(3.0)
with ad.GradientTape() as tape_1:
    y_1 = x * x
with ad.GradientTape() as tape_2:
    y_2 = 2 * x
x_grad = tape_1.gradient(y_1, x) + tape_2.gradient(y_2, x)   # what PyTorch's .grad holds

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 8.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, x_grad,
      hint="each backward() adds its gradient into x.grad: what are the two gradients?")

# %% [markdown]
# **Exercise 2.** What does JAX print, as a list `[dx, dz]`? Then: what does the tape give
# for the same function, `tape.gradient(y, [x, z])`?
#
# ```python
# # JAX
# dx, dz = jax.grad(lambda x, z: x * x + 1.0, argnums=(0, 1))(4.0, 5.0)
# print([float(dx), float(dz)])
# ```

# %% tags=["solution"]
my_prediction = ...  # JAX's [dx, dz]
### BEGIN SOLUTION
my_prediction = [8.0, 0.0]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, ad.functional.grad(lambda x, z: x * x + 1.0, argnums=(0, 1))(4.0, 5.0),
      hint="jax.grad differentiates a function of both arguments; how does it change with z?")

# %% tags=["solution"]
x = ad.Variable(4.0)
z = ad.Variable(5.0)
with ad.GradientTape() as tape:
    y = x * x + 1.0

my_prediction = ...  # the tape's [dx, dz]
### BEGIN SOLUTION
my_prediction = [8.0, None]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, [x, z]),
      hint="the tape keeps TensorFlow's convention for a source the target never used")

# %% [markdown]
# **Exercise 3.** A vjp with a cotangent of ones. What does the last line print (as a
# list)?
#
# ```python
# # JAX
# y, vjp_fn = jax.vjp(jnp.cumsum, jnp.array([5.0, -1.0, 2.0]))
# (x_bar,) = vjp_fn(jnp.ones(3))
# print(x_bar.tolist())
# ```

# %% tags=["solution"]
x = ad.constant([5.0, -1.0, 2.0])
with ad.GradientTape() as tape:
    tape.watch(x)
    y = ad.cumsum(x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [3.0, 2.0, 1.0]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, x, output_gradients=ad.ones([3])),
      hint="write out the three running totals; how much does their sum grow when one x_j "
           "grows by 1?")

# %% [markdown]
# **Exercise 4 (homework).** Per-example gradients of $(w \cdot x)^2$, three examples, two
# weights. What shape does `per_example` have?
#
# ```python
# # JAX
# def loss(w, x):
#     return jnp.dot(x, w) ** 2
#
# per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0))(jnp.ones(2), jnp.ones((3, 2)))
# print(per_example.shape)
# ```

# %% tags=["solution"]
w = ad.Variable(ad.ones([2]))
xs = ad.ones([3, 2])
with ad.GradientTape() as tape:
    losses = ad.linalg.matvec(xs, w) ** 2

my_prediction = ...  # a shape, as a tuple
### BEGIN SOLUTION
my_prediction = (3, 2)
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tuple(tape.jacobian(losses, w).shape),
      hint="one gradient per example, each shaped like the weights")

# %% [markdown]
# **Exercise 5 (homework).** A jvp. What are the value and the tangent, as a list
# `[y, y_dot]`?
#
# ```python
# # JAX
# y, y_dot = jax.jvp(lambda x: x ** 2 + 3.0 * x, (1.0,), (2.0,))
# print([float(y), float(y_dot)])
# ```

# %% tags=["solution"]
x = ad.constant(1.0)
with ad.autodiff.ForwardAccumulator(x, ad.constant(2.0)) as acc:
    y = x ** 2 + 3.0 * x

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = [4.0, 10.0]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, [y, acc.jvp(y)],
      hint="the tangent is f'(x) times v")

# %% [markdown]
# **Exercise 6 (homework).** A second derivative in PyTorch. What does the last line print
# (as a number)?
#
# ```python
# # PyTorch
# x = torch.tensor(2.0, requires_grad=True)
# (dy,) = torch.autograd.grad(x ** 3, x, create_graph=True)
# (d2y,) = torch.autograd.grad(dy, x)
# print(d2y.item())
# ```

# %% tags=["solution"]
x = ad.constant(2.0)
with ad.GradientTape() as outer:
    outer.watch(x)
    with ad.GradientTape() as inner:
        inner.watch(x)
        y = x ** 3
    dy = inner.gradient(y, x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 12.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, outer.gradient(dy, x),
      hint="differentiate x**3 twice, then put x = 2")

# %% [markdown]
# ## Appendix, after class: your own gradient, and less memory
#
# ### Custom gradients
#
# Here is a function that does nothing going forward and clips the gradient going back
# (a common trick to tame exploding gradients). On the tape it is `ad.custom_gradient`
# (lessons 5 and 6): return the value and a function from the upstream gradient to yours.

# %%
@ad.custom_gradient
def clip_gradient(x):
    def grad(upstream):
        return ad.clip_by_value(upstream, -1.0, 1.0)
    return ad.identity(x), grad

x = ad.constant(2.0)
with ad.GradientTape() as tape:
    tape.watch(x)
    y = clip_gradient(x) ** 3          # dy/dx would be 12
print(tape.gradient(y, x).numpy())

# %% [markdown]
# JAX splits the same thing into three pieces: the function, a forward rule that also
# returns what the backward rule will need (the *residuals*; here nothing), and the
# backward rule, which returns a tuple with one gradient per argument:
#
# ```python
# # JAX
# @jax.custom_vjp
# def clip_gradient(x):
#     return x
#
# def clip_gradient_fwd(x):
#     return x, None
#
# def clip_gradient_bwd(residuals, upstream):
#     return (jnp.clip(upstream, -1.0, 1.0),)
#
# clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)
# print(jax.grad(lambda x: clip_gradient(x) ** 3)(2.0))
# ```
#
# ```text
# 1.0
# ```
#
# PyTorch puts the two rules in a class; residuals go into `ctx` (with
# `ctx.save_for_backward`), where `ad.custom_gradient` keeps them in the closure. `forward`
# returns `x.clone()`, a new tensor with the same numbers, where `ad.custom_gradient`'s
# version returns `ad.identity(x)`: the result is a tensor of its own, which PyTorch links
# to the class's `backward` (its `grad_fn` is a `ClipGradientBackward` node), while `x`
# stays the leaf it was.
#
# ```python
# # PyTorch
# class ClipGradient(torch.autograd.Function):
#     @staticmethod
#     def forward(ctx, x):
#         return x.clone()
#
#     @staticmethod
#     def backward(ctx, upstream):
#         return upstream.clamp(-1.0, 1.0)
#
# x = torch.tensor(2.0, requires_grad=True)
# (ClipGradient.apply(x) ** 3).backward()
# print(x.grad)
# ```
#
# ```text
# tensor(1.)
# ```
#
# ### Recomputing instead of remembering
#
# Reverse mode must keep every value a vjp needs until the backward pass reaches it, so its
# memory grows with the length of the computation (lesson 15). All three libraries can
# trade time for that memory: wrap a block, and its inner values are *not* kept; the block
# runs again during the backward pass to get them back. The gradient does not change.
# `autodiff` has `ad.recompute_grad(f)` (TensorFlow's `tf.recompute_grad`), PyTorch has
# `torch.utils.checkpoint.checkpoint(f, x)` and JAX has `jax.checkpoint(f)`. On the tape,
# the whole block becomes **one** record, and a counter shows that `block` runs twice: once
# going forward, once more when `gradient` reaches its record.

# %%
calls = 0

def block(x):
    global calls
    calls += 1
    return ad.sin(ad.sin(x))

x = ad.constant(1.0)
with ad.GradientTape() as tape:
    tape.watch(x)
    y = ad.recompute_grad(block)(x)
print("records:", [record.op_type for record in tape.records])
dy_dx = tape.gradient(y, x)
print("calls:", calls, "  dy/dx:", f"{float(dy_dx.numpy()):.4f}")

# %% [markdown]
# PyTorch's version runs the Python function twice too. `use_reentrant=False` picks the
# newer of its two ways of checkpointing, the one PyTorch recommends; it wants the choice
# written out (PyTorch 2.13 warns when it is missing). The older way,
# `use_reentrant=True`, gives the weights a block uses no gradient at all when none of the
# block's *inputs* requires one ("None of the inputs have requires_grad=True"):
#
# ```python
# # PyTorch
# calls = 0
#
# def block(x):
#     global calls
#     calls += 1
#     return torch.sin(torch.sin(x))
#
# x = torch.tensor(1.0, requires_grad=True)
# y = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
# y.backward()
# print(calls, x.grad)
# ```
#
# ```text
# 2 tensor(0.3600)
# ```
#
# JAX traces the Python function only once; the recomputation is written into the traced
# program (`jax.make_jaxpr` of the gradient shows the block's `sin` again inside a
# `remat` step of the backward pass):
#
# ```python
# # JAX
# def block(x):
#     return jnp.sin(jnp.sin(x))
#
# print(jax.grad(jax.checkpoint(block))(1.0), jax.grad(block)(1.0))
# ```
#
# ```text
# 0.36003947 0.36003947
# ```

# %% [markdown]
# **Next:** take one of your own PyTorch or JAX training loops and find, for each line, the
# tape operation that does the same job; the table above is the dictionary.
