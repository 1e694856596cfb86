"""Random programs run on ad and on TensorFlow; a mismatch is shrunk to a repro.

Two families of tests, all from fixed seeds (the same programs on every run):

- ``test_generated_op[<op>]``: programs that all use that op, so a failure
  names the op at fault;
- ``test_generated_mixed[<chunk>]``: programs over every op at once.

``CONFORMANCE_PROGRAMS=N`` scales the number of programs (default
``DEFAULT_PROGRAMS``, sized for about a minute on a 2-core CI machine).
A failing test prints, for the first mismatches, the shrunk spec's runnable
ad code and the differences that remain.
"""

import os

import pytest

from . import programs
from .program_ops import OPS
from .program_ops_control_flow import OPS as CONTROL_FLOW_OPS
from .shrink import shrink

DEFAULT_PROGRAMS = 4000
TOTAL = int(os.environ.get("CONFORMANCE_PROGRAMS", DEFAULT_PROGRAMS))
# The data-flow ops keep the seeds, counts and draws they had before control flow joined
# (so a new op never reshuffles the programs of the others); each control-flow op gets
# programs of its own, drawn among the data-flow ops, after them.
DATA_FLOW_OPS = sorted(set(OPS) - set(CONTROL_FLOW_OPS))
SEED_ORDER = DATA_FLOW_OPS + sorted(CONTROL_FLOW_OPS)
PER_OP = max(1, TOTAL // 4 // len(DATA_FLOW_OPS))   # a quarter of the programs, over the ops
CHUNKS = 12
PER_CHUNK = max(1, (TOTAL - PER_OP * len(DATA_FLOW_OPS)) // CHUNKS)
SHRINK_AT_MOST = 2     # distinct shrunk repros per failing test
SHRINK_SECONDS = 8     # per shrink: a failing run stays bounded even when everything fails


def _documented_difference(spec):
    """Whether ad differs from TensorFlow on this program on purpose (README, "Where this
    project differs from TensorFlow on purpose"): second derivatives through reduce_prod,
    which TensorFlow takes through a Cumprod gradient that divides by x, so they part
    wherever a product's factor is 0, NaN or inf (which ops upstream easily make).
    ``test_conf_documented_differences.py`` asserts the difference itself."""
    return spec["mode"] == "grad2" and any(op["op"] == "reduce_prod" for op in spec["ops"])


def _check(tf, seeds, **gen_kwargs):
    failures = []
    for seed in seeds:
        spec = programs.generate(tf, seed, **gen_kwargs)
        diffs = programs.mismatch(tf, spec)
        if diffs and not _documented_difference(spec):
            failures.append((spec, diffs))
    if not failures:
        return
    report = [f"{len(failures)} of {len(seeds)} programs differ between ad and TensorFlow "
              f"(seeds {[s['seed'] for s, _ in failures][:20]})"]
    seen = set()
    for spec, diffs in failures[:2 * SHRINK_AT_MOST]:  # shrinking costs: a bounded few
        if len(seen) >= SHRINK_AT_MOST:
            break
        small = shrink(tf, spec, lambda s: bool(programs.mismatch(tf, s))
                       and not _documented_difference(s),
                       max_seconds=SHRINK_SECONDS)
        key = tuple(op["op"] for op in small["ops"])
        if key in seen:
            continue
        seen.add(key)
        report += [f"\n--- seed {spec['seed']}: {len(spec['ops'])} ops shrunk to "
                   f"{len(small['ops'])} ({small['dtype']}, mode {small['mode']}); the original is "
                   f"programs.generate(tf, {spec['seed']}, **{gen_kwargs!r}); repro:",
                   programs.to_code(small), "--- differences (ad vs tf):",
                   "\n".join(programs.mismatch(tf, small))]
    pytest.fail("\n".join(report), pytrace=False)


@pytest.mark.parametrize("op", SEED_ORDER)
def test_generated_op(tf, op):
    base = 100_000 + 1000 * SEED_ORDER.index(op)
    _check(tf, range(base, base + PER_OP), must_use=op,
           op_names=DATA_FLOW_OPS if op in DATA_FLOW_OPS else DATA_FLOW_OPS + [op])


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_generated_mixed(tf, chunk):
    _check(tf, range(chunk * PER_CHUNK, (chunk + 1) * PER_CHUNK), op_names=DATA_FLOW_OPS)
