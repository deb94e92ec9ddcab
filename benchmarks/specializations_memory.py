"""Memory across many specializations of code that comes and goes.

    STAGEPY_CACHE=0 python benchmarks/specializations_memory.py [N] [STEP]

N exec'd functions (default 20000), each a distinct one-line loop kernel, called twice and
then dropped (as a template engine or a notebook cell run again would); prints the process's
resident memory every STEP (default 5000) functions, with the kernels loaded and the report
records kept. A measurement, not a test: figures go to docs/testing.md.
"""
import gc
import os
import sys
import time

import numpy as np
import stagepy
from stagepy import _hook


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    step = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    stagepy.enable()
    core = _hook.core()
    t0 = time.time()
    a = np.arange(8.0)
    for k in range(n):
        ns = {}
        exec(compile(f"def f(a):\n    for i in range(a.shape[0]):\n        a[i] = a[i] * 0.5 + {k}.25\n",
                     f"<gen{k}>", "exec"), ns)
        for _ in range(2):
            a[:] = np.arange(8.0)
            ns["f"](a)
        assert a[3] == 1.5 + k + 0.25
        del ns
        if (k + 1) % step == 0:
            gc.collect()
            st = core.kernel_stats()
            print(f"{k + 1} specializations: rss {rss_mib():.0f} MiB, kernels loaded {st['loaded']}, "
                  f"evicted {st['evicted']}, report records {len(stagepy.report())}, {time.time() - t0:.0f} s",
                  flush=True)


if __name__ == "__main__":
    main()
