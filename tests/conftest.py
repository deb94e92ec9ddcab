"""For every test folder: the kernel cache of a test session is a folder of its own, so runs
neither read kernels an earlier build left in ~/.cache nor leave theirs there (the tests of
the cache itself set their own)."""
import os
import tempfile

os.environ.setdefault("STAGEPY_CACHE_DIR", tempfile.mkdtemp(prefix="stagepy-test-cache-"))
