# Lesson 15 source (percent format). Edit this file, then rebuild the notebook:
#     python scripts/build_notebooks.py 15
#
# Every sentence below that says what TensorFlow does is run against TensorFlow by
# tests/conformance/test_lesson15_claims.py. Keep them in step when editing.
# %% [markdown]
# # Lesson 15: Memory and per-example gradients
#
# Reverse mode gives the whole gradient for the price of about one extra pass, whatever
# the number of parameters. There is a catch, and this lesson is about it: the backward
# pass runs **after** the forward pass, so everything its VJPs will read must still be
# there when it starts. The tape is not just a list of op names; it holds arrays.
#
# **You will learn**
# 1. what a tape keeps, record by record, counted with `ad.debugging.tape_memory`;
# 2. why that memory grows with the depth of a network and the size of the batch;
# 3. checkpointing with `ad.recompute_grad`: the same gradients, far less kept, one more
#    forward pass;
# 4. per-example gradients three ways (a loop of tapes, `batch_jacobian` on copies of the
#    weights, `vectorized_map`) and what each one costs;
# 5. a use for them: the example with a wrong label stands out.
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
# | 1. What a tape keeps | 7 |
# | 2. Memory grows with depth and with the batch | 6 |
# | 3. Checkpointing: keep less, compute again | 10 |
# | 4. Per-example gradients, three ways | 13 |
# | 5. The example that pulls hardest | 2 |
# | summary | 2 |
# | exercises 1 to 3 | 12 |
# | in all | 55 |
#
# Exercises 4 to 6 are homework.

# %%
%matplotlib inline
%config InlineBackend.figure_formats = ['png']
import matplotlib.pyplot as plt
import numpy as np

import autodiff as ad
from widgets.exercises import check  # None only matches None; numbers must be close

# %% [markdown]
# ## 1. What a tape keeps
#
# Two `tanh` layers on a batch of 256 examples with 64 features each. Every activation is
# a `(256, 64)` float32 array: 256 × 64 × 4 = 65,536 bytes.

# %%
ad.random.set_seed(0)
x = ad.random.normal([256, 64])
w1 = ad.Variable(ad.random.normal([64, 64]) * 0.2, name="w1")
w2 = ad.Variable(ad.random.normal([64, 64]) * 0.2, name="w2")

with ad.GradientTape() as tape:
    h = ad.tanh(x @ w1)
    out = ad.tanh(h @ w2)
    loss = ad.reduce_mean(ad.square(out))

print(tape)

# %% [markdown]
# Each op's VJP needs something from the forward pass, and the record keeps exactly that
# (the rest of a record is shapes and dtypes only):
#
# * `MatMul`: $\partial(AB)/\partial A$ uses $B$ and $\partial(AB)/\partial B$ uses $A$, so
#   it keeps **both inputs**;
# * `Tanh`: $\tanh'(z) = 1 - \tanh^2(z)$ is written with the **output**, so it keeps that;
# * `Square` keeps its input ($2x$), `Mean` only a shape (and its one-number result).
#
# `ad.debugging.tape_memory(tape)` walks the records and adds up the arrays they keep,
# each array once. `per_record` says how many bytes each record is the first to keep;
# here are the first two:

# %%
memory = ad.debugging.tape_memory(tape)
print(memory)
for record, kept in list(zip(tape.records, memory.per_record))[:2]:
    print(f"  {record.op_type:7} keeps {kept:7,} new bytes")

# %% [markdown]
# The first `MatMul` keeps `x` (65,536 bytes) and `w1` (64 × 64 × 4 = 16,384). The first
# `Tanh` keeps `h`.
#
# **Predict.** The second `MatMul` reads `h` and `w2`. How many **new** bytes does its
# record keep?

# %% tags=["solution"]
my_prediction = ...  # your prediction: a number of bytes
### BEGIN SOLUTION
my_prediction = 16384
### END SOLUTION

# %% tags=["check"]
check(my_prediction, memory.per_record[2],
      hint="h is kept already (by the first Tanh); what else does a MatMul need, and how "
           "big is it?")

# %% tags=["reveal"]
for record, kept in zip(tape.records, memory.per_record):
    print(f"  {record.op_type:7} keeps {kept:7,} new bytes")

# %% [markdown]
# ## 2. Memory grows with depth and with the batch
#
# Stack the same layer `depth` times. Every layer adds one activation (65,536 bytes at
# batch 256) and one weight matrix (16,384 bytes). The weights belong to the model and
# exist anyway; the activations are what reverse mode adds.

# %%
ws = [ad.Variable(ad.random.normal([64, 64]) * 0.2, name=f"w{i}") for i in range(40)]


