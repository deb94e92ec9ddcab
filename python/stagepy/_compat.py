"""Other JITs that compile a function from its bytecode (numba) must see the user's code,
not stagepy's rewrite of it (which calls into stagepy's runtime and would fail to type).

In: the replacements the resolver made (remember()). Out: numba's dispatchers, as they
are created, put the original code object back into the function they wrap; the sweep
leaves functions such dispatchers hold alone (foreign_jit_types()). numba may be
imported before or after stagepy: a post-import hook patches it when it loads.
"""
import importlib.abc
import importlib.util
import sys
import threading

# id(replacement) -> (replacement, original). The original holds its replacement too (the
# hook's decision, in co_extra): a cycle the garbage collector cannot see, so _prune()
# drops the pairs nothing else references (by their reference counts), letting both code
# objects, and the nests in the replacement's constants, go.
_originals = {}
_lock = threading.Lock()
_prune_at = 256  # prune when this many pairs are kept (then twice what survived)
_TARGET = "numba.core.dispatcher"
_dispatcher_types = ()


def remember(original, replacement):
    global _prune_at
    with _lock:
        _originals[id(replacement)] = (replacement, original)
        if len(_originals) >= _prune_at:
            _prune()
            _prune_at = max(256, 2 * len(_originals))


def _prune():
    """Drops the pairs whose code objects only this table (and, for the replacement, the
    original's decision) reference: no function, frame or other code object can reach
    them any more. A pair whose replacement is itself a constant of a replacement kept
    here goes once that one went (a later prune)."""
    getrefcount = sys.getrefcount
    for key, pair in list(_originals.items()):
        repl, orig = pair
        # References to `repl`: the pair, the original's decision, `repl`, the argument.
        # To `orig`: the pair, `orig`, the argument.
        if getrefcount(repl) <= 4 and getrefcount(orig) <= 3:
            del _originals[key]
        del repl, orig, pair


def original(code):
    """The user's code object that `code` replaces, or None."""
    hit = _originals.get(id(code))
    return hit[1] if hit is not None and hit[0] is code else None


def restore(func):
    """Point `func` back at its original code if stagepy replaced it."""
    code = getattr(func, "__code__", None)
    orig = original(code) if code is not None else None
    if orig is not None:
        func.__code__ = orig


def foreign_jit_types():
    """The types of objects (numba's dispatchers) whose `py_func` keeps its own code."""
    return _dispatcher_types


# numba's own functions (which it compiles too) are never rewritten.
_FOREIGN_DIRS = ("/numba/", "/llvmlite/")


def foreign_jit_code(code):
    """Whether `code` belongs to a JIT that compiles its own functions from bytecode."""
    fn = code.co_filename
    return any(d in fn for d in _FOREIGN_DIRS) and ("-packages" in fn)


def _patch(module):
    global _dispatcher_types
    base = getattr(module, "_DispatcherBase", None)
    if base is None or getattr(base, "_stagepy_patched", False):
        return
    init = base.__init__

    def __init__(self, arg_count, py_func, *args, **kwargs):
        restore(py_func)
        init(self, arg_count, py_func, *args, **kwargs)

    base.__init__ = __init__
    base._stagepy_patched = True
    _dispatcher_types = (base,)
    # Every other way numba reads a function's bytecode (overloads, inlined closures,
    # internal helpers) goes through FunctionIdentity.from_function.
    bytecode = sys.modules.get("numba.core.bytecode")
    ident = getattr(bytecode, "FunctionIdentity", None)
    if ident is not None and "from_function" in ident.__dict__:
        from_function = ident.__dict__["from_function"].__func__

        def patched(cls, pyfunc):
            restore(getattr(pyfunc, "py_func", pyfunc))
            return from_function(cls, pyfunc)

        ident.from_function = classmethod(patched)


class _Loader(importlib.abc.Loader):
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _patch(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


def install():
    """Idempotent. Patches numba now if it is loaded, else when it loads."""
    if _TARGET in sys.modules:
        _patch(sys.modules[_TARGET])
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
