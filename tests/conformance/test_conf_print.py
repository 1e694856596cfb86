"""``ad.print`` writes what ``tf.print`` writes: eagerly, on every call of a traced
function (with that call's values), and in a compiled one; it records nothing on a
tape, and a saved model keeps it. Both libraries print to a ``file://`` stream here,
so the text compared is exactly what each wrote."""

import sys

import numpy as np
import pytest

import autodiff as ad

# name -> the inputs, made by either library (m is tf or ad)
INPUTS = {
    "int scalar": lambda m: (m.constant(2),),
    "float vector, string, numbers": lambda m: (m.constant([1.0, 2.5, 3.0]), "hi", 3, 1.5, True),
    "summarized vector": lambda m: (m.range(10),),
    "float matrix": lambda m: (m.reshape(m.range(12.0), (3, 4)),),
    "rank 3": lambda m: (m.reshape(m.range(60), (3, 4, 5)),),
    "dict and list": lambda m: ({"b": [m.constant(True), "s"], "a": m.constant(1)},),
    "tuple, list, None": lambda m: ([1, 2], (3, "a"), None, (m.constant(1.5), 2)),
    "float specials": lambda m: (m.constant([1e-8, 1e10, -0.5]), m.constant(float("nan")),
                                 m.constant(-float("inf"))),
    "float digits": lambda m: (m.constant(0.1, m.float64), m.constant([0.1, 1 / 3]),
                               m.constant(1.0)),
    "bools": lambda m: (m.constant([True, False]),),
    "float16": lambda m: (m.constant(1.5, m.float16), m.constant([0.1], m.float16)),
    "ints": lambda m: (m.constant([[1, 2], [3, 4]]), m.constant(3, m.int64)),
    "empty": lambda m: (m.zeros((0,)), m.zeros((2, 0))),
    "no inputs": lambda m: (),
    "braces in a string": lambda m: ("{}", m.constant(1)),
}
KEYWORDS = {"default": {}, "summarize=-1, sep, end": {"summarize": -1, "sep": ",", "end": "!\n"},
            "summarize=2": {"summarize": 2}}


def _printed(path, call):
    path.unlink(missing_ok=True)
    call(f"file://{path}")
    return path.read_text()


@pytest.mark.parametrize("case", sorted(INPUTS))
def test_eager_print_writes_what_tf_print_writes(tf, tmp_path, case):
    texts = [_printed(tmp_path / "out.txt",
                      lambda stream: m.print(*INPUTS[case](m), output_stream=stream))
             for m in (tf, ad)]
    assert texts[0] == texts[1]
    assert texts[1].endswith("\n")


@pytest.mark.parametrize("keywords", sorted(KEYWORDS))
def test_summarize_sep_and_end_as_in_tf(tf, tmp_path, keywords):
    kw = KEYWORDS[keywords]
    texts = [_printed(tmp_path / "out.txt", lambda stream: m.print(
        m.range(10), m.reshape(m.range(100), (10, 10)), "x", output_stream=stream, **kw))
        for m in (tf, ad)]
    assert texts[0] == texts[1]


@pytest.mark.parametrize("jit_compile", [False, True])
def test_a_traced_print_prints_on_every_call_with_its_values(tf, tmp_path, jit_compile):
    """TensorFlow's XLA cannot compile PrintV2 (see the next test), so ad's compiled
    program is compared with TensorFlow's traced graph."""
    texts = []
    for m in (tf, ad):
        jit = jit_compile and m is ad
        path = tmp_path / f"{m.__name__}.txt"

        def body(x, m=m, path=path):
            m.print("before", x, output_stream=f"file://{path}")
            y = x * 2.0
            m.print("after", {"y": y, "sum": m.reduce_sum(y)}, output_stream=f"file://{path}")
            return y

        f = m.function(body, jit_compile=jit)
        outs = [f(m.constant(v)).numpy() for v in ([1.0, 2.0], [3.0, 4.5], [-1.0, 0.25])]
        texts.append(path.read_text())
    assert texts[0] == texts[1]
    assert texts[1].count("before") == 3 and "before [3 4.5]" in texts[1]
    np.testing.assert_allclose(outs[-1], [-2.0, 0.5])


