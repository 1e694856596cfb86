# Lesson 6 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 06
# %% [markdown]
# # Lesson 6: Custom gradients, further
#
# Lesson 5 wrote gradient functions for functions of their inputs. This lesson handles
# the three situations that make custom gradients harder:
#
# 1. the function reads a **Variable** that is not one of its inputs;
# 2. an outer tape differentiates the gradient function again (**second derivatives**),
#    and `stop_gradient` or a nested custom gradient decides what it sees;
# 3. the model is **traced** (its Python runs once, and AutoGraph turns a Python `if` or loop
#    on a tensor into a graph op, whose gradient this lesson follows) and
#    **saved**, then loaded in another process, where the Python function is gone.
#
# Cells marked **Predict** have a blank for your guess and a check below it.

# %% [markdown]
# **Plan for one class hour**, part by part: reading the text (and any code it shows), running
# each cell, the predictions and the class exercises, as `scripts/lesson_minutes.py` counts
# them; what is left of the hour is for discussion.
#
# | part | minutes |
# |---|---|
# | introduction | 2 |
# | 1. Variables inside a custom gradient | 3 |
# | 2. Inside the function, only the rule counts | 6 |
# | 3. Nested custom gradients | 6 |
# | 4. Traced functions: the Python runs once | 16 |
# | 5. Custom gradients in saved models | 7 |
# | 6. Teaching moment: a custom gradient does not watch its inputs | 2 |
# | summary and the words of the lesson | 4 |
# | exercises 1 to 3 | 9 |
# | in all | 55 |
#
# Exercise 4 is homework.

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
from widgets.exercises import check  # None only matches None; numbers must be close

# %% [markdown]
# ## 1. Variables inside a custom gradient
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
# The `amplify` record now has two inputs, the argument and the variable, and its rule
# returns a gradient for each.

# %% [markdown]
# ## 2. Inside the function, only the rule counts
#
# Lesson 5's player showed the backward pass jump from a custom gradient's result to its
# inputs. What if the body itself blocks gradients?
#
# **Predict.** This `square_blocked` computes $x^2$ and wraps it in `ad.stop_gradient`,
# which would normally block every gradient. Its rule says $2x\,dy$. What is the gradient
# at $x = 3$: `None`, `0.0` or another number?

# %% tags=["solution"]
@ad.custom_gradient
def square_blocked(x):
    def grad_fn(dy):
        return dy * 2.0 * x
    return ad.stop_gradient(x * x), grad_fn

x = ad.Variable(3.0, name="x")
with ad.GradientTape() as tape:
    y = square_blocked(x)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 6.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, x),
      hint="the walk back from y meets the square_blocked record first: whose rule runs there?")

# %% [markdown]
# The ops in the body of a custom-gradient function are recorded, but the backward pass
# never walks through them: only the rule counts, so what the body does to *gradients*
# does not matter.
#
# `stop_gradient` *does* matter inside `grad_fn`. An outer tape records the ops of
# `grad_fn` while an inner tape's backward pass runs them (lesson 4), and differentiates
# them for the second derivative. A `stop_gradient` there tells the outer tape "treat this
# as a constant": the first derivative is unchanged, and the second loses that path.

# %%
def first_and_second(f, at):
    x = ad.constant(at)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy_dx = inner.gradient(y, x)
    return dy_dx, outer.gradient(dy_dx, x)

@ad.custom_gradient
def square(x):
    def grad_fn(dy):
        return dy * 2.0 * x
    return x * x, grad_fn

@ad.custom_gradient
def square_frozen_rule(x):
    def grad_fn(dy):
        return dy * 2.0 * ad.stop_gradient(x)     # x as a constant, for outer tapes
    return x * x, grad_fn

print("square:             first %s, second %s" % first_and_second(square, 3.0))
print("square_frozen_rule: first %s, second %s" % first_and_second(square_frozen_rule, 3.0))

# %% [markdown]
# The second derivative of `square_frozen_rule` is `None`: the only path from `x` to the
# first derivative went through `stop_gradient`. This is how "first-order approximations"
# are written, for instance the cheap variant of the meta-learning method MAML, which
# drops second derivatives on purpose.

