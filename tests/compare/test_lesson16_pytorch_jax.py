"""Lesson 16's PyTorch and JAX side, run against PyTorch and JAX.

Lesson 16 (notebooks/src/16_pytorch_and_jax.py) runs the tape live and shows
PyTorch and JAX code beside it as text, so that the lesson runs where neither
library is installed. Every such block is run here instead:

- A ```python block in a Markdown cell starts with ``# PyTorch`` or ``# JAX``
  (a block with neither fails ``test_every_code_block_names_its_library``).
- The blocks of one library run in lesson order in one namespace, as a
  student pasting them into a notebook would run them.
- A block followed by a ```text block must print exactly that text.
- A block with no ```text block is an exercise: the last line it prints must
  equal the answer of the lesson's next solution cell (``my_prediction``).
  The check cell below it computes the same answer on the tape, and nbval
  (``--nbval``) proves that check says "Correct!", so the three agree.

Then: every ``torch.…``, ``jax.…`` and ``ad.…`` name the lesson mentions
exists (the summary table is made of them), the lesson names the versions
installed here, and each sentence of the lesson's prose about PyTorch or JAX
that no block prints has its own test below, with the sentence quoted above
it. When a library changes its answer or its wording, a test fails here and
the lesson is updated, never this file alone.

The ``torch`` and ``jax`` fixtures (tests/compare/conftest.py) skip these
tests where the libraries are missing, and fail them under ``CI=true``.
"""

import ast
import contextlib
import importlib
import io
import re
import runpy
from pathlib import Path

import numpy as np
import pytest

import autodiff as ad

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "notebooks" / "src" / "16_pytorch_and_jax.py"
LIBRARIES = {"PyTorch": "torch", "JAX": "jax"}
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


# The lesson's cells as the notebook builder reads them: (cell_type, source, tags).
_parse = runpy.run_path(str(ROOT / "scripts" / "build_notebooks.py"))["parse"]
CELLS = _parse(LESSON.read_text(encoding="utf-8"))


def _solution_answer(source):
    """The literal assigned to ``my_prediction`` between a solution cell's markers."""
    region = source.split("### BEGIN SOLUTION", 1)[1].split("### END SOLUTION", 1)[0]
    assignment = re.search(r"my_prediction\s*=\s*(.+?)(?:#.*)?$", region.strip(), re.DOTALL)
    return ast.literal_eval(assignment.group(1).strip())


def _blocks():
    """Every fenced block of the lesson's Markdown: (language, text, cell index)."""
    for index, (kind, source, _tags) in enumerate(CELLS):
        if kind == "markdown":
            for match in FENCE.finditer(source):
                yield match.group(1), match.group(2), index


def _snippets():
    """The PyTorch and JAX blocks, in lesson order: dicts with the library, the code, and
    what it must print (``expected``) or the exercise answer it must print (``answer``)."""
    blocks = list(_blocks())
    snippets = []
    for k, (language, text, cell) in enumerate(blocks):
        if language != "python":
            continue
        label = text.splitlines()[0].lstrip("# ").strip()
        snippet = {"library": label, "code": text, "cell": cell,
                   "id": f"{len(snippets) + 1:02d}-{label}"}
        following = blocks[k + 1] if k + 1 < len(blocks) else None
        if following and following[0] == "text" and following[2] == cell:
            snippet["expected"] = following[1]
        else:
            solution = next(source for kind, source, tags in CELLS[cell + 1:]
                            if "solution" in tags)
            snippet["answer"] = _solution_answer(solution)
        snippets.append(snippet)
    return snippets


SNIPPETS = _snippets()


def _run_in_order(library):
    """Runs one library's blocks in lesson order in one namespace: {id: (stdout, error)}."""
    namespace, results = {"__name__": "lesson16"}, {}
    for snippet in SNIPPETS:
        if snippet["library"] != library:
            continue
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(snippet["code"], f"lesson 16 {snippet['id']}", "exec"),  # noqa: S102
                     namespace)
            results[snippet["id"]] = (out.getvalue(), None)
        except Exception as error:  # reported by the snippet's own test
            results[snippet["id"]] = (out.getvalue(), error)
    return results


@pytest.fixture(scope="module")
def printed(torch, jax):
    """What every PyTorch and JAX block of the lesson printed, run on the real libraries."""
    return {**_run_in_order("PyTorch"), **_run_in_order("JAX")}