def network(x, weights):
    h = x
    for w in weights:
        h = ad.tanh(h @ w)
    return ad.reduce_mean(ad.square(h))


depths = [5, 10, 20, 40]


def kept_bytes(batch, depth):
    with ad.GradientTape() as tape:
        network(ad.random.normal([batch, 64]), ws[:depth])
    return ad.debugging.tape_memory(tape).bytes


kept = {d: kept_bytes(256, d) for d in depths}
print("batch 256:", ", ".join(f"depth {d}: {kept[d]:,} B" for d in depths))

fig, ax = plt.subplots(figsize=(5.5, 3.2))
ax.plot(depths, [kept[d] / 2**20 for d in depths], "o-")
ax.set_xlabel("depth (layers)")
ax.set_ylabel("kept by the tape (MiB)")
ax.set_title("batch 256")
plt.show()

# %% [markdown]
# A straight line in the depth: each layer adds 81,920 bytes (its activation and its
# weights); the input `x` is the part that does not grow.
#
# **Predict.** Going from batch 256 to batch 512 at depth 10: does the tape keep **more
# than double**, **double**, or **less than double**? Answer `"more"`, `"double"` or
# `"less"`.

# %% tags=["solution"]
my_prediction = ...  # "more", "double" or "less"
### BEGIN SOLUTION
my_prediction = "less"
### END SOLUTION

# %% tags=["check"]
ratio = kept_bytes(512, 10) / kept[10]
answer = "more" if ratio > 2.001 else "double" if ratio > 1.999 else "less"
check(my_prediction, answer,
      hint="which of the kept arrays have a batch axis, and which do not?")

# %% tags=["reveal"]
print(f"batch 512, depth 10: {kept_bytes(512, 10):,} B, {ratio:.2f} times batch 256")

# %% [markdown]
# Activations scale with the batch, weights do not. For a big model trained on a big batch
# the activations win by far, which is why "out of memory" so often means "too many
# activations kept for the backward pass".
#
# ## 3. Checkpointing: keep less, compute again
#
# The idea: do not keep a block's inner activations at all. Keep only what goes **into**
# the block; when the backward pass reaches it, run the block forward again under a fresh
# tape and take its gradient there. `ad.recompute_grad(f)` does exactly that; it is
# TensorFlow's `tf.recompute_grad`, under the same name.
#
# We cut the 40 layers into 4 blocks of 10. A block reads its weights as Variables;
# they still get gradients (`recompute_grad` hands them to its gradient function, as
# TensorFlow's does).

# %%
runs = {"block": 0}


def make_block(weights):
    def block(h):
        runs["block"] += 1
        for w in weights:
            h = ad.tanh(h @ w)
        return h
    return block


blocks = [make_block(ws[10 * k:10 * k + 10]) for k in range(4)]
checkpointed = [ad.recompute_grad(b) for b in blocks]


def deep(x, blocks):
    h = x
    for b in blocks:
        h = b(h)
    return ad.reduce_mean(ad.square(h))


with ad.GradientTape() as plain_tape:
    plain_loss = deep(x, blocks)
with ad.GradientTape() as checkpointed_tape:
    checkpointed_loss = deep(x, checkpointed)

print("plain:       ", ad.debugging.tape_memory(plain_tape))
print("checkpointed:", ad.debugging.tape_memory(checkpointed_tape))
print(checkpointed_tape)

# %% [markdown]
# Each block is **one** record now, named after the function, and it keeps only the
# block's result (65,536 bytes), which is the next block's input. Its gradient function
# also holds the block's input, to run it again: the previous block's result, counted
# already, or for the first block `x`, which you hold anyway. The 40 activations and 40
# weight reads of the plain tape are gone.
#
# Are the gradients still right?

# %%
plain_grads = plain_tape.gradient(plain_loss, ws)
runs["block"] = 0
checkpointed_grads = checkpointed_tape.gradient(checkpointed_loss, ws)
largest = max(float(np.max(np.abs(a.numpy() - b.numpy())))
              for a, b in zip(plain_grads, checkpointed_grads))
print("same loss:", float(plain_loss) == float(checkpointed_loss))
print("largest difference over the 40 weight gradients:", largest)

# %% [markdown]
# Identical: the backward pass ran the same ops on the same numbers, just later.
#
# **Predict.** We set the counter to 0 right before the checkpointed `gradient` call.
# How many times did a `block` function run during that one call?

# %% tags=["solution"]
my_prediction = ...  # your prediction: a whole number
### BEGIN SOLUTION
my_prediction = 4
### END SOLUTION