# %% [markdown]
# ## 3. Nested custom gradients
#
# You can also control the *second* backward pass by making `grad_fn` itself a custom
# gradient. The inner custom gradient defines the derivative of the backward function
# **with respect to its own inputs**. So what happens when `x` is only *captured* from the
# outer function instead of being an input? **Predict**: is the second derivative `None`
# (the rule `backward_grad` says nothing about `x`), or a number (which)?

# %% tags=["solution"]
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

first, second = first_and_second(square_nested_captured, 3.0)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 2.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, second,
      hint="a custom gradient becomes one record only if a recording tape watches "
           "one of its inputs: is the seed dy watched?")

# %% tags=["reveal"]
print("captured x: first", first)

# %% [markdown]
# It is `2.0`, in TensorFlow 2 and here, and the reason is a rule about *when* a custom
# gradient is recorded as one op. A `custom_gradient` function becomes a single record
# only if some recording tape watches one of its inputs (or a variable it reads).
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
# ## 4. Traced functions: the Python runs once
#
# Saving a model (section 5) needs its computation as data, not as Python code.
# `ad.function(f)` gets it by **tracing**: the first call with a new input signature (the
# shapes and dtypes of the tensor arguments) runs `f`'s Python once and records its ops as a
# graph; later calls with that signature replay the graph and do not run the Python again.
#
# What happens to a Python `if` on a tensor's value? It runs once, while tracing, on the
# first call's value; if the graph only kept the branch taken then, every later call would
# take it too. Here is lesson 3's `clipped_square` ($x^2$ below 1, the constant 1 above),
# traced.
#
# **Predict.** The check cell calls it first with $x = 0.5$ (that call traces it), then with
# $x = 3$ (no new trace: same signature). What does the second call return?

# %% tags=["solution"]
@ad.function
def traced_clipped_square(x):
    if x < 1.0:                     # a Python if on a tensor's value
        return x * x
    return ad.constant(1.0)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 1.0
### END SOLUTION

# %% tags=["check"]
at_half = traced_clipped_square(ad.constant(0.5))               # traces
at_three = float(traced_clipped_square(ad.constant(3.0)))      # same signature: replays
check(my_prediction, at_three,
      hint="ad.function rewrites the function before it traces it: what could a graph "
           "hold instead of one branch?")

# %% tags=["reveal"]
print("x = 0.5:", at_half)
print("x = 3.0:", at_three)
print("traces:", traced_clipped_square.experimental_get_tracing_count())

# %% [markdown]
# 1.0, what the plain Python function gives, from the one trace made at $x = 0.5$. Before
# tracing, `ad.function` hands the function to **AutoGraph** (as `tf.function` does in
# TensorFlow 2): an `if` whose condition is a tensor becomes a call that, while tracing,
# traces *both* branches and stores them in one `If` node, which picks a branch on every
# call. `ad.autograph.to_code` shows the code that was traced (the `return`s became a
# `retval_` variable, the blocks became small functions), and the graph shows the `If` node
# with its two branches under it:

# %%
print(ad.autograph.to_code(traced_clipped_square))
print(traced_clipped_square.get_concrete_function(ad.constant(0.5)).graph)

# %% [markdown]
# `while` and `for` on tensors become `ad.while_loop` the same way, and you can write these
# ops yourself: `ad.cond(x < 1.0, lambda: x * x, lambda: ad.constant(1.0))`. The gradient
# of an `If` is the gradient of the branch that ran.
#
# With `ad.function(f, autograph=False)` the function is traced as written. Its `if` would
# have to decide once on a value that changes from call to call, so instead of keeping the
# first call's branch the trace refuses, with the error TensorFlow raises there:

# %%
def clipped_square(x):
    if x < 1.0:
        return x * x
    return ad.constant(1.0)

try:
    ad.function(clipped_square, autograph=False)(ad.constant(0.5))
except ad.errors.OperatorNotAllowedInGraphError as err:
    print(type(err).__name__ + ":", str(err).split(":")[0])

# %% [markdown]
# A choice made by an op needs no rewriting at all; both libraries trace it the same way:

