"""Glue between the Python package and the frame-evaluation hook in stagepy._core.

In: enable/disable requests. Out: the hook installed (or a warning saying why not),
with the resolver and the sweeper registered.
"""
import atexit
import sys
import threading
import warnings

_lock = threading.Lock()
_core = None
_core_error = None
_callbacks_set = False


def core():
    """The extension module, or None (with the reason kept in _core_error)."""
    global _core, _core_error
    if _core is None and _core_error is None:
        try:
            from . import _core as c
        except ImportError as e:  # not built for this interpreter
            _core_error = f"stagepy._core could not be imported: {e}"
        else:
            _core = c
            atexit.register(_finish_compiles_at_exit)
    return _core


def _finish_compiles_at_exit():
    """No background compile (tier-up) may run on while the interpreter and the C++ runtime
    shut down, and a kernel still being compiled fully reaches the disk cache only once that
    is done: finish those (a fraction of a second per kernel compiled in the last moments, at
    most 30 s), drop the rest, wait for the one under way."""
    if _core is not None and hasattr(_core, "wait_tier_ups"):
        _core.wait_tier_ups(30.0, True)


def unsupported_reason():
    """Why this interpreter cannot be hooked, or None."""
    v = tuple(sys.version_info[:3])
    shown = ".".join(map(str, v))
    if v < (3, 11, 4):
        return (f"stagepy needs CPython 3.11.4 or newer (3.11.0-3.11.3 skip the hook for some frames); "
                f"this is {shown}")
    if v >= (3, 14):
        return f"stagepy supports CPython 3.11 to 3.13; this is {shown}"
    if sys.implementation.name != "cpython":
        return f"stagepy needs CPython, not {sys.implementation.name}"
    if getattr(sys, "_is_gil_enabled", lambda: True)() is False:
        return "stagepy does not support the free-threaded build"
    c = core()
    if c is None:
        return _core_error
    if not c.HOOK_SUPPORTED:
        return c.UNSUPPORTED_REASON
    return None


def enable():
    """Install the hook. Returns True if this call turned it on."""
    with _lock:
        why = unsupported_reason()
        if why is not None:
            warnings.warn(f"stagepy is not enabled: {why}", RuntimeWarning, stacklevel=3)
            return False
        c = core()
        if c.enabled():
            return False
        global _callbacks_set
        if not _callbacks_set:  # set once, so that tests may substitute their own
            from . import _compat, _resolve, _sweep, _types
            _compat.install()
            _types.register_python()
            from . import _rewrite
            c.set_resolver(_resolve.resolve)
            c.set_user_file(_rewrite.is_user_file)
            c.set_sweeper(_sweep.sweep)
            c.set_helper_info(_rewrite.helper_info)
            _callbacks_set = True
        c.enable()
        return True


def disable():
    with _lock:
        c = core() if _core_error is None else None
        if c is not None and c.HOOK_SUPPORTED:
            c.disable()


def is_enabled():
    c = _core
    return bool(c is not None and c.HOOK_SUPPORTED and c.enabled())