# %% tags=["check"]
check(my_prediction, runs["block"],
      hint="the backward pass reaches each block's record once; what does that record's "
           "gradient function do?")

# %% [markdown]
# Once per block: the backward pass re-runs each block to rebuild its activations, so the
# price of checkpointing is one more forward pass. TensorFlow's `recompute_grad` runs the
# function a second time in the backward pass too.
#
# How much is saved at the worst moment? During the backward pass the tape keeps the 4
# block outputs, and the block being recomputed keeps its 10 activations on its own tape
# until its gradient is done: about 14 activations alive at once instead of 40. With $L$
# layers cut into $\sqrt{L}$ blocks of $\sqrt{L}$ layers, that is about $2\sqrt{L}$: the
# classic trade of checkpointing, memory like $\sqrt{L}$ for one extra forward pass.
#
# > **Teaching moment: only arguments and Variables get gradients.** The forward pass of
# > a checkpointed function is not recorded at all, so a tensor that the function merely
# > uses from outside (not an argument, not a Variable) has no path to the result. Its
# > gradient is `None`, on TensorFlow as here:

# %%
scale = ad.constant(1.5)
scaled = ad.recompute_grad(lambda h: ad.tanh(h) * scale)
z = ad.constant([0.5, -1.0])
with ad.GradientTape() as tape:
    tape.watch([z, scale])
    y = ad.reduce_sum(scaled(z))
dz, dscale = tape.gradient(y, [z, scale])
print("d/dz:", dz.numpy(), "  d/dscale:", dscale)

# %% [markdown]
# Pass such a tensor as an argument (`lambda h, s: ...`) or make it a Variable, and it
# gets its gradient.
#
# ## 4. Per-example gradients, three ways
#
# `tape.gradient` of a batch loss gives one gradient: the sum (or mean) over the
# examples. Some jobs need each example's own gradient: clipping each one before
# averaging (differentially private training), finding the examples that pull hardest,
# estimating how noisy the gradient is. A small linear model with 8 examples, 3 features,
# squared error; example 5 has a wrong label, on purpose:

# %%
ad.random.set_seed(3)
X = ad.random.normal([8, 3])
true_w = ad.constant([1.0, -2.0, 0.5])
labels = ad.reduce_sum(X * true_w, axis=1).numpy()
labels[5] += 4.0                      # a wrong label
Y = ad.constant(labels)
w = ad.Variable([1.1, -1.9, 0.4], name="w")   # close to the truth, as after some training


def loss_of_one(x, y):
    return (ad.reduce_sum(x * w) - y) ** 2

# %% [markdown]
# **(a) A loop of tapes.** The obvious way: one tape and one backward pass per example.

# %%
grads = []
for b in range(8):
    with ad.GradientTape() as tape:
        loss = loss_of_one(X[b], Y[b])
    grads.append(tape.gradient(loss, w))
by_loop = ad.stack(grads)
print(by_loop.shape)

# %% [markdown]
# **(b) `batch_jacobian` on copies of the weights.** Give every example its **own copy**
# of `w` (a `(8, 3)` tensor, row $b$ for example $b$). Then example $b$'s loss depends only
# on row $b$, which is exactly the situation `batch_jacobian` is made for (lesson 8): one
# backward pass gives all eight rows. It needs a target of rank 2 or more, so the losses
# stay a column, `(8, 1)` (TensorFlow refuses a `(8,)` target the same way).

# %%
copies = ad.tile(w[None, :], [8, 1])
with ad.GradientTape() as tape:
    tape.watch(copies)
    losses = (ad.reduce_sum(X * copies, axis=1, keepdims=True) - Y[:, None]) ** 2
by_batch_jacobian = tape.batch_jacobian(losses, copies)[:, 0, :]
print(by_batch_jacobian.shape)

# %% [markdown]
# **(c) `vectorized_map`.** Write the gradient of **one** example as a function and map
# it over the batch: `ad.vectorized_map(fn, elems)` calls `fn` on each slice of `elems`
# along the first axis (here a pair `(x, y)`, sliced together) and stacks the results.

# %%
calls = []


def grad_of_one(example):
    calls.append(1)
    x_b, y_b = example
    with ad.GradientTape() as tape:
        loss = loss_of_one(x_b, y_b)
    return tape.gradient(loss, w)


by_vectorized_map = ad.vectorized_map(grad_of_one, (X, Y))
print(by_vectorized_map.shape)
print("all three agree:", np.allclose(by_loop.numpy(), by_batch_jacobian.numpy())
      and np.allclose(by_loop.numpy(), by_vectorized_map.numpy()))