@pytest.mark.parametrize("jit_compile", [False, True])
def test_print_in_branches_and_loops_prints_once_per_run_of_its_branch(tf, tmp_path, jit_compile):
    texts = []
    for m in (tf, ad):
        stream = f"file://{tmp_path / m.__name__}.txt"

        def body(x, m=m, stream=stream):
            if x > 0:
                m.print("positive", x, output_stream=stream)
            else:
                m.print("not positive", x, output_stream=stream)
            for i in m.range(2):
                m.print("i", i, output_stream=stream)
            return m.cond(x > 1, lambda: (m.print("cond", x, output_stream=stream), x)[1],
                          lambda: x)

        f = m.function(body, jit_compile=jit_compile and m is ad)
        for v in (1.0, -2.0, 3.0):
            f(m.constant(v))
        texts.append((tmp_path / f"{m.__name__}.txt").read_text())
    assert texts[0] == texts[1]
    assert texts[1].count("i 1") == 3 and texts[1].count("cond") == 1


def test_tf_xla_refuses_print_where_ad_compiles_it(tf, tmp_path):
    stream = f"file://{tmp_path / 'out.txt'}"
    f = tf.function(lambda x: (tf.print(x, output_stream=stream), x + 1)[1], jit_compile=True)
    with pytest.raises(tf.errors.InvalidArgumentError):
        f(tf.constant(1.0))
    g = ad.function(lambda x: (ad.print(x, output_stream=stream), x + 1)[1], jit_compile=True)
    assert g(ad.constant(1.0)).numpy() == 2.0
    assert (tmp_path / "out.txt").read_text() == "1\n"


def test_a_print_whose_result_is_unused_survives_the_compiler(tmp_path):
    path = tmp_path / "out.txt"
    f = ad.function(lambda x: (ad.print("only a string", output_stream=f"file://{path}"),
                               x + 1)[1], jit_compile=True)
    for v in (1.0, 2.0):
        f(ad.constant(v))
    source = f.get_concrete_function(ad.constant(1.0)).program().source
    assert path.read_text() == "only a string\n" * 2
    assert "PrintV2" in source


def test_print_to_sys_stdout_is_captured_and_python_print_in_a_function_runs_once(capsys):
    @ad.function
    def f(x):
        print("tracing")
        ad.print("x =", x, output_stream=sys.stdout)
        return x

    for v in (1, 2, 3):
        f(ad.constant(v))
    assert capsys.readouterr().out == "tracing\nx = 1\nx = 2\nx = 3\n"
    ad.print(ad.constant([1.5]))   # the default stream is stderr
    assert capsys.readouterr().err == "[1.5]\n"


def test_an_unsupported_output_stream_is_a_value_error_naming_ad_print(tf):
    import io
    with pytest.raises(ValueError):
        tf.print(1, output_stream=io.StringIO())
    with pytest.raises(ValueError, match="ad.print"):
        ad.print(1, output_stream=io.StringIO())


def test_print_records_nothing_on_a_tape_and_its_gradient_still_works(capsys):
    x = ad.Variable([1.0, 2.0])
    f = ad.function(lambda: ad.print(x, output_stream=sys.stdout) or ad.reduce_sum(x * x))
    for call in (lambda: (ad.print(x, output_stream=sys.stdout), ad.reduce_sum(x * x))[1], f):
        with ad.GradientTape() as tape:
            y = call()
        assert all(r.primitive.name != "PrintV2" for r in tape.records)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 4.0])
    assert capsys.readouterr().out == "[1 2]\n[1 2]\n"


def test_a_saved_model_with_a_print_prints_after_loading(tmp_path, capsys):
    module = ad.Module()
    module.f = ad.function(lambda x: (ad.print("got", x, output_stream=sys.stdout), x * 2.0)[1],
                           input_signature=[ad.TensorSpec([None], ad.float32)])
    ad.saved_model.save(module, str(tmp_path / "m"))
    capsys.readouterr()
    loaded = ad.saved_model.load(str(tmp_path / "m"))
    for v in ([1.0], [2.0, 3.0]):
        np.testing.assert_allclose(loaded.f(ad.constant(v)).numpy(), np.float32(v) * 2)
    assert capsys.readouterr().out == "got [1]\ngot [2 3]\n"
