"""Signals reach Python while native code runs: Ctrl-C stops a long nest with
KeyboardInterrupt, and a Python signal handler that does not raise runs and the nest goes on
to CPython's result."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")

LONG = textwrap.dedent("""
    import sys, stagepy
    import numpy as np
    stagepy.enable()

    def forever(A):
        s = 0.0
        for r in range(10 ** 12):
            k = 0
            while k < len(A):          # a native while loop inside a native for loop
                s += A[k] * r
                k += 1
        return s

    print("ready", flush=True)
    try:
        forever(np.ones(1000))
    except KeyboardInterrupt:
        rec = [r for r in stagepy.report() if r["function"] == "forever"][0]
        print("KeyboardInterrupt", rec["native_calls"], flush=True)
""")


def interrupted(tmp_path, source):
    """Runs `source` in a new interpreter, sends it SIGINT a second after it prints
    "ready" (compiled and running natively by then): its output after that, and how long
    it took to end."""
    script = tmp_path / "script.py"
    script.write_text(source)
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(1.0)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=30)
        return out, time.monotonic() - t0
    finally:
        p.kill()


def test_ctrl_c_interrupts_a_native_nest(tmp_path):
    out, waited = interrupted(tmp_path, LONG)
    words = out.split()
    assert words[:1] == ["KeyboardInterrupt"], out
    assert int(words[1]) >= 1, out  # it was running natively when interrupted
    assert waited < 10, waited


ON_THREADS = textwrap.dedent("""
    import sys, stagepy
    import numpy as np
    stagepy.enable()
    stagepy.set_threads(2)
    stagepy.set_target("cpu")         # a GPU cannot stop midway

    def forever(A):
        s = 0
        for r in range(10 ** 12):      # writes nothing: runs on threads, speculatively
            for k in range(len(A)):
                s += A[k]
        return s

    print("ready", flush=True)
    try:
        forever(np.ones(1000, np.int64))
    except KeyboardInterrupt:
        rec = [r for r in stagepy.report() if r["function"] == "forever"][0]
        print("KeyboardInterrupt", rec["native_calls"], rec["loops"][0]["parallel"], flush=True)
""")


def test_ctrl_c_interrupts_a_nest_running_on_threads(tmp_path):
    # The threads stop at their next outer iteration; the sequential version that runs
    # instead hands the signal to CPython at once.
    out, waited = interrupted(tmp_path, ON_THREADS)
    assert out.split() == ["KeyboardInterrupt", "1", "True"], out
    assert waited < 10, waited


LOGGED = textwrap.dedent("""
    import math, stagepy
    import numpy as np
    stagepy.enable()
    stagepy.set_threads(2)
    stagepy.set_target("cpu")

    def forever(A, out):
        for r in range(len(out)):      # writes elements and may stop: stores logged
            s = 0.0
            k = 0
            while k < 10 ** 15:
                s += math.sqrt(A[k % len(A)])
                k += 1
            out[r] = s
        return out

    out = np.zeros(8)
    print("ready", flush=True)
    try:
        forever(np.ones(1000), out)
    except KeyboardInterrupt:
        rec = [r for r in stagepy.report() if r["function"] == "forever"][0]
        print("KeyboardInterrupt", rec["native_calls"], rec["loops"][0]["parallel"], out.sum(), flush=True)
""")


def test_ctrl_c_interrupts_a_logged_nest_running_on_threads(tmp_path):
    # The threads stop at their next poll; their stores are undone (none happened: no
    # iteration got that far) and the sequential version hands the signal to CPython.
    out, waited = interrupted(tmp_path, LOGGED)
    assert out.split() == ["KeyboardInterrupt", "1", "True", "0.0"], out
    assert waited < 10, waited


HANDLER = textwrap.dedent("""
    import signal, stagepy
    stagepy.enable()
    ticks = 0

    def on_alarm(signum, frame):
        global ticks
        ticks += 1

    def work(n, m):
        s = 0
        for i in range(n):
            for j in range(m):
                s = (s + i * j) % 1000003
        return s

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)
    got = work(4000, 20000)
    signal.setitimer(signal.ITIMER_REAL, 0)
    stagepy.disable()
    want = 0
    for i in range(4000):
        want = (want + i * (20000 * (20000 - 1) // 2)) % 1000003
    print(got == want, ticks > 0)
""")


def test_python_signal_handlers_run_and_the_nest_goes_on(tmp_path):
    script = tmp_path / "handler.py"
    script.write_text(HANDLER)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["True", "True"], out.stdout + out.stderr
