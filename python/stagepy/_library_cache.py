"""The rewriter's results for library code, kept on disk between processes.

In: a code object of a library (the standard library, an installed package) that the
rewriter is about to decode. Out: what an earlier process of this same build made of
exactly this code: nothing to rewrite, or a record from which the rewritten code is rebuilt
without decoding, lifting analysis aside, or reassembling it in Python.

At start-up the sweep hands the rewriter every live function whose code names `range`
(docs/hook.md, "Library code kept on disk"): with NumPy alone about 60 functions and 180 ms of
decoding, lifting and reassembling in Python on the development VM. The results go to
`<cache folder>/library/<python>.marshal` (in the kernel cache's folder; `STAGEPY_CACHE=0`
turns both off): this build of stagepy (the sizes and modification times of its files), the
keys of code with nothing to rewrite, and the records of rewritten code, each keyed by a
SHA-256 of the code object's marshal bytes. Equal bytes are an equal code object (marshal
writes everything the rewriter reads), so a result is reused only for the same code under
the same build; a file of another build is ignored and replaced.

A record (record()) holds the lifter's input (the normalized instructions and constants),
each lifted loop's offsets and the resume points its analysis gave, and the rewritten code's
bytes, line and exception tables, stack size and added constants. rebuild() lifts the loops
again from the recorded input (the Nest objects are the process's own) and uses the record
only where every loop lifts again with the same resume points; otherwise the rewriter runs
as without a cache. Code that cannot be marshalled is not cached.
"""
import atexit
import hashlib
import marshal
import os
import sys

from . import _hook

PLAIN = "plain"  # lookup(): nothing to rewrite
_MAX = 6000  # entries kept; past that, only those this process used (see _save)
_PY = "%d.%d" % sys.version_info[:2]
_state = {"loaded": False, "plain": set(), "records": {}, "dirty": False, "path": None, "build": None,
          "hits": 0, "rebuilt": 0, "used": set()}  # (hits and rebuilt counted for tests)


def cache_dir():
    """The cache folder (the kernel cache's, as the runtime decides it), or None when it is
    off (STAGEPY_CACHE=0)."""
    core = _hook.core()
    return core.cache_dir() if core is not None else None


def build():
    """This build of stagepy: the package's files with their sizes and modification times."""
    here = os.path.dirname(os.path.abspath(__file__))
    parts = [_PY, sys.implementation.cache_tag or "", sys.version]
    for name in sorted(os.listdir(here)):
        if name.endswith((".py", ".so")):
            st = os.stat(os.path.join(here, name))
            parts.append("%s:%d:%d" % (name, st.st_size, st.st_mtime_ns))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _load():
    _state["loaded"] = True
    d = cache_dir()
    if not d:
        return
    try:
        _state["build"] = build()
    except OSError:
        return
    _state["path"] = os.path.join(d, "library", "%s.marshal" % _PY)
    # No file, or not one of this build: started afresh, and replaced at exit.
    data = read(_state["path"], "build", _state["build"])
    if data is not None and type(data.get("plain")) is list and type(data.get("records")) is dict:
        _state["plain"] = set(data["plain"])
        _state["records"] = data["records"]
    atexit.register(_save)


def key(code):
    """The code's key, or None where it is not cached (no cache folder, no marshal)."""
    if not _state["loaded"]:
        _load()
    if _state["path"] is None:
        return None
    try:
        return hashlib.sha256(marshal.dumps(code)).hexdigest()
    except ValueError:
        return None


def lookup(k):
    """PLAIN, a record, or None (not known)."""
    if k is None:
        return None
    if k in _state["plain"]:
        _state["hits"] += 1
        _state["used"].add(k)
        return PLAIN
    rec = _state["records"].get(k)
    if rec is not None:
        _state["hits"] += 1
        _state["used"].add(k)
    return rec


def remember_plain(k):
    if k is not None and k not in _state["plain"]:
        _state["plain"].add(k)
        _state["used"].add(k)
        _state["dirty"] = True


def remember(k, rec):
    if k is not None and rec is not None and k not in _state["records"]:
        _state["records"][k] = rec
        _state["used"].add(k)
        _state["dirty"] = True


