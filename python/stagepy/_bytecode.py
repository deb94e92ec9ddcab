"""Bytecode of the running CPython (3.11-3.13), decoded, normalized and re-assembled.

In: a code object. Out:
  * decode(code)    -> [Ins]: instructions with EXTENDED_ARG folded, caches skipped, jump
                       targets resolved to instruction indices, positions and stack depths;
  * normalize(code) -> the version-neutral instruction tuples the C++ lifter reads;
  * candidate_loops -> the `for ... in range(...)` loops: where each starts and ends;
  * assemble(...)   -> a new code object from an edited instruction list, with jump
                       offsets, EXTENDED_ARG prefixes, the exception table, the location
                       table and the stack size recomputed.
Everything version-specific about the instruction format lives here.
"""
import dis
import opcode
import sys
from types import CodeType

PY = sys.version_info[:2]
OPNAME = opcode.opname
OPMAP = opcode.opmap
EXTENDED_ARG = OPMAP["EXTENDED_ARG"]
CACHE = OPMAP.get("CACHE", 0)
_ice = opcode._inline_cache_entries
if isinstance(_ice, dict):
    CACHES = [_ice.get(OPNAME[i], 0) for i in range(256)]
else:
    CACHES = list(_ice)
HASJREL = set(dis.hasjrel)
HASJABS = set(dis.hasjabs)
_BACKWARD = {op for op in range(256) if "BACKWARD" in OPNAME[op]}
_NB_OPS = dis._nb_ops
_CMP_OPS = dis.cmp_op
_INTRINSIC1 = getattr(dis, "_intrinsic_1_descs", None)
# Instructions after which control does not fall through.
_NO_FALLTHROUGH = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD",
                   "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT"}


class Ins:
    """One instruction. `offset` is where its first code unit (EXTENDED_ARG prefixes
    included) lives; `target` is the index of the instruction it jumps to, or None."""
    __slots__ = ("op", "arg", "offset", "size", "target", "positions", "depth", "extra")

    def __init__(self, op, arg, offset=-1, size=0, target=None, positions=None):
        self.op = op
        self.arg = arg
        self.offset = offset
        self.size = size
        self.target = target
        self.positions = positions
        self.depth = None
        self.extra = None  # free slot for the rewriter

    @property
    def name(self):
        return OPNAME[self.op]

    def __repr__(self):
        t = f" ->{self.target}" if self.target is not None else ""
        return f"<{self.offset}: {self.name} {self.arg}{t}>"


def _jump_target_offset(op, arg, after):
    """Byte offset a jump at an instruction ending (caches included) at `after` goes to."""
    if op in HASJABS:
        return arg * 2
    if op in _BACKWARD:
        return after - arg * 2
    return after + arg * 2