def _same_answer(printed_value, answer):
    if answer is None or isinstance(answer, (bool, str)):
        return printed_value == answer
    if isinstance(answer, tuple):  # a shape
        return tuple(printed_value) == answer
    if isinstance(answer, list) and any(a is None for a in answer):
        return (len(printed_value) == len(answer)
                and all(_same_answer(p, a) for p, a in zip(printed_value, answer)))
    return np.allclose(np.asarray(printed_value, dtype=float), np.asarray(answer, dtype=float),
                       rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------
# The blocks
# ---------------------------------------------------------------------------------------

def test_the_lesson_shows_both_libraries_and_an_exercise_for_each():
    libraries = [s["library"] for s in SNIPPETS]
    assert libraries.count("PyTorch") >= 10 and libraries.count("JAX") >= 10
    exercises = {s["library"] for s in SNIPPETS if "answer" in s}
    assert exercises == {"PyTorch", "JAX"}


def test_every_code_block_names_its_library():
    unnamed = [(language, text.splitlines()[0]) for language, text, _ in _blocks()
               if language == "python" and text.splitlines()[0].lstrip("# ").strip()
               not in LIBRARIES]
    assert not unnamed, f"a ```python block must start with '# PyTorch' or '# JAX': {unnamed}"
    untagged = [language for language, _, _ in _blocks() if language not in ("python", "text")]
    assert not untagged, "fenced blocks are ```python (code) or ```text (what it printed)"


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s["id"])
def test_block_prints_what_the_lesson_shows(printed, snippet):
    stdout, error = printed[snippet["id"]]
    assert error is None, (f"{snippet['id']} raised {type(error).__name__}: {error}\n"
                           f"{snippet['code']}")
    if "expected" in snippet:
        assert stdout.rstrip("\n") == snippet["expected"].rstrip("\n"), snippet["code"]
    else:
        last_line = stdout.strip().splitlines()[-1]
        value = ast.literal_eval(last_line)
        assert _same_answer(value, snippet["answer"]), (
            f"{snippet['id']} printed {last_line}; the lesson's answer is {snippet['answer']!r}")


# ---------------------------------------------------------------------------------------
# Names and versions
# ---------------------------------------------------------------------------------------

NAME = re.compile(r"(?<![\w.])((?:torch|jax|ad)(?:\.[A-Za-z_]\w*)+)")


def _resolve(dotted, modules):
    root, *parts = dotted.split(".")
    obj, path = modules[root], modules[root].__name__
    for part in parts:
        path += "." + part
        if hasattr(obj, part):
            obj = getattr(obj, part)
        else:  # a submodule that is not imported by its parent (torch.utils.checkpoint)
            obj = importlib.import_module(path)
    return obj


def test_every_library_name_in_the_lesson_exists(torch, jax):
    text = "\n".join(source for kind, source, _ in CELLS if kind == "markdown")
    names = sorted(set(NAME.findall(text)))
    assert len(names) >= 30
    modules = {"torch": torch, "jax": jax, "ad": ad}
    missing = []
    for name in names:
        try:
            _resolve(name, modules)
        except (AttributeError, ImportError):
            missing.append(name)
    assert not missing, f"the lesson names what does not exist: {missing}"


def test_the_lesson_names_the_versions_it_was_run_on(torch, jax):
    # 16_pytorch_and_jax.py intro: "The course's tests run every one of these blocks against
    # PyTorch 2.13 and JAX 0.10"; pyproject.toml's [compare] extra pins them.
    intro = CELLS[0][1]
    stated = dict(re.findall(r"(PyTorch|JAX) (\d+\.\d+)", intro))
    assert torch.__version__.startswith(stated["PyTorch"] + ".")
    assert jax.__version__.startswith(stated["JAX"] + ".")


# ---------------------------------------------------------------------------------------
# Sentences no block prints
# ---------------------------------------------------------------------------------------

# §2 "JAX has nothing to free and nothing to accumulate: `jax.grad(f)` is a function, and
# each call traces `f` afresh and returns a new array. Calling it twice gives the same
# answer twice." (and the summary table's "each call of `jax.grad(f)` traces anew")
def test_jax_grad_traces_the_function_on_every_call(jax):
    calls = []

    def f(x):
        calls.append(x)
        return x ** 3 + jax.numpy.sin(x)

    grad_f = jax.grad(f)
    first, second = grad_f(2.0), grad_f(2.0)
    assert len(calls) == 2
    assert float(first) == float(second) == pytest.approx(12 + np.cos(2.0), rel=1e-6)


