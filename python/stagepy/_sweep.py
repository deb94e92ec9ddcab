"""The sweep run before the hook steps aside.

In: nothing (it walks the live objects). Out: every live function's code decided, the
functions whose code has a replacement pointed at it, and whether stepping aside is
safe - that is, whether any function created from now on will come from decided code.
"""
import gc
import sys
from types import CodeType, FunctionType

from . import _bytecode as B
from . import _compat, _hook


def _replacement_among(consts, decision, depth=0):
    """Whether any code object among `consts`, or nested in one, has a replacement."""
    if depth > 32:
        return False
    for c in consts:
        if type(c) is CodeType:
            if isinstance(decision(c), CodeType):
                return True
            if _replacement_among(c.co_consts, decision, depth + 1):
                return True
    return False


def _reachable_code_consts(code, lasti):
    """The code objects among `code`'s constants that its frame, stopped at byte offset
    `lasti`, may still load: those loaded at or after the first instruction it can reach
    again (following backward jumps and exception handlers). A module whose functions are
    defined before the loop that calls them cannot define them again."""
    instrs = B.decode(code)
    by_offset = {ins.offset: k for k, ins in enumerate(instrs)}
    lo = next((k for k, ins in enumerate(instrs) if ins.offset >= lasti), len(instrs)) if lasti >= 0 else 0
    handlers = [(start, end, by_offset[target]) for start, end, target, _, _ in B.exception_table(code)]
    changed = True
    while changed:
        changed = False
        first = instrs[lo].offset if lo < len(instrs) else len(code.co_code)
        for ins in instrs[lo:]:
            if ins.target is not None and ins.target < lo:
                lo, changed = ins.target, True
        for start, end, target in handlers:
            if end > first and target < lo:
                lo, changed = target, True
    return [code.co_consts[ins.arg] for ins in instrs[lo:]
            if ins.name == "LOAD_CONST" and type(code.co_consts[ins.arg]) is CodeType]


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
        # No function watchers before 3.12: a frame could still create functions from
        # original constants that have replacements, where it can reach their definition.
        for frame in sys._current_frames().values():
            while frame is not None:
                if _replacement_among(_reachable_code_consts(frame.f_code, frame.f_lasti), decision):
                    return False
                frame = frame.f_back
    return True
