"""stagepy: plain Python loop nests run as native code, with the results CPython gives.

    import stagepy
    stagepy.enable()          # or:  with stagepy.enable(): ...
    ...                       # loop nests in code that runs from here on are accelerated
    stagepy.print_report()

or, with no change to the program:  STAGEPY=1 python script.py   /   python -m stagepy script.py
"""
from . import _hook

__version__ = "0.1.0"
__all__ = ["enable", "disable", "enabled", "report", "print_report", "hook_stats", "finish_compiles", "set_threads", "threads", "thread_info", "set_strict_fp", "strict_fp",
           "set_target", "gpu_info"]


class _Activation:
    """What enable() returns: truthy when the hook is on; as a context manager it turns
    the hook off again on exit if this enable() call was the one that turned it on."""

    def __init__(self, turned_on):
        self._turned_on = turned_on

    def __bool__(self):
        return _hook.is_enabled()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._turned_on:
            disable()
        return False

    def __repr__(self):
        return f"<stagepy {'enabled' if _hook.is_enabled() else 'disabled'}>"


def enable():
    """Turn stagepy on for code that starts running from now on (idempotent).

    On an interpreter stagepy cannot hook, warns and does nothing."""
    return _Activation(_hook.enable())


def disable():
    """Turn stagepy off (idempotent): from now on every loop nest runs in CPython, including
    those of code already rewritten (they decline at their entry)."""
    _hook.disable()


def enabled():
    """Whether the hook is enabled."""
    return _hook.is_enabled()


def set_threads(n=0):
    """Threads for parallel loops from now on (0: STAGEPY_THREADS, or every core).
    Returns the number in effect."""
    c = _hook.core()
    return c.threads(int(n)) if c is not None and hasattr(c, "threads") else 1


def threads():
    """The threads parallel loops use."""
    c = _hook.core()
    return c.threads() if c is not None and hasattr(c, "threads") else 1


def thread_info():
    """The threads parallel loops use, and how often busy cores got in the way:
    `late_regions`, parallel regions in which a thread started more than 1 ms late (other
    processes had the cores), and `on_caller_regions`, regions that then ran on the calling
    thread instead (for 20 ms after such a region, doubling while it goes on, up to 1 s)."""
    c = _hook.core()
    if c is None or not hasattr(c, "thread_info"):
        return {"threads": 1, "late_regions": 0, "on_caller_regions": 0}
    return c.thread_info()


def strict_fp():
    """Whether float reductions keep CPython's order (set_strict_fp)."""
    c = _hook.core()
    return bool(c.strict_fp()) if c is not None and hasattr(c, "strict_fp") else False


def set_strict_fp(on=True):
    """Whether float reductions keep CPython's order from now on (their loops then run
    sequentially; otherwise a sum split over threads is added in another order, which may
    change its last bits). STAGEPY_STRICT_FP=1 sets it at start. Returns the setting."""
    c = _hook.core()
    return bool(c.strict_fp(1 if on else 0)) if c is not None and hasattr(c, "strict_fp") else bool(on)


def set_target(target):
    """Where parallel loops may run from now on: "auto" (the cost model picks the CPU's
    threads or the GPU), "gpu" (the GPU whenever the loop has a GPU version) or "cpu".
    Kernels compiled before keep the versions they have. STAGEPY_TARGET sets it at start."""
    c = _hook.core()
    if c is not None and hasattr(c, "set_target"):
        c.set_target(str(target))


def gpu_info():
    """The GPU as stagepy sees it: whether kernels get GPU versions (and why not), the
    device, the target, and the launches and copies so far."""
    c = _hook.core()
    if c is None or not hasattr(c, "gpu_info"):
        return {"enabled": False, "why_not": "stagepy's extension is not loaded"}
    return c.gpu_info()


def finish_compiles(timeout=60.0):
    """Wait until the kernels compiled so far run their fully optimized code.

    A kernel with parallel loops starts with quickly compiled loop bodies while a background
    thread compiles them fully (docs/architecture.md, "Tier-up"); its results are the same
    either way. Useful before timing warm calls. Returns True when nothing is left to compile
    (False after `timeout` seconds)."""
    c = _hook.core()
    if c is None or not hasattr(c, "wait_tier_ups"):
        return True
    return c.wait_tier_ups(float(timeout))


def hook_stats():
    """Counters of the frame-evaluation hook (frames seen, swaps, step-asides, errors)."""
    c = _hook.core()
    return c.hook_stats() if c is not None and c.HOOK_SUPPORTED else {}


def report():
    """One dict per loop nest seen (see docs/report.md)."""
    from . import _report
    return _report.report()


def print_report(file=None):
    """Print the report as a table (to stderr by default)."""
    from . import _report
    _report.print_report(file)