# §2 "every PyTorch training loop calls `optimizer.zero_grad()` (or sets `x.grad = None`)":
# both clear what backward() accumulated.
def test_zero_grad_clears_the_accumulated_gradient(torch):
    x = torch.tensor(2.0, requires_grad=True)
    optimizer = torch.optim.SGD([x], lr=0.1)
    (x * x).backward()
    (x * x).backward()
    assert x.grad.item() == 8.0
    optimizer.zero_grad()
    assert x.grad is None or x.grad.item() == 0.0
    (x * x).backward()
    assert x.grad.item() == 4.0


# §3 "(`backward()` simply leaves the unused tensor's `.grad` at `None`.)"
def test_backward_leaves_an_unused_tensors_grad_none(torch):
    x = torch.tensor(3.0, requires_grad=True)
    z = torch.tensor(5.0, requires_grad=True)
    (x * x).backward()
    assert x.grad.item() == 6.0 and z.grad is None


# §3 "`ad.functional.grad` follows JAX here (zeros), while `tape.gradient` follows
# TensorFlow (`None`)"; the TensorFlow half is tests/conformance/test_claims.py's.
def test_ad_functional_grad_gives_zeros_for_an_unused_argument_as_jax_does(jax):
    def f_jax(x, z):
        return x * x

    def f_ad(x, z):
        return x * x

    jax_grads = jax.grad(f_jax, argnums=(0, 1))(3.0, 5.0)
    ad_grads = ad.functional.grad(f_ad, argnums=(0, 1))(3.0, 5.0)
    assert [float(g) for g in jax_grads] == [float(g.numpy()) for g in ad_grads] == [6.0, 0.0]
    x, z = ad.Variable(3.0), ad.Variable(5.0)
    with ad.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, z) is None


# §3 "Results computed under `no_grad` have no `grad_fn`, the way nothing inside
# `stop_recording()` leaves a record on the tape."
def test_no_grad_and_stop_recording_both_leave_no_record(torch):
    x = torch.tensor(3.0, requires_grad=True)
    with torch.no_grad():
        z = x * x
    assert z.grad_fn is None and not z.requires_grad
    v = ad.Variable(3.0)
    with ad.GradientTape() as tape:
        with tape.stop_recording():
            w = v * v
    assert tape.gradient(w, v) is None


# §4: without create_graph PyTorch raises where the tape, whose inner gradient ran after the
# outer tape closed, answers None; with it both give the second derivative.
def test_second_derivative_agrees_with_create_graph(torch):
    x = torch.tensor(1.0, requires_grad=True)
    (dy,) = torch.autograd.grad(x ** 4, x, create_graph=True)
    (d2y,) = torch.autograd.grad(dy, x)
    c = ad.constant(1.0)
    with ad.GradientTape() as outer:
        outer.watch(c)
        with ad.GradientTape() as inner:
            inner.watch(c)
            y = c ** 4
        dc = inner.gradient(y, c)
    assert d2y.item() == float(outer.gradient(dc, c).numpy()) == 12.0


# The summary table's row "Jacobian | `tape.jacobian` | ... | `jax.jacrev`, `jax.jacfwd`":
# the three give the same matrix, shaped as lesson 8's rule says.
def test_jacrev_jacfwd_and_tape_jacobian_agree(jax):
    jnp = jax.numpy
    x = np.array([0.5, 1.0, 1.5], dtype=np.float32)
    rev = np.asarray(jax.jacrev(lambda v: jnp.cumsum(jnp.sin(v)))(x))
    fwd = np.asarray(jax.jacfwd(lambda v: jnp.cumsum(jnp.sin(v)))(x))
    xt = ad.constant(x)
    with ad.GradientTape() as tape:
        tape.watch(xt)
        y = ad.cumsum(ad.sin(xt))
    tape_jacobian = tape.jacobian(y, xt).numpy()
    assert rev.shape == fwd.shape == tape_jacobian.shape == (3, 3)
    np.testing.assert_allclose(fwd, rev, rtol=1e-6)
    np.testing.assert_allclose(tape_jacobian, rev, rtol=1e-6)


