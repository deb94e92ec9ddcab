"""Loop-nest rewriting.

In: a code object (its nested code constants already replaced). Out: a replacement in
which every `for ... in range(...)` loop that stagepy lifts is preceded by a call into the
runtime, or None when there is nothing to rewrite.

The inserted code, before the loop's `range(...)` evaluation:

        r = <Nest>()                       # runs the whole nest natively, or declines
        if r is None: goto ORIGINAL        # declined: the original loop runs
        if r == 0:    goto AFTER_LOOP      # done: locals were written back
        if r == k:    goto RESUME_k        # native code stopped before a statement that
                                           # must run in CPython (an error, an overflow...)
    ORIGINAL: <the original loop, unchanged>
    ...
    RESUME_k: (at the end of the code) push the iterators of the enclosing for loops,
              positioned where native code stopped, and jump to the statement.

Line numbers, exception-table entries and positions of the original instructions are kept,
so tracebacks and coverage still point at the user's lines.
"""
import functools
import os
from types import CodeType
import sys
import sysconfig

from . import _bytecode as B
from . import _hook
from . import _library_cache

PY = sys.version_info[:2]


def _library_dirs():
    dirs = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            dirs.add(os.path.realpath(p))
    dirs.add(os.path.realpath(os.path.dirname(os.path.dirname(__file__))))  # stagepy itself
    return tuple(sorted(dirs))


_LIB_DIRS = _library_dirs()


@functools.lru_cache(maxsize=8192)
def is_user_file(filename):
    """Whether loops in this file belong to the user (listed in the report even when they
    stay interpreted) rather than to the standard library or an installed package."""
    if not filename or filename.startswith("<frozen"):
        return False
    if filename.startswith("<"):
        return True
    real = os.path.realpath(filename)
    return not any(real.startswith(d + os.sep) for d in _LIB_DIRS)


def _code_info(core, code, instrs, depth=0, parts=None):
    """The lifter's CodeInfo for `code`; `parts`, a list, gets what it was made of
    (normalized instructions, constants, flag, cell slots; a generator expression's as
    ("genexpr-parts", its parts, offsets)) for _library_cache."""
    consts = B.normalize_consts(code.co_consts)
    recorded = list(consts) if parts is not None else None
    for i, c in enumerate(code.co_consts):
        if type(c) is CodeType and c.co_name == "<genexpr>" and depth < 4:
            sub = [] if recorded is not None else None
            g = _genexpr_info(core, c, depth, sub)
            if g is not None:
                consts[i] = ("genexpr", g)
                if recorded is not None:
                    recorded[i] = ("genexpr-parts", sub[0], g[1], g[2], g[3])
    norm, flag, cells = B.normalize(code, instrs), bool(code.co_flags & 0x1), _cell_slots(code)
    if parts is not None:
        parts.append((tuple(norm), tuple(recorded), flag, cells))
    return core.CodeInfo(norm, consts, flag, code.co_filename, code.co_qualname, code.co_firstlineno,
                         PY[0] * 100 + PY[1], cells)


def _cell_slots(code):
    """The frame slots holding cells: k for the code's own cell variables (arguments among
    them), -1 - k for free variables (the enclosing scope's cells)."""
    own = list(code.co_varnames) + [c for c in code.co_cellvars if c not in code.co_varnames]
    cells = set(code.co_cellvars)
    return tuple([k for k, n in enumerate(own) if n in cells] +
                 [-1 - (len(own) + k) for k in range(len(code.co_freevars))])


def _genexpr_info(core, code, depth, parts=None):
    """A generator expression's code, for a nest that consumes it (sum(x for x in ...)):
    (CodeInfo, its loop over `.0` as (entry, FOR_ITER, exit) offsets), or None."""
    from . import _compat
    code = _compat.original(code) or code  # its own loops may have been rewritten
    instrs = B.decode(code)
    h = next((k for k, ins in enumerate(instrs) if ins.name == "FOR_ITER"), None)
    if h is None or h < 1 or instrs[h - 1].name != "LOAD_FAST" or code.co_varnames[instrs[h - 1].arg] != ".0":
        return None
    x = B.loop_exit(instrs, h)
    if x >= len(instrs):
        return None
    return (_code_info(core, code, instrs, depth + 1, parts), instrs[h - 1].offset, instrs[h].offset, instrs[x].offset)


_CO_VARARGS, _CO_VARKEYWORDS, _CO_GENERATOR, _CO_COROUTINE, _CO_ITERABLE_COROUTINE, _CO_ASYNC_GENERATOR = (
    0x4, 0x8, 0x20, 0x80, 0x100, 0x200)