def record(code, new, parts, nests, core):
    """The record of `code` rewritten as `new`: `parts` the lifter's input (normalized
    instructions, constants, flag, cell slots), `nests` (entry, header, exit offsets, depth,
    while, Nest) per lifted loop in the order the rewriter made them. None where something
    in it cannot be recorded."""
    added = []
    index = {id(n): k for k, (*_, n) in enumerate(nests)}
    for c in new.co_consts[len(code.co_consts):]:
        if c is core._resume_iters:
            added.append(("resume",))
        elif id(c) in index:
            added.append(("nest", index[id(c)]))
        elif type(c) is int:
            added.append(("int", c))
        elif type(c) is SystemError:
            added.append(("error", str(c)))
        else:
            return None
    loops = tuple((e, h, x, d, w, tuple(tuple(r) for r in n.resumes)) for e, h, x, d, w, n in nests)
    rec = (parts, loops, new.co_code, new.co_linetable, new.co_exceptiontable, new.co_stacksize, tuple(added))
    try:
        marshal.dumps(rec)
    except ValueError:
        return None
    return rec


def _info(core, code, parts, pyver):
    """The lifter's CodeInfo from recorded parts (a generator expression's from its own,
    with the name and line of its code among `code`'s constants)."""
    norm, consts, flag, cells = parts
    consts = list(consts)
    for i, c in enumerate(consts):
        if type(c) is tuple and c and c[0] == "genexpr-parts":
            _, sub, entry, header, exit_off = c
            consts[i] = ("genexpr", (_info(core, code.co_consts[i], sub, pyver), entry, header, exit_off))
    return core.CodeInfo(list(norm), consts, flag, code.co_filename, code.co_qualname, code.co_firstlineno, pyver,
                         cells)


def rebuild(code, rec, core, pyver):
    """The rewritten code from a record, or None where a loop no longer lifts as recorded."""
    parts, loops, co_code, linetable, exctable, stacksize, added = rec
    info = _info(core, code, parts, pyver)
    nests = []
    for entry, header, exit_off, depth, is_while, resumes in loops:
        nest = core.Nest(info, entry, header, exit_off, depth, False, is_while)
        if not nest.ok or tuple(tuple(r) for r in nest.resumes) != resumes:
            return None
        nests.append(nest)
    out = list(code.co_consts)
    for a in added:
        if a[0] == "resume":
            out.append(core._resume_iters)
        elif a[0] == "nest":
            out.append(nests[a[1]])
        elif a[0] == "int":
            out.append(a[1])
        else:
            out.append(SystemError(a[1]))
    new = code.replace(co_code=co_code, co_consts=tuple(out), co_linetable=linetable, co_exceptiontable=exctable,
                       co_stacksize=stacksize)
    for n in nests:
        n.set_owner(new)
    _state["rebuilt"] += 1
    return new


def _save():
    """At exit, where new results came up: the whole cache, written atomically (a process
    reading meanwhile sees the old file or the new one). Past _MAX entries (programs with
    other libraries come and go), only the entries this process used are kept."""
    if not _state["dirty"] or not _state["path"]:
        return
    if len(_state["plain"]) + len(_state["records"]) > _MAX:
        used = _state["used"]
        _state["plain"] = {k for k in _state["plain"] if k in used}
        _state["records"] = {k: r for k, r in _state["records"].items() if k in used}
    write(_state["path"], {"build": _state["build"], "plain": sorted(_state["plain"]), "records": _state["records"]})
    _state["dirty"] = False


def read(path, field, value):
    """The dict marshalled in `path` (write) whose `field` is `value`, or None (no file, a
    damaged one, or one written for something else)."""
    try:
        with open(path, "rb") as f:
            data = marshal.loads(f.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return data if type(data) is dict and data.get(field) == value else None


def write(path, data):
    """`data` marshalled into `path`, atomically (a reader sees the old file or the new one);
    a failure leaves the old file (it is a cache)."""
    tmp = "%s.tmp%d" % (path, os.getpid())
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(marshal.dumps(data))
        os.replace(tmp, path)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
