"""For every test folder: the kernel cache of a test session is a folder of its own, so runs
neither read kernels an earlier build left in ~/.cache nor leave theirs there (the tests of
the cache itself set their own)."""
import os
import tempfile

os.environ.setdefault("STAGEPY_CACHE_DIR", tempfile.mkdtemp(prefix="stagepy-test-cache-"))

# Parallel loops run on threads only where a region holds enough work to repay waking them
# (STAGEPY_MIN_PARALLEL_COST, default 32768 cost units: parallel_runtime.h). The tests use
# small arrays to exercise the parallel paths, so they run with no such minimum; the tests
# of the minimum itself set it back (test_parallel.py).
os.environ.setdefault("STAGEPY_MIN_PARALLEL_COST", "0")