def decode(code):
    raw = code.co_code
    positions = list(code.co_positions())
    out, by_offset = [], {}
    ext, start, i = 0, None, 0
    while i < len(raw):
        op, a = raw[i], raw[i + 1]
        if start is None:
            start = i
        if op == EXTENDED_ARG:
            ext = (ext | a) << 8
            i += 2
            continue
        arg = ext | a
        ext = 0
        caches = CACHES[op]
        after = i + 2 + 2 * caches
        ins = Ins(op, arg if op >= opcode.HAVE_ARGUMENT else None, start, after - start,
                  positions=positions[i // 2])
        if op in HASJREL or op in HASJABS:
            ins.target = _jump_target_offset(op, arg, after)  # an offset for now
        by_offset[start] = len(out)
        out.append(ins)
        start = None
        i = after
    for ins in out:
        if ins.target is not None:
            ins.target = by_offset[ins.target]
    _compute_depths(out, code)
    return out


def _stack_effect(ins, jump):
    try:
        return dis.stack_effect(ins.op, ins.arg, jump=jump)
    except ValueError:
        return dis.stack_effect(ins.op, ins.arg)


def exception_table(code):
    """[(start, end, target, depth, lasti)] in byte offsets, end exclusive."""
    return [(e.start, e.end, e.target, e.depth, e.lasti) for e in dis._parse_exception_table(code)]


def _compute_depths(instrs, code):
    """Stack depth before each reachable instruction (None where unreachable)."""
    if not instrs:
        return
    index = {ins.offset: k for k, ins in enumerate(instrs)}
    work = [(0, 0)]
    for (start, end, target, depth, lasti) in exception_table(code):
        work.append((index[target], depth + 1 + int(lasti)))
    while work:
        k, d = work.pop()
        while k < len(instrs):
            ins = instrs[k]
            if ins.depth is not None:
                break
            ins.depth = d
            name = ins.name
            if ins.target is not None:
                work.append((ins.target, d + _stack_effect(ins, True)))
            if name in _NO_FALLTHROUGH:
                break
            d = d + _stack_effect(ins, False)
            k += 1


# ---------------------------------------------------------------- normalization

def _name(code, i):
    return code.co_names[i]


def _local(code, i):
    return code._varname_from_oparg(i)


def normalize(code, instrs=None):
    """Version-neutral tuples for the C++ lifter:
        (op, offset, target_offset, line, sarg, iarg, flags)
    op: the instruction name, with 3.11-3.13 differences folded (superinstructions
    expanded, COMPARE_OP decoded, name/local indices resolved). target_offset: the jump
    target's offset or -1. sarg: a name or operator string. iarg: a local/const index or
    small integer argument. flags: 1 = also pushes NULL (LOAD_GLOBAL/LOAD_ATTR method form),
    2 = COMPARE_OP result converted to bool (3.13)."""
    instrs = decode(code) if instrs is None else instrs
    out = []
    for ins in instrs:
        name, arg = ins.name, ins.arg
        line = ins.positions[0] if ins.positions and ins.positions[0] is not None else -1
        off = ins.offset
        tgt = instrs[ins.target].offset if ins.target is not None else -1

        def emit(op, sarg="", iarg=0, flags=0, target=tgt):
            out.append((op, off, target, line, sarg, iarg, flags))

        if name in ("LOAD_FAST", "LOAD_FAST_CHECK", "STORE_FAST", "LOAD_DEREF", "STORE_DEREF",
                    "DELETE_FAST", "LOAD_CLOSURE", "LOAD_FAST_AND_CLEAR", "DELETE_DEREF"):
            emit(name, _local(code, arg), arg)
        elif name == "LOAD_FAST_LOAD_FAST":
            emit("LOAD_FAST", _local(code, arg >> 4), arg >> 4)
            emit("LOAD_FAST", _local(code, arg & 15), arg & 15)
        elif name == "STORE_FAST_LOAD_FAST":
            emit("STORE_FAST", _local(code, arg >> 4), arg >> 4)
            emit("LOAD_FAST", _local(code, arg & 15), arg & 15)
        elif name == "STORE_FAST_STORE_FAST":
            emit("STORE_FAST", _local(code, arg >> 4), arg >> 4)
            emit("STORE_FAST", _local(code, arg & 15), arg & 15)
        elif name == "LOAD_GLOBAL":
            emit(name, _name(code, arg >> 1), 0, arg & 1)
        elif name == "LOAD_ATTR":
            if PY >= (3, 12):
                emit(name, _name(code, arg >> 1), 0, arg & 1)
            else:
                emit(name, _name(code, arg))
        elif name == "LOAD_METHOD":  # 3.11
            emit("LOAD_ATTR", _name(code, arg), 0, 1)
        elif name in ("LOAD_NAME", "STORE_NAME", "STORE_GLOBAL", "STORE_ATTR", "DELETE_NAME",
                      "DELETE_GLOBAL", "LOAD_FROM_DICT_OR_GLOBALS", "IMPORT_NAME", "IMPORT_FROM"):
            emit(name, _name(code, arg))
        elif name == "LOAD_CONST":
            emit(name, "", arg)
        elif name == "COMPARE_OP":
            if PY >= (3, 13):
                emit(name, _CMP_OPS[arg >> 5], 0, 2 if arg & 16 else 0)
            elif PY >= (3, 12):
                emit(name, _CMP_OPS[arg >> 4])
            else:
                emit(name, _CMP_OPS[arg])
        elif name == "BINARY_OP":
            emit(name, _NB_OPS[arg][1], arg)
        elif name == "CALL_INTRINSIC_1":
            emit(name, _INTRINSIC1[arg] if _INTRINSIC1 else str(arg), arg)
        elif name in ("PRECALL", "NOP", "RESUME", "CACHE", "EXTENDED_ARG"):
            # No effect on values (PRECALL: 3.11's half of a call); kept because its
            # offset can be a jump target or where a loop ends.
            emit("NOP")
        else:
            emit(name, "", arg if arg is not None else 0)
    return out


def normalize_consts(consts):
    """Constants as (kind, value) pairs the lifter understands: kind is one of
    'none', 'bool', 'int', 'float', 'complex', 'char' (a str of one character; value: its code
    point), 'tuple' or 'frozenset' (of numbers; value: list of
    pairs), 'names' (a tuple
    of strings: a call's keyword names), or 'other' (value: what the nest does with it, for
    the report)."""
    def one(c):
        t = type(c)
        if c is None:
            return ("none", 0)
        if t is bool:
            return ("bool", int(c))
        if t is int:
            return ("int", c) if -(1 << 63) <= c < (1 << 63) else ("other", "uses an int constant beyond 64 bits")
        if t is float:
            return ("float", c)
        if t is complex:
            return ("complex", c)
        if t is str and len(c) == 1:
            return ("char", ord(c))  # compared with a str's characters (`s[i] == 'G'`)
        if t is str and 2 <= len(c) <= 64:
            try:  # `float("inf")`: the value CPython's float() reads from it
                return ("strfloat", ([("char", ord(x)) for x in c], float(c)))
            except ValueError:
                pass
            return ("strchars", [("char", ord(x)) for x in c])  # `s[i] in "aeiou"` only
        if t is tuple and c and all(type(x) is str for x in c):
            return ("names", list(c))  # a call's keyword names (KW_NAMES, CALL_KW)
        if t is tuple:
            return ("tuple", [one(x) for x in c])
        if t is frozenset and c and all(type(x) in (bool, int, float, complex) or (type(x) is str and len(x) == 1)
                                        for x in c):
            # `x in {1, 2, 3}`, `c in ('a', 'e')`: its items (in no order the nest may depend on).
            return ("frozenset", [one(x) for x in c])
        return ("other", _unhandled_constant(c))
    return [one(c) for c in consts]


_COMPREHENSIONS = {"<listcomp>": "a list", "<setcomp>": "a set", "<dictcomp>": "a dict"}


def _unhandled_constant(c):
    """What a nest does with a constant of a type the lifter does not handle."""
    if isinstance(c, CodeType):
        if c.co_name in _COMPREHENSIONS:
            return f"builds {_COMPREHENSIONS[c.co_name]} with a comprehension (a function of its own before Python 3.12)"
        if c.co_name == "<genexpr>":
            return "uses a generator expression stagepy cannot read (nested too deep, or a form it does not lift)"
        if c.co_name == "<lambda>":
            return "defines a lambda"
        return "defines a function"
    return f"uses a {type(c).__name__} constant"


# ---------------------------------------------------------------- candidate loops

class Loop:
    """A loop statement. For a `for` loop: entry is the index of the first instruction of its
    iterable's expression, header the index of FOR_ITER. For a `while` loop (is_while):
    entry is the first instruction of the statement (its first test of the condition, or
    the NOP of `while True:`), header == entry. exit: index of the first instruction after
    the loop; depth: values on the stack below the statement; over_range: whether the
    iterable is a call of a name `range`."""
    __slots__ = ("entry", "get_iter", "header", "exit", "depth", "over_range", "is_while", "outermost")

    def __init__(self, entry, get_iter, header, exit, depth, over_range, is_while=False):
        self.entry, self.get_iter, self.header, self.exit, self.depth = entry, get_iter, header, exit, depth
        self.over_range = over_range
        self.is_while = is_while
        self.outermost = True  # inside no other candidate loop of the code (set by candidate_loops)


def loop_exit(instrs, header):
    """Index of the first instruction after the for loop whose FOR_ITER is at `header`."""
    k = instrs[header].target
    if instrs[k].name == "END_FOR":
        k += 1
        if PY >= (3, 13) and k < len(instrs) and instrs[k].name == "POP_TOP":
            k += 1
    return k


def candidate_loops(code, instrs):
    """Every for loop and every while loop (which of them get a runtime call is the
    rewriter's choice), in code order."""
    loops = []
    for h, ins in enumerate(instrs):
        if ins.name != "FOR_ITER" or ins.depth is None or h < 2:
            continue
        g = h - 1
        if instrs[g].name != "GET_ITER":
            continue
        d = instrs[g].depth - 1  # values below the iterable
        entry = _expression_start(instrs, g - 1, d)
        if entry is None:
            continue
        names = [instrs[j] for j in range(entry, min(entry + 2, g))]
        over_range = instrs[g - 1].name == "CALL" and any(
            n.name in ("LOAD_GLOBAL", "LOAD_NAME") and _callee_name(code, n) == "range" for n in names)
        loops.append(Loop(entry, g, h, loop_exit(instrs, h), d, over_range))
    taken = {lp.entry for lp in loops}
    for w in while_loops(instrs):
        if w.entry not in taken:
            loops.append(w)
    loops.sort(key=lambda lp: lp.entry)
    for lp in loops:
        lp.outermost = not any(o is not lp and o.entry <= lp.entry and lp.exit <= o.exit for o in loops)
    return loops


_COND_JUMPS = {op for op in range(256) if OPNAME[op].startswith("POP_JUMP_")}
_WHILE_BACK_EDGES = {op for op in _COND_JUMPS if "BACKWARD" in OPNAME[op]} | {OPMAP["JUMP_BACKWARD"]}


def while_loops(instrs):
    """The while statements, from their back edges (backward jumps to anything but a
    FOR_ITER). CPython 3.11-3.13 compile `while c: body` as a first test of c that jumps
    to the exit, the body, and a copy of the test that jumps back to the body; `continue`
    jumps to the first test; `while True:` is a NOP on the while line, then the body. The
    statement starts at its first test: the instructions just before the body whose source
    positions the copy (or the NOP, the back edge) also has. A loop whose shape is
    anything else is not a candidate (it runs in CPython, unreported)."""
    spans = []
    for j, ins in enumerate(instrs):
        if ins.op in _WHILE_BACK_EDGES and ins.target is not None and ins.target <= j \
                and instrs[ins.target].name != "FOR_ITER":
            spans.append([ins.target, j])
    # One statement's back edges (the test's, `continue`'s) overlap or share a start
    # without nesting; an inner loop's nest inside.
    spans.sort()
    merged = []
    for s, e in spans:
        outer = next((m for m in reversed(merged) if m[0] <= s <= m[1]), None)
        if outer is not None and (s == outer[0] or e > outer[1]):
            outer[1] = max(outer[1], e)
        else:
            merged.append([s, e])
    out = []
    for first, e in merged:
        back = instrs[e]
        body = back.target
        if body < 1:
            continue
        # Nothing after the loop (e + 1 == len(instrs)): it only ends by a return or raise
        # (`while True:` without a break; 3.12+ copy a short `return x` after a loop into
        # its `break`s).
        seen = {instrs[k].positions for k in range(body, e + 1)}
        entry = body
        while entry > 0 and instrs[entry - 1].positions in seen and instrs[entry - 1].name != "FOR_ITER":
            entry -= 1
        if entry == body:
            continue
        test_end = instrs[body - 1]
        if not (test_end.name == "NOP" or (test_end.op in _COND_JUMPS and _same_code(instrs, test_end.target, e + 1))):
            continue
        if entry > first or instrs[entry].depth is None or instrs[entry].depth != instrs[body].depth:
            continue
        out.append(Loop(entry, None, entry, e + 1, instrs[entry].depth, False, is_while=True))
    return out


def _same_code(instrs, i, j):
    """Whether the code from i is the code from j: the same instruction, or an exact copy of
    the straight-line code there up to a return (CPython copies a short `return x` after a
    loop to the places that jump to it)."""
    if i == j:
        return True
    for _ in range(64):
        if i >= len(instrs) or j >= len(instrs):
            return False
        a, b = instrs[i], instrs[j]
        if a.op != b.op or a.arg != b.arg or a.target is not None or b.target is not None:
            return False
        if a.name in ("RETURN_VALUE", "RETURN_CONST"):
            return True
        i, j = i + 1, j + 1
    return False


def _expression_start(instrs, last, d):
    """The first instruction of the expression ending at `last` that leaves one value above
    depth `d`, or None."""
    for j in range(last, -1, -1):
        dj = instrs[j].depth
        if dj is None or dj < d:
            return None
        if dj == d:
            return j
    return None


def _callee_name(code, ins):
    if ins.name == "LOAD_GLOBAL":
        return code.co_names[ins.arg >> 1]
    return code.co_names[ins.arg]


# ---------------------------------------------------------------- assembly

def _varint(n, out):
    """Little-endian 6-bit groups (the location table's varint)."""
    while n >= 64:
        out.append((n & 63) | 64)
        n >>= 6
    out.append(n)


def _exc_varint(n, out, msb=0):
    """Big-endian 6-bit groups, 0x40 = more follow (the exception table's varint);
    `msb` (0x80) marks the first byte of an entry."""
    groups = [n & 63]
    n >>= 6
    while n:
        groups.append(n & 63)
        n >>= 6
    for k, g in enumerate(reversed(groups)):
        out.append(g | (64 if k < len(groups) - 1 else 0) | (msb if k == 0 else 0))


def _encode_exception_table(entries):
    """entries: (start_unit, end_unit, target_unit, depth, lasti)."""
    out = bytearray()
    for start, end, target, depth, lasti in entries:
        _exc_varint(start, out, 128)
        _exc_varint(end - start, out)
        _exc_varint(target, out)
        _exc_varint((depth << 1) | int(lasti), out)
    return bytes(out)


def _svarint(n, out):
    _varint((-n << 1) | 1 if n < 0 else n << 1, out)


def _encode_locations(units, firstlineno):
    """units: one positions tuple (lineno, end_lineno, col, end_col) or None per code unit."""
    out = bytearray()
    line = firstlineno
    i = 0
    while i < len(units):
        pos = units[i]
        n = 1
        while i + n < len(units) and n < 8 and units[i + n] == pos:
            n += 1
        if pos is None or pos[0] is None:
            out.append(0x80 | (15 << 3) | (n - 1))
        else:
            lineno, end_lineno, col, end_col = pos
            if col is None or end_col is None or end_lineno is None:
                out.append(0x80 | (13 << 3) | (n - 1))
                _svarint(lineno - line, out)
            else:
                out.append(0x80 | (14 << 3) | (n - 1))
                _svarint(lineno - line, out)
                _varint(end_lineno - lineno, out)
                _varint(col + 1, out)
                _varint(end_col + 1, out)
            line = lineno
        i += n
    return bytes(out)


def _arg_units(arg):
    n = 1
    while arg > 0xFF:
        arg >>= 8
        n += 1
    return n


def assemble(code, instrs, exc_entries, consts=None, stacksize=None):
    """Build a code object from `instrs` (Ins with .target = index into instrs for jumps).

    exc_entries: (first_index, last_index_exclusive, target_index, depth, lasti) in
    instruction indices. Offsets, jump arguments and EXTENDED_ARG prefixes are
    recomputed until stable."""
    n = len(instrs)
    for k, ins in enumerate(instrs):
        base = 1 + CACHES[ins.op]
        ins.size = 2 * (base + (_arg_units(ins.arg) - 1 if ins.arg is not None else 0))
    while True:
        offsets, off = [], 0
        for ins in instrs:
            offsets.append(off)
            off += ins.size
        changed = False
        for k, ins in enumerate(instrs):
            if ins.target is None:
                continue
            after = offsets[k] + ins.size
            t = offsets[ins.target]
            if ins.op in HASJABS:
                arg = t // 2
            elif ins.op in _BACKWARD:
                arg = (after - t) // 2
            else:
                arg = (t - after) // 2
            if arg < 0:
                raise ValueError(f"jump {ins.name} at {k} goes the wrong way")
            ins.arg = arg
            size = 2 * (1 + CACHES[ins.op] + _arg_units(arg) - 1)
            if size != ins.size:
                ins.size = size
                changed = True
        if not changed:
            break
    raw = bytearray()
    units = []
    for ins in instrs:
        arg = ins.arg if ins.arg is not None else 0
        nunits = _arg_units(arg) if ins.arg is not None else 1
        for s in range(nunits - 1, 0, -1):
            raw += bytes((EXTENDED_ARG, (arg >> (8 * s)) & 0xFF))
            units.append(ins.positions)
        raw += bytes((ins.op, arg & 0xFF))
        units.append(ins.positions)
        for _ in range(CACHES[ins.op]):
            raw += bytes((CACHE, 0))
            units.append(ins.positions)
    total = len(raw)
    exc = []
    for first, last, target, depth, lasti in exc_entries:
        start = offsets[first] // 2
        end = (offsets[last] if last < n else total) // 2
        if end > start:
            exc.append((start, end, offsets[target] // 2, depth, lasti))
    locs = _encode_locations(
        units,
        code.co_firstlineno)
    kw = dict(co_code=bytes(raw), co_exceptiontable=_encode_exception_table(exc), co_linetable=locs)
    if consts is not None:
        kw["co_consts"] = tuple(consts)
    if stacksize is not None:
        kw["co_stacksize"] = stacksize
    return code.replace(**kw)


def exception_entries_by_index(code, instrs):
    """The code's exception table in instruction indices (see assemble)."""
    index = {ins.offset: k for k, ins in enumerate(instrs)}
    ends = {ins.offset + ins.size: k + 1 for k, ins in enumerate(instrs)}
    return [(index[s], ends[e], index[t], d, l) for (s, e, t, d, l) in exception_table(code)]


def roundtrip(code):
    """Decode and re-assemble unchanged (used by tests to check the assembler)."""
    instrs = decode(code)
    return assemble(code, instrs, exception_entries_by_index(code, instrs))


def make(name, arg=None, positions=None, target=None):
    return Ins(OPMAP[name], arg, positions=positions, target=target)


def instruction_units(ins):
    return ins.size // 2
