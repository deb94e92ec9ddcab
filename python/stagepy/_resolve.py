"""The resolver: in, a code object the hook sees for the first time (one that the C
prefilter found a `for ... in range(...)` candidate in, or holding such code); out, the
replacement code object the hook should run instead, or None.

Nested code objects (functions, classes, comprehensions defined inside) are decided
first and the replacement holds their replacements in its constants, so functions the
replacement creates need no hook at all.
"""
from types import CodeType

from . import _hook


_OWN_DIR = __file__.rsplit("/", 1)[0] + "/"


def resolve(code):
    if code.co_filename.startswith(_OWN_DIR):
        return None  # stagepy's own code runs as it is
    from . import _compat
    if _compat.foreign_jit_code(code):
        return None  # numba compiles its own helpers from their bytecode
    core = _hook.core()
    original = code
    consts = code.co_consts
    new_consts = None
    for i, c in enumerate(consts):
        if type(c) is CodeType:
            r = core.decide(c)
            if r is not None:
                if new_consts is None:
                    new_consts = list(consts)
                new_consts[i] = r
    if new_consts is not None:
        code = code.replace(co_consts=tuple(new_consts))
    from . import _rewrite
    rewritten = _rewrite.rewrite(code)
    if rewritten is not None:
        code = rewritten
    if new_consts is None and rewritten is None:
        return None
    _compat.remember(original, code)
    return code
