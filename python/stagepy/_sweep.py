"""The sweep run before the hook steps aside.

In: nothing (it walks the live objects). Out: every live function's code decided, the
functions whose code has a replacement pointed at it, and whether stepping aside is
safe - that is, whether any function created from now on will come from decided code.
"""
import gc
import sys
from types import CodeType, FunctionType

from . import _compat, _hook


def _replacement_in_consts(code, decision, depth=0):
    if depth > 32:
        return False
    for c in code.co_consts:
        if type(c) is CodeType:
            if isinstance(decision(c), CodeType):
                return True
            if _replacement_in_consts(c, decision, depth + 1):
                return True
    return False


def sweep():
    core = _hook.core()
    decision, retarget = core.decision, core.retarget
    held = set()
    funcs = []
    jit_types = _compat.foreign_jit_types()
    for obj in gc.get_objects():
        if type(obj) is FunctionType:
            funcs.append(obj)
        elif jit_types and isinstance(obj, jit_types):
            held.add(id(getattr(obj, "py_func", None)))
    for f in funcs:
        if id(f) not in held:
            retarget(f)
    if sys.version_info < (3, 12):
        # No function watchers before 3.12: a frame running original code could still
        # create functions from original constants that have replacements.
        for frame in sys._current_frames().values():
            while frame is not None:
                if _replacement_in_consts(frame.f_code, decision):
                    return False
                frame = frame.f_back
    return True
