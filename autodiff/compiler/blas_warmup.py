"""One explicit BLAS warm-up per process, made when a compiled program first runs.

Why: a training step's matrix products are small (a recurrent step's
``[32, 64] @ [64, 256]``, an attention head's ``[16, 8] @ [8, 16]``). With
OpenBLAS (NumPy's wheels bundle it), such a product runs about 2-3x slower
in a process that has not yet made one larger product than after it: 78 us
against 35 us for ``[32, 64] @ [64, 256]`` on one thread (OpenBLAS 0.3.31,
Haswell kernels). Measured, not documented by OpenBLAS: its single-precision
kernel reads pages of its work buffer (at 256-512 KiB into it) that a small
product never writes, and each read of a page with nothing mapped costs a
failed page walk, at every call, until some larger product has written there
(benchmarks/README.md, "OpenBLAS's slow small products", has the
measurements). A user's process reaches the fast state by chance, after any
product of about 384 x 384 or more; this module makes it reach it always,
once, at a known moment, so that a compiled step costs the same in every
process.

What it does: the first time a compiled program runs on the NumPy backend,
``warm()`` multiplies two 384 x 384 float32 arrays of its own (about 6 ms of
CPU, once) and drops the result. It reads and writes no user array and sets
no BLAS option, so it changes no value anywhere (tests/autodiff/
test_blas_warmup.py compares a compiled program's results bit for bit in
fresh processes with and without it). With another BLAS (MKL, Accelerate)
the product is merely one product more, made once. Other backends (CuPy,
the strict test backend) are left alone.

``TAPESCHOOL_WITHOUT_BLAS_WARMUP=1`` in the environment turns it off (the
benchmarks measure both states that way); ``state()`` says which one a
process is in:

    >>> from autodiff.compiler import blas_warmup
    >>> blas_warmup.warm()          # what a compiled program's first run does
    >>> blas_warmup.state()
    'done'

This module must not do more than that one product: it is a timing aid, never
a change of what is computed.
"""

import os

import numpy

from .. import backend

__all__ = ["pending", "warm", "state", "disabled"]

SIZE = 384   # packs 576 KiB of the first operand: past the 256-512 KiB the kernel reads


def disabled():
    """True when ``TAPESCHOOL_WITHOUT_BLAS_WARMUP`` is set (to anything but "" or "0")."""
    return os.environ.get("TAPESCHOOL_WITHOUT_BLAS_WARMUP", "") not in ("", "0")


_OFF = disabled()   # read once, at import
# Program.run reads this before every run, so the check costs one attribute lookup.
pending = not _OFF


def warm():
    """Makes the one warm-up product now, if this process has not made it and the active
    backend is NumPy; after it, ``pending`` is False. Returns None."""
    global pending
    if not pending or backend.get_backend() != "numpy":
        return
    pending = False
    a = numpy.ones((SIZE, SIZE), dtype=numpy.float32)
    numpy.matmul(a, a)


def state():
    """``'off'`` (turned off by the environment), ``'done'`` (made in this process) or
    ``'pending'`` (the next compiled run on NumPy makes it)."""
    if _OFF:
        return "off"
    return "pending" if pending else "done"