# §5 per-example gradients: "Applied to `jax.grad(loss)`, it gives the same rows as the
# tape" (the tape's Jacobian of the per-example losses, jax.vmap(jax.grad(loss))), "`torch.func.vmap(torch.func.grad(loss),
# in_dims=(None, 0, 0))` gives the same rows", and "A batch's loss is usually the mean of
# one loss per example, and its gradient is then the mean of the examples' gradients"
# (issue 36: the lesson once called it "the gradient of that sum").
def test_per_example_gradients_agree_in_all_three(torch, jax):
    jnp = jax.numpy
    w = np.array([1.0, -1.0, 0.5], dtype=np.float32)
    xs = np.arange(12.0, dtype=np.float32).reshape(4, 3) / 10
    ys = np.array([0.0, 1.0, 2.0, 3.0], dtype=np.float32)
    by_jax = jax.vmap(jax.grad(lambda w, x, y: (jnp.dot(x, w) - y) ** 2),
                      in_axes=(None, 0, 0))(w, xs, ys)
    by_torch = torch.func.vmap(torch.func.grad(lambda w, x, y: (torch.dot(x, w) - y) ** 2),
                               in_dims=(None, 0, 0))(*map(torch.from_numpy, (w, xs, ys)))
    wv = ad.Variable(w)
    with ad.GradientTape() as tape:
        losses = (ad.linalg.matvec(ad.constant(xs), wv) - ad.constant(ys)) ** 2
    by_tape = tape.jacobian(losses, wv).numpy()
    np.testing.assert_allclose(by_tape, np.asarray(by_jax), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(by_tape, by_torch.numpy(), rtol=1e-5, atol=1e-6)
    of_the_mean = jax.grad(lambda w: jnp.mean((xs @ w - ys) ** 2))(w)
    np.testing.assert_allclose(np.asarray(of_the_mean), np.asarray(by_jax).mean(axis=0),
                               rtol=1e-5, atol=1e-6)


# §6 "`jax.vjp` runs `f` once and hands back `vjp_fn`, which you may call with many
# cotangents", and the summary table's "a second gradient from one record: ... `jax.vjp`'s
# `vjp_fn`, called again"; the table's rows: vjp = tape.gradient(..., output_gradients=u) =
# torch.autograd.grad(..., grad_outputs=u) = jax.vjp; jvp = ForwardAccumulator =
# torch.func.jvp = jax.jvp.
def test_vjp_and_jvp_agree_in_all_three(torch, jax):
    jnp = jax.numpy
    calls = []

    def f(x):
        calls.append(1)
        return jnp.sin(x) * x

    x = np.array([0.5, 1.0, 2.0], dtype=np.float32)
    u1, u2 = np.array([1.0, 0.0, -1.0], np.float32), np.array([0.5, 2.0, 1.0], np.float32)
    _, vjp_fn = jax.vjp(f, x)
    by_jax = [np.asarray(vjp_fn(u)[0]) for u in (u1, u2)]
    assert len(calls) == 1

    xt = torch.tensor(x, requires_grad=True)
    yt = torch.sin(xt) * xt
    by_torch = [torch.autograd.grad(yt, xt, grad_outputs=torch.tensor(u), retain_graph=True)[0]
                for u in (u1, u2)]
    xa = ad.constant(x)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(xa)
        ya = ad.sin(xa) * xa
    by_tape = [tape.gradient(ya, xa, output_gradients=ad.constant(u)).numpy() for u in (u1, u2)]
    for j, t, a in zip(by_jax, by_torch, by_tape):
        np.testing.assert_allclose(a, j, rtol=1e-6)
        np.testing.assert_allclose(a, t.numpy(), rtol=1e-6)

    _, jvp_jax = jax.jvp(f, (x,), (u2,))
    _, jvp_torch = torch.func.jvp(lambda v: torch.sin(v) * v, (torch.tensor(x),),
                                  (torch.tensor(u2),))
    with ad.autodiff.ForwardAccumulator(xa, ad.constant(u2)) as acc:
        yf = ad.sin(xa) * xa
    np.testing.assert_allclose(acc.jvp(yf).numpy(), np.asarray(jvp_jax), rtol=1e-6)
    np.testing.assert_allclose(acc.jvp(yf).numpy(), jvp_torch.numpy(), rtol=1e-6)


# The appendix: "JAX traces the Python function only once; the recomputation is written into the
# traced program (`jax.make_jaxpr` of the gradient shows the block's `sin` again inside a
# `remat` step of the backward pass)"; "The gradient does not change".
def test_jax_checkpoint_traces_once_and_recomputes_inside_the_program(jax):
    jnp = jax.numpy
    calls = []

    def block(x):
        calls.append(1)
        return jnp.sin(jnp.sin(x))

    grad_value = jax.grad(jax.checkpoint(block))(1.0)
    assert len(calls) == 1
    assert float(grad_value) == float(jax.grad(block)(1.0))
    program = str(jax.make_jaxpr(jax.grad(jax.checkpoint(block)))(1.0))
    remat = re.search(r"remat\w*\[(.*)\]", program, re.DOTALL)
    assert remat, program
    assert "sin" in remat.group(1) and "cos" in remat.group(1)


# The appendix: "PyTorch's version runs the Python function twice too" and "The gradient
# does not change."
def test_torch_checkpoint_runs_the_block_twice_with_the_same_gradient(torch):
    import torch.utils.checkpoint

    calls = []

    def block(x):
        calls.append(1)
        return torch.sin(torch.sin(x))

    x = torch.tensor(1.0, requires_grad=True)
    torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False).backward()
    checkpointed, x.grad = x.grad.item(), None
    assert len(calls) == 2
    block(x).backward()
    assert len(calls) == 3 and x.grad.item() == checkpointed


