#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs every test:
#   1. the core library and its GoogleTest binary (ctest), with LLVM 19;
#   2. a compile check of the core against LLVM 16 (the GPU machine's LLVM);
#   3. for each CPython (3.11, 3.12, 3.13): pip install . and the pytest suite;
#   4. the fuzzer with the GPU path emulated; 5. scripts/sanitize.sh (ASan + UBSan).
# Build trees live under build/ and ccache under build/ccache, so a second run is quick.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
source scripts/pythons.sh
scripts/setup.sh

export CCACHE_DIR="${CCACHE_DIR:-$repo/build/ccache}" CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=1
export CMAKE_GENERATOR=Ninja
jobs="$(nproc)"
t0=$SECONDS

echo "== core + GoogleTest (LLVM 19)"
cmake -S . -B build/ctest -DSTAGEPY_BUILD_PYTHON=OFF -DLLVM_DIR=/usr/lib/llvm-19/lib/cmake/llvm >/dev/null
cmake --build build/ctest -j "$jobs"
ctest --test-dir build/ctest --output-on-failure -j "$jobs"

echo "== compile check of the core against LLVM 16"
cmake -S . -B build/llvm16 -DSTAGEPY_CORE_ONLY=ON -DLLVM_DIR=/usr/lib/llvm-16/lib/cmake/llvm >/dev/null
cmake --build build/llvm16 -j "$jobs"

for py in $(stagepy_pythons); do
  ver="$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  echo "== CPython $ver: install and pytest"
  "$py" -m pip install -q --disable-pip-version-check --no-build-isolation .
  (cd "$repo" && "$py" -m pytest tests/python tests/fuzz -q -p no:cacheprovider)
done
# The fuzzer once more with the GPU path emulated (docs/gpu.md): every parallel loop goes
# through the device mirrors, flushes and the last-iteration protocol.
py="$(stagepy_pythons | awk "{print \$1}")"
echo "== fuzzer with STAGEPY_GPU_EMULATE=1"
(cd "$repo" && STAGEPY_GPU_EMULATE=1 "$py" -m pytest tests/fuzz tests/gpu -q -p no:cacheprovider)
# The C++ tests and a slice of the Python tests under ASan + UBSan (issue 6).
echo "== sanitizers"
scripts/sanitize.sh
echo "== all tests passed in $((SECONDS - t0)) s (after setup)"
