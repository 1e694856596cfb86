#!/usr/bin/env bash
# The GPU check, one command on a machine with an NVIDIA GPU and CuPy (issue 26):
#   the engine and widget suites on CuPy (the tests marked `gpu`), the backend
#   suite (saved models moved between devices, no hidden host copies), and the
#   GPU benchmark (W2-W5 and W2-large: NumPy, the engine on CPU and GPU, PyTorch on CUDA).
#
#   OUT=gpu-run bash scripts/gpu_check.sh      # logs, gpu.json and gpu.md land in $OUT
#
# Wheels in .whl/ (hypothesis, matplotlib, ipywidgets, anywidget, pytest-xdist,
# pytest-timeout) are installed first where a machine has no network.
# BACKEND=strict runs the same steps on the stand-in backend (no GPU needed).
set -u
out=${OUT:-gpu-run}
backend=${BACKEND:-cupy}
mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
if [ -d .whl ]; then
    # --no-deps: the image's NumPy is not in .whl/, and pip would refuse the lot for it
    $py -m pip install -q --no-index --no-deps --break-system-packages .whl/*.whl 2>&1 \
        | grep -v "^WARNING" | tail -3
fi
{
    nvidia-smi -L 2>/dev/null
    $py -c "import numpy, autodiff as ad; print('python', __import__('sys').version.split()[0], 'numpy', numpy.__version__, 'backends', ad.backend.available_backends())"
    $py -c "import cupy; print('cupy', cupy.__version__, 'CUDA runtime', cupy.cuda.runtime.runtimeGetVersion(), 'driver', cupy.cuda.runtime.driverGetVersion())" 2>&1 | tail -1
    $py -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1 | tail -1
} | tee "$out/machine.txt"

marker=(); [ "$backend" = cupy ] && marker=(-m gpu)
workers=(); $py -c "import xdist" 2>/dev/null && workers=(-n "${WORKERS:-12}")
timer=(); $py -c "import pytest_timeout" 2>/dev/null && timer=(--timeout 120)
start=$(date +%s)
AUTODIFF_TEST_BACKENDS=$backend timeout "${SUITE_TIMEOUT:-330}" $py -m pytest -q -o addopts="" \
    -p no:cacheprovider "${workers[@]}" "${timer[@]}" "${marker[@]}" --tb=short -rfE \
    tests/autodiff tests/widgets > "$out/suite.txt" 2>&1
echo "engine+widget suites on $backend: rc=$? in $(( $(date +%s) - start )) s: $(tail -1 "$out/suite.txt")" | tee -a "$out/machine.txt"
start=$(date +%s)
timeout "${BACKENDS_TIMEOUT:-150}" $py -m pytest -q -o addopts="" -p no:cacheprovider "${timer[@]}" \
    --tb=short -rfEs tests/backends > "$out/backends.txt" 2>&1
echo "backend suite: rc=$? in $(( $(date +%s) - start )) s: $(tail -1 "$out/backends.txt")" | tee -a "$out/machine.txt"
timeout "${BENCH_TIMEOUT:-200}" $py -m benchmarks.gpu --backend "$backend" --repeats "${REPEATS:-15}" \
    --json "$out/gpu.json" --markdown "$out/gpu.md" 2>&1 | tee "$out/bench.txt"
echo "benchmark: rc=${PIPESTATUS[0]}" | tee -a "$out/machine.txt"