# %% [markdown]
# **Predict.** How many times did `grad_of_one` run?

# %% tags=["solution"]
my_prediction = ...  # your prediction: a whole number
### BEGIN SOLUTION
my_prediction = 8
### END SOLUTION

# %% tags=["check"]
check(my_prediction, len(calls),
      hint="how else could a plain Python function see each example?")

# %% [markdown]
# Eight: here `vectorized_map` is a loop (unstack, call, stack), so it costs what (a)
# costs. TensorFlow's `tf.vectorized_map` gives the same numbers but calls `grad_of_one`
# only **once**, to trace it, and then runs its ops on the whole batch together. The three
# ways here, counted:
#
# | way | tapes | backward passes | extra memory |
# |---|---|---|---|
# | (a) loop | 8 | 8 | none |
# | (b) `batch_jacobian` on copies | 1 | 1 (a batch of cotangents) | one copy of the weights per example |
# | (c) `vectorized_map` | 8 | 8 | none |
#
# (b) needs a single backward pass, and pays in memory: batch × parameters, nothing for
# 3 weights, 256 GB of copies for a billion-parameter model and a batch of 64.
#
# **Predict.** Is the mean of the eight per-example gradients equal to `tape.gradient`
# of the mean loss over the batch? `True` or `False`.

# %% tags=["solution"]
with ad.GradientTape() as tape:
    mean_loss = ad.reduce_mean((ad.reduce_sum(X * w, axis=1) - Y) ** 2)
batch_gradient = tape.gradient(mean_loss, w)
same = bool(np.allclose(batch_gradient.numpy(), ad.reduce_mean(by_loop, axis=0).numpy()))

my_prediction = ...  # True or False
### BEGIN SOLUTION
my_prediction = True
### END SOLUTION

# %% tags=["check"]
check(my_prediction, same,
      hint="write the mean loss as a sum over the examples divided by 8, and differentiate "
           "it term by term")

# %% [markdown]
# The batch gradient is the average of what each example asks for, and averaging is
# exactly what hides the loud ones. That is what the next section uses.
#
# ## 5. The example that pulls hardest
#
# The weights are close to the truth, so seven examples barely pull. The one with the
# wrong label keeps pulling:

# %%
norms = ad.norm(by_vectorized_map, axis=1).numpy()
fig, ax = plt.subplots(figsize=(5.5, 2.8))
ax.bar(range(8), norms, color=["tab:red" if b == 5 else "tab:blue" for b in range(8)])
ax.set_xlabel("example")
ax.set_ylabel("norm of its gradient")
plt.show()
print("loudest example:", int(np.argmax(norms)), "  norms:", np.round(norms, 2))

# %% [markdown]
# Example 3 is loud too (its inputs are large, so a small error pulls hard), but example 5
# stands out. Clipping each per-example gradient to a maximum norm before averaging
# (exercise 6) limits how much any single example, right or wrong, can move the model.
#
# ## Summary
#
# * A tape keeps, for each record, what its VJP will read: both inputs of a `MatMul`, the
#   output of a `Tanh`, only shapes for an `AddV2`. `ad.debugging.tape_memory` counts it.
# * That memory grows with the depth and, for the activations, with the batch.
# * `ad.recompute_grad(f)` records a call of `f` as one record that keeps its result; the
#   backward pass runs `f` again under a fresh tape. Same values, same gradients (for
#   arguments and Variables; a captured tensor gets `None`), one more forward pass.
# * Per-example gradients: a loop of tapes; `batch_jacobian` on one copy of the weights
#   per example (one backward pass, batch × parameters memory); `vectorized_map` of a
#   one-example gradient (a loop here, vectorized in TensorFlow).
#
# ## Exercises: predict the gradient (and the memory)
#
# For each exercise, work out the answer **on paper first**, then type it into
# `my_prediction` and run the cell. The check compares your prediction with what the tape
# says.

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
# **Exercise 1.** A chain of 12 `sin` ops on a watched vector of 1,000 float32 numbers.
# `Sin` keeps its input. How many bytes does the tape keep?

# %% tags=["solution"]
v = ad.ones([1000])
with ad.GradientTape() as tape:
    tape.watch(v)
    s = v
    for _ in range(12):
        s = ad.sin(s)

my_prediction = ...  # your prediction: a number of bytes
### BEGIN SOLUTION
my_prediction = 48000
### END SOLUTION

# %% tags=["check"]
check(my_prediction, ad.debugging.tape_memory(tape).bytes,
      hint="which 12 arrays are the inputs of the 12 Sin records, and how big is each?")