# %%
@ad.function
def traced_clipped_square_ops(x):
    return ad.minimum(x * x, 1.0)   # an op, not a Python if: the graph keeps the choice

print("x = 0.5:", traced_clipped_square_ops(ad.constant(0.5)))
print("x = 3.0:", traced_clipped_square_ops(ad.constant(3.0)))

# %% [markdown]
# ### Loops in a graph, and their gradients
#
# A loop whose length is a tensor has the same problem as the `if`: traced once, a Python
# `for` would repeat the first call's count forever. AutoGraph turns `for _ in ad.range(n)`
# with a tensor `n` into one `While` node, which runs its body as many times as each call
# asks. `power` multiplies `x` by itself `n` times:
#
# **Predict.** The first call, with $n = 3$, traces `power`; the second, with $n = 5$, has the
# same signature (two scalar tensors), so it reuses that trace. What does it return at
# $x = 2$?

# %% tags=["solution"]
@ad.function
def power(x, n):
    y = ad.ones_like(x)
    for _ in ad.range(n):           # a loop over a tensor's count
        y = y * x
    return y

loop_prediction = ...  # your prediction
### BEGIN SOLUTION
loop_prediction = 32.0
### END SOLUTION

# %% tags=["check"]
power(ad.constant(2.0), ad.constant(3))                           # traces
check(loop_prediction, float(power(ad.constant(2.0), ad.constant(5))),
      hint="the While node decides on every call how often its body runs")

# %% [markdown]
# 32, with one trace. The converted code shows the loop handed to `ag__.for_stmt` with its
# body as a small function, and the graph holds a `While` node with a `cond` graph (is the
# counter below `n`?) and a `body` graph (one `Mul`, one step of the counter):

# %%
print("traces:", power.experimental_get_tracing_count())
print(ad.autograph.to_code(power))
print(power.get_concrete_function(ad.constant(2.0), ad.constant(5)).graph)

# %% [markdown]
# **How the loop's gradient is computed.** $\frac{d}{dx} x^5 = 5x^4 = 80$ at $x = 2$. A tape
# *outside* the traced function records each iteration's ops as the `While` node runs them:
# five `Mul` records, each keeping the `y` it multiplied. The backward pass walks them back,
# one iteration at a time, like any other ops on a tape.

# %%
x = ad.constant(2.0)
with ad.GradientTape() as tape:
    tape.watch(x)
    y = power(x, ad.constant(5))
print("recorded:", [record.op_type for record in tape.records])
print("dy/dx:", tape.gradient(y, x))

# %% [markdown]
# A tape *inside* a traced function cannot do that: while tracing, no iteration has run yet.
# There the gradient of the `While` node is another node, `WhileGrad`, that runs the loop
# again under a tape on every call: it **recomputes** the iterations' values instead of
# storing them. TensorFlow stores them instead: its traced loop pushes each iteration's
# values onto a stack (an *accumulator*, the `TensorListPushBack` op) and the gradient loop
# pops them in reverse. Both give the same numbers; recomputing costs time, storing costs
# memory.

# %%
@ad.function
def slope(x, n):
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = power(x, n)
    return tape.gradient(y, x)

print("at x = 2, n = 5:", slope(ad.constant(2.0), ad.constant(5)))
print("at x = 3, n = 2:", slope(ad.constant(3.0), ad.constant(2)))

# %% [markdown]
# **Keeping every iteration's value.** TensorFlow code writes each `y` into a
# `tf.TensorArray` in the loop and stacks it after; here, `ad.TensorArray`. Traced, it is
# one tensor that the `While` node grows by a row per `write`:

# %%
@ad.function
def powers(x, n):
    ta = ad.TensorArray(ad.float32, size=0, dynamic_size=True)
    y = ad.ones_like(x)
    for i in ad.range(n):
        y = y * x
        ta = ta.write(i, y)
    return ta.stack()

print(powers(ad.constant(2.0), ad.constant(3)), powers(ad.constant(2.0), ad.constant(5)))
print(powers.experimental_get_tracing_count())