# §3 "JAX gives zeros: ... a function that ignores a float argument has derivative zero in
# it ... An argument given as a Python `int` is refused, used or not, with a `TypeError`
# ("grad requires real- or complex-valued inputs"): write `5.0`, not `5`." (issue 36: the
# lesson once said "JAX gives zeros, always")
def test_jax_refuses_an_integer_argument_used_or_not(jax):
    grad = jax.grad(lambda x, z: x * x, argnums=(0, 1))
    assert [float(g) for g in grad(3.0, 5.0)] == [6.0, 0.0]
    for args in ((3.0, 5), (3, 5.0)):
        with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
            grad(*args)


# The appendix: "`forward` returns `x.clone()`, a new tensor with the same numbers, where
# `ad.custom_gradient`'s version returns `ad.identity(x)`: the result is a tensor of its
# own, which PyTorch links to the class's `backward` (its `grad_fn` is a
# `ClipGradientBackward` node), while `x` stays the leaf it was."
def test_a_functions_clone_is_its_own_tensor_linked_to_backward(torch):
    class ClipGradient(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, upstream):
            return upstream.clamp(-1.0, 1.0)

    x = torch.tensor(2.0, requires_grad=True)
    y = ClipGradient.apply(x)
    assert y is not x and y.item() == x.item()
    assert type(y.grad_fn).__name__ == "ClipGradientBackward"
    assert x.is_leaf and x.grad_fn is None
    (y ** 3).backward()
    assert x.grad.item() == 1.0
    c = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(c)
        copy = ad.identity(c)
    assert copy is not c and float(copy.numpy()) == 2.0
    assert [r.op_type for r in tape.records] == ["Identity"]


# The appendix: "`use_reentrant=False` picks the newer of its two ways of checkpointing,
# the one PyTorch recommends; it wants the choice written out (PyTorch 2.13 warns when it
# is missing). The older way, `use_reentrant=True`, gives the weights a block uses no
# gradient at all when none of the block's *inputs* requires one ("None of the inputs have
# requires_grad=True")".
def test_checkpoints_use_reentrant_choice(torch):
    import warnings

    import torch.utils.checkpoint

    def block(h):
        return torch.sin(h) * weight

    weight = torch.tensor(2.0, requires_grad=True)
    h = torch.tensor(1.0)                       # an input that needs no gradient
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.utils.checkpoint.checkpoint(block, h)
    said = " ".join(str(w.message) for w in caught)
    assert "use_reentrant parameter should be passed explicitly" in said
    assert "use_reentrant=False is recommended" in said
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = torch.utils.checkpoint.checkpoint(block, h, use_reentrant=True)
    assert "None of the inputs have requires_grad=True" in " ".join(str(w.message)
                                                                      for w in caught)
    assert not old.requires_grad                # no path to the weight: no gradient
    new = torch.utils.checkpoint.checkpoint(block, h, use_reentrant=False)
    new.backward()
    assert weight.grad.item() == pytest.approx(np.sin(1.0), rel=1e-6)