def helper_info(fn):
    """For inlining a plain Python function a nest calls: (CodeInfo, parameter count,
    positional-only count, parameter names), or a str saying why it cannot be inlined (the
    runtime puts it in the report)."""
    from . import _compat
    code = _compat.original(fn.__code__) or fn.__code__  # a helper with loops was rewritten
    if code.co_flags & (_CO_GENERATOR | _CO_COROUTINE | _CO_ITERABLE_COROUTINE | _CO_ASYNC_GENERATOR):
        return "it is a generator or a coroutine"
    if code.co_flags & (_CO_VARARGS | _CO_VARKEYWORDS) or code.co_kwonlyargcount:
        return "it takes *args, **kwargs or keyword-only arguments"
    if code.co_freevars or code.co_cellvars:
        nested = [c.co_name for c in code.co_consts if hasattr(c, "co_code")]
        if any(n in ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>") for n in nested):
            return "it has a comprehension or generator expression reading its variables (a closure)"
        return "it uses a closure"
    core = _hook.core()
    return (_code_info(core, code, B.decode(code)), code.co_argcount, code.co_posonlyargcount,
            code.co_varnames[:code.co_argcount])


def rewrite(code):
    core = _hook.core()
    if core is None or not hasattr(core, "Nest"):
        return None
    user = is_user_file(code.co_filename)
    if not user and "range" not in code.co_names:
        # Library code only lifts loops over a name `range` (below), which a LOAD_GLOBAL or
        # LOAD_NAME of co_names would load: without decoding, the sweep at start-up stays
        # cheap for the thousands of library functions it sees.
        return None
    # Library code an earlier process of this build rewrote, or found nothing to lift in.
    cache_key = None if user else _library_cache.key(code)
    known = _library_cache.lookup(cache_key)
    if known is _library_cache.PLAIN:
        return None
    if known is not None:
        rebuilt = _library_cache.rebuild(code, known, core, PY[0] * 100 + PY[1])
        if rebuilt is not None:
            return rebuilt
    instrs = B.decode(code)
    loops = B.candidate_loops(code, instrs)
    if not loops:
        _library_cache.remember_plain(cache_key)
        return None
    parts = []
    info = _code_info(core, code, instrs, parts=parts if cache_key else None)
    plans = []
    for lp in loops:
        # Library code: only loops over range() (compiled once they have run often).
        # The user's files: every loop that lifts; the report also lists those that do
        # not, when they are range() loops or outside any for loop (while loops: outside
        # any loop; an inner loop over anything else inside a loop CPython runs would be
        # noise).
        if not user and not lp.over_range:
            continue
        exit_off = instrs[lp.exit].offset if lp.exit < len(instrs) else -1
        nest = core.Nest(info, instrs[lp.entry].offset, instrs[lp.header].offset, exit_off, lp.depth, user,
                         lp.is_while)
        reported = lp.outermost if lp.is_while else (lp.over_range or lp.depth == 0)
        if nest.ok or (user and reported):
            plans.append((lp, nest))
    if not plans:
        _library_cache.remember_plain(cache_key)
        return None
    new = _insert(code, instrs, plans, core)
    if cache_key and parts:
        nests = [(instrs[lp.entry].offset, instrs[lp.header].offset,
                  instrs[lp.exit].offset if lp.exit < len(instrs) else -1, lp.depth, lp.is_while, nest)
                 for lp, nest in plans]
        _library_cache.remember(cache_key, _library_cache.record(code, new, parts[0], nests, core))
    return new


def _jump_if(kind):
    """The forward conditional jump named for this version."""
    if PY >= (3, 12):
        return {"none": "POP_JUMP_IF_NONE", "true": "POP_JUMP_IF_TRUE"}[kind]
    return {"none": "POP_JUMP_FORWARD_IF_NONE", "true": "POP_JUMP_FORWARD_IF_TRUE"}[kind]


def _compare_eq_arg_from_compiler():
    """COMPARE_OP's argument for `==` feeding a jump, as this CPython's compiler emits it:
    3.12 keeps a mask of the true outcomes in the low bits, which the specialized forms
    use; 3.13 adds a bool-conversion flag."""
    code = compile("if x == 0:\n    pass\n", "<stagepy>", "exec")
    for ins in B.decode(code):
        if ins.name == "COMPARE_OP":
            return ins.arg
    raise RuntimeError("no COMPARE_OP in a comparison")


_COMPARE_EQ_ARG = _compare_eq_arg_from_compiler()


def _compare_eq_arg():
    return _COMPARE_EQ_ARG


def _call0(callee_const, pos):
    """Instructions calling co_consts[callee_const]() (leaves the result on the stack)."""
    mk = B.make
    if PY >= (3, 13):
        seq = [mk("LOAD_CONST", callee_const, pos), mk("PUSH_NULL", None, pos)]
    else:
        seq = [mk("PUSH_NULL", None, pos), mk("LOAD_CONST", callee_const, pos)]
    if PY < (3, 12):
        seq.append(mk("PRECALL", 0, pos))
    seq.append(mk("CALL", 0, pos))
    return seq


def _insert(code, instrs, plans, core):
    mk = B.make
    consts = list(code.co_consts)

    def const(value):
        consts.append(value)
        return len(consts) - 1

    # Each instruction's exception handler (target instruction, depth, lasti) or None.
    handler = [None] * len(instrs)
    for first, last, target, depth, lasti in B.exception_entries_by_index(code, instrs):
        for k in range(first, last):
            handler[k] = (instrs[target], depth, lasti)

    by_entry = {lp.entry: (lp, nest) for lp, nest in plans}
    resume_iters = const(core._resume_iters)
    zero = const(0)
    out, out_handler, tail, tail_handler = [], [], [], []
    head_of = {}  # id(original instruction) -> first instruction inserted before it
    for k, ins in enumerate(instrs):
        if k in by_entry:
            lp, nest = by_entry[k]
            pos = instrs[lp.header].positions
            h = handler[k]
            nest_k = const(nest)
            fallback = ins  # the original loop's first instruction
            done_pop = mk("POP_TOP", None, pos)
            seq = _call0(nest_k, pos)
            seq += [mk("COPY", 1, pos), mk(_jump_if("none"), 0, pos, target=None)]
            none_jump = seq[-1]
            seq += [mk("COPY", 1, pos), mk("LOAD_CONST", zero, pos), mk("COMPARE_OP", _compare_eq_arg(), pos),
                    mk(_jump_if("true"), 0, pos)]
            seq[-1].extra = ("target", done_pop)
            for r, (offset, n_iters, reenter) in enumerate(nest.resumes, start=1):
                tramp_first = mk("POP_TOP", None, pos)
                seq += [mk("COPY", 1, pos), mk("LOAD_CONST", const(r), pos),
                        mk("COMPARE_OP", _compare_eq_arg(), pos), mk(_jump_if("true"), 0, pos)]
                seq[-1].extra = ("target", tramp_first)
                target = _index_at(instrs, offset)
                tramp = [tramp_first] + _call0(resume_iters, pos)
                tramp.append(mk("UNPACK_SEQUENCE", n_iters, pos) if n_iters else mk("POP_TOP", None, pos))
                jump = mk("JUMP_BACKWARD", 0, pos)
                # Straight to the statement: not through a nest call placed there, which
                # could stop at this same statement again.
                jump.extra = ("exact", instrs[target])
                tramp.append(jump)
                tail += tramp
                tail_handler += [h] * len(tramp)
            # Nothing else can come back; treat it like None.
            seq.append(mk("JUMP_FORWARD", 0, pos))
            seq[-1].extra = ("target", "fallback_pop")
            fallback_pop = mk("POP_TOP", None, pos)
            seq[-1].extra = ("target", fallback_pop)
            none_jump.extra = ("target", fallback_pop)
            if lp.exit < len(instrs):
                done_jump = mk("JUMP_FORWARD", 0, pos)
                done_jump.extra = ("target", instrs[lp.exit])
                done = [done_jump]
            else:
                # A loop that only ends by a return or raise cannot finish natively either.
                done = [mk("LOAD_CONST", const(SystemError("stagepy: a loop without an exit finished")), pos),
                        mk("RAISE_VARARGS", 1, pos)]
            seq += [done_pop, *done, fallback_pop]
            head_of[id(ins)] = seq[0]
            out += seq
            out_handler += [h] * len(seq)
        out.append(ins)
        out_handler.append(handler[k])
    final = out + tail
    final_handler = out_handler + tail_handler
    # Resolve targets: original instructions keep theirs (as objects), inserted ones
    # name their target object in .extra.
    pos_of = {id(x): i for i, x in enumerate(final)}
    old_targets = {id(ins): ins.target for ins in instrs}

    # A while statement's own jumps to its first test (`continue`) stay inside the loop.
    index_of = {id(ins): k for k, ins in enumerate(instrs)}
    own_span = {id(instrs[lp.entry]): (lp.entry, lp.exit) for lp, _ in plans if lp.is_while}

    def entry_of(target, source=None):
        # A jump to a rewritten loop goes through its runtime call (the fall-through into
        # the original loop, after the call declined, does not jump).
        head = head_of.get(id(target))
        span = own_span.get(id(target))
        if span is not None and source is not None and span[0] <= index_of.get(id(source), -1) < span[1]:
            head = None
        return pos_of[id(head if head is not None else target)]
    for x in final:
        if x.extra and x.extra[0] == "target":
            x.target = entry_of(x.extra[1])
            x.extra = None
        elif x.extra and x.extra[0] == "exact":
            x.target = pos_of[id(x.extra[1])]
            x.extra = None
        elif id(x) in old_targets and old_targets[id(x)] is not None:
            x.target = entry_of(instrs[old_targets[id(x)]], x)
    # Exception table from per-instruction handlers.
    entries = []
    k = 0
    while k < len(final):
        h = final_handler[k]
        j = k
        while j < len(final) and final_handler[j] == h:
            j += 1
        if h is not None:
            entries.append((k, j, pos_of[id(h[0])], h[1], h[2]))
        k = j
    max_iters = max((n for _, nest in plans for (_, n, _) in nest.resumes), default=0)
    new = B.assemble(code, final, entries, consts=consts, stacksize=code.co_stacksize + 3 + max_iters)
    for _, nest in plans:
        nest.set_owner(new)
    return new


def _index_at(instrs, offset):
    for k, ins in enumerate(instrs):
        if ins.offset == offset:
            return k
    raise ValueError(f"no instruction at offset {offset}")
