#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer (issue 6): builds the core library, its
# GoogleTest binary and the extension with -fsanitize=address,undefined into build/asan
# (the extension into build/asan/py/stagepy, next to a copy of the Python package), then
# runs the GoogleTest binary and a slice of the Python tests under the sanitizers. Any
# report fails the run (-fno-sanitize-recover; ASan aborts on its first error).
#   scripts/sanitize.sh            # after scripts/setup.sh: build, then run
#   scripts/sanitize.sh build|run  # one half (scripts/test.sh builds with the other builds)
set -euo pipefail
mode="${1:-all}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
source scripts/pythons.sh
py="${PYTHON:-$(stagepy_pythons | awk '{print $1}')}"
out=build/asan
export CCACHE_DIR="${CCACHE_DIR:-$repo/build/ccache}" CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=1
export CMAKE_GENERATOR=Ninja
if [ "$mode" != run ]; then
mkdir -p "$out/py/stagepy"
cmake -S . -B "$out" -DSTAGEPY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DLLVM_DIR=/usr/lib/llvm-19/lib/cmake/llvm \
  -DPython_EXECUTABLE="$(command -v "$py")" -DSTAGEPY_EXTENSION_DIR="$repo/$out/py/stagepy" >/dev/null
cmake --build "$out" -j "$(nproc)"
cp python/stagepy/*.py "$out/py/stagepy/"
fi
[ "$mode" != build ] || exit 0

# LLVM and CPython keep some memory until exit on purpose: leaks are not checked.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:strict_init_order=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
echo "== GoogleTest under ASan/UBSan"
(cd "$out" && ./stagepy_tests --gtest_brief=1)

echo "== pytest slice under ASan/UBSan"
# CPython is not built with ASan: its runtime must be loaded first (into python only). pytest
# captures the test's output, so the sanitizers write their reports to files, shown on failure.
asan_rt="$(gcc -print-file-name=libasan.so)"
ubsan_rt="$(gcc -print-file-name=libubsan.so)"
logs="$repo/$out/reports"
rm -rf "$logs" && mkdir -p "$logs"
export ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$logs/asan" UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$logs/ubsan"
run_py() { LD_PRELOAD="$asan_rt $ubsan_rt" PYTHONPATH="$repo/$out/py" STAGEPY_CACHE=0 "$py" "$@"; }
run_py -c 'import stagepy, sys; assert stagepy.__file__.startswith(sys.argv[1]), stagepy.__file__' "$repo/$out/py"
status=0
# (--capture=sys: pytest captures Python's output only, so that a report the sanitizers write
# to the process's stderr, as UBSan does beside ASan whatever log_path says, reaches the log.)
STAGEPY_FUZZ_EXAMPLES=60 run_py -m pytest -q -p no:cacheprovider -p no:faulthandler --capture=sys \
  tests/python/test_native.py tests/python/test_native_errors.py tests/python/test_parallel.py \
  tests/python/test_lists.py tests/python/test_buffers.py tests/python/test_complex.py \
  tests/python/test_fp_warnings.py tests/python/test_hook.py tests/python/test_stress.py \
  tests/python/test_seq_loops.py tests/python/test_rows.py tests/python/test_kernel_memory.py \
  tests/python/test_domains.py tests/python/test_numpy_types.py tests/python/test_reductions.py \
  tests/python/test_slices.py tests/python/test_slice_loops.py tests/python/test_dot.py tests/python/test_array_powers.py \
  tests/python/test_tier_up.py tests/python/test_fork.py tests/python/test_kept_arrays.py tests/python/test_range_checks.py tests/python/test_cost_probe.py tests/python/test_parallel_undo.py \
  tests/python/test_tagged_lists.py tests/python/test_membership.py tests/python/test_made_lists.py tests/python/test_lists_of_tuples.py tests/python/test_growing_lists.py tests/python/test_flat_loops.py tests/python/test_row_loops.py tests/python/test_ragged_lists.py tests/python/test_mixed_lists.py tests/python/test_none_tests.py tests/python/test_random_module.py tests/python/test_numpy_random.py tests/python/test_bisect.py tests/python/test_math_hypot.py tests/python/test_objects.py tests/python/test_object_columns.py tests/python/test_methods.py tests/python/test_logged_statements.py tests/python/test_attributes.py tests/python/test_helpers.py tests/fuzz || status=$?
if compgen -G "$logs/*" >/dev/null; then
  cat "$logs"/*
  status=1
fi
exit $status