# %% [markdown]
# ## 5. Custom gradients in saved models
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
# (the graphs) and an `.npz` file (the arrays). In a graph, a custom-gradient call is a node
# of type `IdentityN` (TensorFlow's name; on an eager tape the record carries the
# function's name). Let's look at how the `IdentityN` node was
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
# ## 6. Teaching moment: a custom gradient does not watch its inputs
#
# > TensorFlow's `tf.custom_gradient` documentation applies a two-input function to two
# > `tf.constant`s under a persistent tape, and calls `tape.watch` on both constants first.
# > Those two lines matter: leave them out and both gradients are `None`, in TensorFlow 2
# > and here, because the constants were never watched and nothing was recorded (lesson 1).
# > A custom gradient does not change what a tape watches.

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
# ## Words of this lesson
#
# | word | what it means here |
# |---|---|
# | **first-order approximation** | a rule that drops second derivatives on purpose (`stop_gradient` inside `grad_fn`) |
# | **tracing** | running a function's Python once to record its ops as a graph (`ad.function`) |
# | **input signature** | the shapes and dtypes of a traced function's tensor arguments; one trace each |
# | **AutoGraph** | the rewriting of Python `if`/`while`/`for` on tensors into graph ops (`ad.cond`, `ad.while_loop`), in `ad.function` as in `tf.function` |
# | **accumulator** | the stack a traced TensorFlow loop pushes each iteration's values onto, for its gradient loop to pop |
# | **saved model** | traced graphs and variables on disk, loadable without the Python code |
#
# ## Summary
#
# * A function that reads Variables needs `grad_fn(dy, variables=None)` returning
#   `(grad_inputs, grad_variables)`.
# * The ops inside a custom-gradient function are recorded but never differentiated: only
#   `grad_fn` counts. Written with library ops, `grad_fn` is differentiated again by outer
#   tapes; a `stop_gradient` inside it removes that path from the second derivative.
# * A nested custom gradient defines the derivative with respect to its *own inputs* only;
#   a captured value is differentiated through ordinary ops.
# * `ad.function` traces: the Python runs once per input signature. AutoGraph turns an
#   `if` on a tensor's value into an `If` node holding both branches (`ad.cond`), as
#   TensorFlow's `tf.function` makes a `tf.cond`; with `autograph=False` the trace refuses
#   such an `if` (`OperatorNotAllowedInGraphError`). Ops that choose (`ad.where`,
#   `ad.minimum`) need no rewriting.
* A loop over `ad.range(n)` with a tensor `n` becomes a `While` node. A tape outside the
  traced function records every iteration's ops and walks them back; a tape inside it gets a
  `WhileGrad` node that runs the loop again (ad recomputes where TensorFlow keeps each
  iteration's values in accumulators).
# * Saved models keep custom gradients only with
#   `SaveOptions(experimental_custom_gradients=True)`; test loading in a fresh process.
# * A custom gradient does not change what a tape watches: unwatched constants get `None`.
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
# **Exercise 1.** `product` (section 6) of two constants, `k = 7` watched and `j = 2` not
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
# **Exercise 2.** The same `product`, but neither constant is watched. The gradient with
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
# **Exercise 3.** `amplify` (section 1) with `gain = 2` on the signal `[1, 1, 1]`. The
# gradient of the output with respect to `gain`? (Careful: `grad_fn` prints a line too.)

# %% tags=["solution"]
ones = ad.constant([1.0, 1.0, 1.0])
with ad.GradientTape() as tape:
    out = amplify(ones)

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = 3.0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(out, gain),
      hint="d(gain * x)/d gain is x, summed over the elements of the output")

# %% [markdown]
# **Exercise 4 (homework).** `square_frozen_rule` (section 2) at `x = 5`: the first and
# the **second** derivative? (A list of two entries, each a number or `None`.)

# %% tags=["solution"]
first, second = first_and_second(square_frozen_rule, 5.0)

my_prediction = ...  # [first, second]
### BEGIN SOLUTION
my_prediction = [10.0, None]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, [first, second],
      hint="what does grad_fn return for an upstream 1? Then: which path from x to the first "
           "derivative does the outer tape see?")

# %% [markdown]
# **Next:** lesson 7 meets gradients that come out as `nan`, repairs them (with custom
# gradients and without), and gives a brand-new op its own gradient.