# %% [markdown]
# **Exercise 2.** Now 12 additions of the same constant vector `c` (1,000 numbers). The
# gradient of `a + b` is the incoming cotangent for both. How many bytes does the tape keep?

# %% tags=["solution"]
c = ad.ones([1000])
with ad.GradientTape() as tape:
    tape.watch(v)
    s = v
    for _ in range(12):
        s = s + c

my_prediction = ...  # your prediction: a number of bytes
### BEGIN SOLUTION
my_prediction = 0
### END SOLUTION

# %% tags=["check"]
check(my_prediction, ad.debugging.tape_memory(tape).bytes,
      hint="does the VJP of an addition read any value from the forward pass?")

# %% [markdown]
# **Exercise 3.** A checkpointed block is called three times in a row, then the result is
# summed. How many records are on the tape? Then: after one `gradient` call, how many
# times in total has `block` run?

# %% tags=["solution"]
block_runs = []


@ad.recompute_grad
def block(h):
    block_runs.append(1)
    return ad.tanh(h) * 2.0


with ad.GradientTape() as tape:
    tape.watch(v)
    total = ad.reduce_sum(block(block(block(v))))
records = len(tape.records)
tape.gradient(total, v)
runs_in_all = len(block_runs)

my_prediction = ...  # how many records
### BEGIN SOLUTION
my_prediction = 4
### END SOLUTION

# %% tags=["check"]
check(my_prediction, records,
      hint="section 3 printed the records of a checkpointed block: how many does one call "
           "leave? Do not forget the op after the blocks")

# %% tags=["solution"]
my_prediction = ...  # how many runs of block in all
### BEGIN SOLUTION
my_prediction = 6
### END SOLUTION

# %% tags=["check"]
check(my_prediction, runs_in_all,
      hint="three calls in the forward pass; what does the backward pass do at each record?")

# %% [markdown]
# **Exercise 4 (homework).** Per-example gradients of a `Dense(5)` layer's kernel for a batch of 8
# examples with 3 features, with `vectorized_map`. What shape comes back?

# %% tags=["solution"]
dense = ad.layers.Dense(5)
inputs = ad.random.normal([8, 3])
dense(inputs)   # builds the kernel


def kernel_grad_of_one(x_b):
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(dense(x_b[None, :]) ** 2)
    return tape.gradient(loss, dense.kernel)


my_prediction = ...  # your prediction: a shape tuple
### BEGIN SOLUTION
my_prediction = (8, 3, 5)
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tuple(ad.vectorized_map(kernel_grad_of_one, inputs).shape),
      hint="one kernel-shaped gradient per example, stacked along a new first axis")

# %% [markdown]
# **Exercise 5 (homework).** Inside a checkpointed function, `bias` is a constant the
# function uses from outside. The tape watches it. What is its gradient?

# %% tags=["solution"]
bias = ad.constant(0.5)
shifted = ad.recompute_grad(lambda h: ad.sin(h + bias))
with ad.GradientTape() as tape:
    tape.watch([v, bias])
    y = ad.reduce_sum(shifted(v))

my_prediction = ...  # your prediction
### BEGIN SOLUTION
my_prediction = None
### END SOLUTION

# %% tags=["check"]
check(my_prediction, tape.gradient(y, bias),
      hint="was the forward pass of the checkpointed function recorded? Is bias an argument "
           "or a Variable?")

# %% [markdown]
# **Exercise 6 (homework).** Per-example clipping. The loss of example $b$ is
# $x_b \cdot w$, so its gradient is $x_b$. Clip each per-example gradient to norm at most
# 1 with `ad.clip_by_norm`, then average. Predict the result for the two examples below.

# %% tags=["solution"]
examples = ad.constant([[3.0, 4.0], [0.6, 0.8]])
weights = ad.Variable([0.0, 0.0])


def clipped_grad_of_one(x_b):
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(x_b * weights)
    return ad.clip_by_norm(tape.gradient(loss, weights), 1.0)


clipped_mean = ad.reduce_mean(ad.vectorized_map(clipped_grad_of_one, examples), axis=0)

my_prediction = ...  # your prediction: a list of two numbers
### BEGIN SOLUTION
my_prediction = [0.6, 0.8]
### END SOLUTION

# %% tags=["check"]
check(my_prediction, clipped_mean,
      hint="clip each row on its own first (what is each row's norm?), then average the "
           "two clipped rows")

# %% [markdown]
# **Next:** lesson 16 shows the same ideas in PyTorch and JAX, including their versions of
# checkpointing (`torch.utils.checkpoint`, `jax.checkpoint`) and of `vectorized_map`
# (`torch.func.vmap`, `jax.vmap`).
