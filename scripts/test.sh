#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs every test:
#   1. the core library and its GoogleTest binary (ctest), with LLVM 19;
#   2. a compile check of the core against LLVM 16 (the GPU machine's LLVM);
#   3. for each CPython (3.11, 3.12, 3.13): pip install . and the pytest suite;
#   4. the fuzzer with the GPU path emulated; 5. scripts/sanitize.sh (ASan + UBSan).
# The test runs go two at a time (see below).
# Build trees live under build/ and ccache under build/ccache, so a second run is quick.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
source scripts/pythons.sh
scripts/setup.sh

export CCACHE_DIR="${CCACHE_DIR:-$repo/build/ccache}" CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=1
export CMAKE_GENERATOR=Ninja
# The compiler pip's build of the extension uses (scikit-build-core: g++), named the same for
# every build, so that ccache gives the core's objects of the GoogleTest build to pip's.
export CC="${CC:-gcc}" CXX="${CXX:-g++}"
jobs="$(nproc)"
t0=$SECONDS

echo "== core + GoogleTest (LLVM 19) ($((SECONDS - t0)) s)"
cmake -S . -B build/ctest -DSTAGEPY_BUILD_PYTHON=OFF -DLLVM_DIR=/usr/lib/llvm-19/lib/cmake/llvm >/dev/null
cmake --build build/ctest -j "$jobs"
ctest --test-dir build/ctest --output-on-failure -j "$jobs"

echo "== compile check of the core against LLVM 16 ($((SECONDS - t0)) s)"
cmake -S . -B build/llvm16 -DSTAGEPY_CORE_ONLY=ON -DLLVM_DIR=/usr/lib/llvm-16/lib/cmake/llvm >/dev/null
cmake --build build/llvm16 -j "$jobs"

# Every build first (they use every core), then the test runs two at a time: one pytest process
# keeps about 1.2 cores busy, so on a small machine two side by side take little longer than one.
# Each run writes its own log (shown when it ends) and its own kernel cache folder (conftest.py).
pythons=($(stagepy_pythons))
for py in "${pythons[@]}"; do
  echo "== install for $("$py" -c 'import sys; print("CPython %d.%d" % sys.version_info[:2])') ($((SECONDS - t0)) s)"
  "$py" -m pip install -q --disable-pip-version-check --no-build-isolation .
done
echo "== sanitizer build ($((SECONDS - t0)) s)"
scripts/sanitize.sh build

logs="$repo/build/test-logs"
rm -rf "$logs" && mkdir -p "$logs"
failed=0
# run_job NAME COMMAND...: runs in the background, its output into $logs/NAME.
run_job() {
  local name="$1"; shift
  ( set +e; ( set -e; "$@" ) >"$logs/$name" 2>&1; echo $? >"$logs/$name.rc" ) &
}
# finish_jobs: waits for the background runs, prints each log, and notes any failure.
finish_jobs() {
  wait
  for f in "$logs"/*.rc; do
    local name; name="$(basename "$f" .rc)"
    echo "== $name (exit $(cat "$f"), $((SECONDS - t0)) s)"
    cat "$logs/$name"
    [ "$(cat "$f")" = 0 ] || failed=1
    rm -f "$f"; mv "$logs/$name" "$logs/$name.done"
  done
}
# The first CPython runs every test; the others leave out the tests marked `backend`
# (pyproject.toml: code generation and runtime behaviour no CPython version changes).
pytest_on() {
  local only=()
  [ "$1" = "${pythons[0]}" ] || only=(-m "not backend")
  "$1" -m pytest tests/python tests/fuzz -q -p no:cacheprovider "${only[@]}"
}
# The fuzzer once more with the GPU path emulated (docs/gpu.md): every parallel loop goes
# through the device mirrors, flushes and the last-iteration protocol; then the C++ tests
# and a slice of the Python tests under ASan + UBSan (issue 6).
emulated_and_sanitized() {
  STAGEPY_GPU_EMULATE=1 "${pythons[0]}" -m pytest tests/fuzz tests/gpu -q -p no:cacheprovider && scripts/sanitize.sh run
}
# Longest first, so that the pairs take about as long: the first CPython's whole suite beside
# the emulated and sanitized runs, then the other CPythons' suites side by side.
names=() cmds=()
for py in "${pythons[@]}"; do
  names+=("pytest-$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')") cmds+=("pytest_on $py")
done
names=("${names[0]}" "emulated-and-sanitized" "${names[@]:1}") cmds=("${cmds[0]}" "emulated_and_sanitized" "${cmds[@]:1}")
for ((i = 0; i < ${#names[@]}; i += 2)); do
  for ((j = i; j < i + 2 && j < ${#names[@]}; j++)); do
    echo "== start ${names[j]} ($((SECONDS - t0)) s)"
    run_job "${names[j]}" ${cmds[j]}
  done
  finish_jobs
done
[ $failed = 0 ] || { echo "== FAILED ($((SECONDS - t0)) s)"; exit 1; }
echo "== all tests passed in $((SECONDS - t0)) s (after setup)"
