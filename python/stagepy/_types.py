"""What the runtime must learn from the running Python and NumPy.

In: the builtins, math and (once imported) numpy modules. Out, registered with the
native runtime:
  * the functions stagepy computes itself, by identity (a rebinding of `math.sqrt` or a
    shadowing `range` is then a different object, and the guard sends it to CPython);
  * the result type of every operator and supported NumPy function on every pair of
    scalar types, found by running each once on sample values with the installed NumPy,
    so that promotion follows that NumPy's rules (NEP 50 on NumPy 2).
"""
import builtins
import cmath
import contextlib
import math
import os
import operator
import sys
import warnings

from . import _hook

_SCALARS = ["bool", "int", "float", "numpy.bool", "numpy.int8", "numpy.int16", "numpy.int32",
            "numpy.int64", "numpy.uint8", "numpy.uint16", "numpy.uint32", "numpy.uint64",
            "numpy.float32", "numpy.float64", "numpy.complex64", "numpy.complex128", "complex"]
_BINOPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
           "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "<<": operator.lshift,
           ">>": operator.rshift, "&": operator.and_, "|": operator.or_, "^": operator.xor}
_UNOPS = {"-": operator.neg, "+": operator.pos, "~": operator.invert}
_BUILTINS = ["range", "len", "abs", "min", "max", "int", "float", "bool", "round", "complex", "enumerate", "zip", "reversed",
             "sum", "any", "all", "divmod", "pow", "ord"]
_MATH = ["sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
         "cosh", "tanh", "fabs", "floor", "ceil", "trunc", "atan2", "pow", "hypot", "copysign", "fmod",
         "isnan", "isinf", "isfinite", "expm1", "log1p", "erf", "erfc", "asinh", "acosh", "atanh", "cbrt", "exp2",
         "degrees", "radians", "gcd", "lcm", "isqrt", "factorial", "comb", "perm"]
_CMATH = ["sqrt", "exp", "log", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan",
          "asinh", "acosh", "atanh", "phase", "polar", "rect", "isnan", "isinf", "isfinite"]
_NUMPY1 = ["sqrt", "exp", "log", "sin", "cos", "tan", "abs", "floor", "ceil", "fabs", "tanh", "arctan",
           "log2", "log10", "expm1", "log1p", "sinh", "cosh", "arcsin", "arccos", "isnan", "isinf",
           "isfinite", "sign", "square", "trunc", "rint", "cbrt", "exp2", "arcsinh", "arccosh", "arctanh",
           "deg2rad", "rad2deg", "radians", "degrees"]
_NUMPY2 = ["arctan2", "hypot", "minimum", "maximum", "power", "copysign", "fmin", "fmax"]
# NumPy scalar types a nest may call to convert a value (np.float32(x)).
_NUMPY_TYPES = ["float64", "float32", "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool"]

_done = {"python": False, "numpy": False}


def register_python():
    if _done["python"]:
        return
    core = _hook.core()
    for name in _BUILTINS:
        core.register_callable(getattr(builtins, name), name)
    for name in _MATH:
        core.register_callable(getattr(math, name), "math." + name)
    for name in _CMATH:
        core.register_callable(getattr(cmath, name), "cmath." + name)
    register_random(core)
    register_twins(core)
    _done["python"] = True


# np.random's functions kernels draw: name -> the kind of draw (numpy_random.cpp's kind_of).
_NP_RANDOM = {"rand": "random", "random": "random", "random_sample": "random",
              "uniform": "uniform", "randint": "randint", "randn": "standard_normal",
              "standard_normal": "standard_normal", "normal": "normal", "exponential": "exponential"}


def register_numpy_random():
    """Kernels draw np.random.rand() and the other functions of NumPy's global RandomState
    (_NP_RANDOM) once the core matched its draws on a probe (hook/numpy_random.h). Here: where
    the RandomState keeps its cached normal (found by setting the probe's to a value of its
    own), and the functions. Called by the runtime once numpy.random is imported. Returns why
    not, or None."""
    import ctypes
    import struct
    npr = sys.modules.get("numpy.random")
    if npr is None:
        return "numpy.random is not imported"
    try:
        inst = npr.mtrand._rand
        probe = npr.RandomState(20261130)
        if type(inst) is not npr.RandomState or type(inst._bit_generator).__name__ != "MT19937":
            return "np.random's generator is not a RandomState of MT19937"
        mark = 1.2345678901234567
        state = probe.get_state(legacy=False)
        state["has_gauss"], state["gauss"] = 1, mark
        probe.set_state(state)
        raw = ctypes.string_at(id(probe), type(probe).__basicsize__)
        at = [o for o in range(16, len(raw) - 7, 8)
              if struct.unpack_from("d", raw, o)[0] == mark and struct.unpack_from("i", raw, o - 8)[0] == 1]
        if len(at) != 1:
            return "the RandomState's cached normal was not found"
        functions = [(getattr(npr, name), kind) for name, kind in _NP_RANDOM.items() if hasattr(npr, name)]
        return _hook.core().register_numpy_random(inst, inst._bit_generator.ctypes.state_address, probe,
                                                  probe._bit_generator.ctypes.state_address, at[0], functions)
    except Exception as e:  # a NumPy without these: the nests stay in CPython
        return f"{type(e).__name__}: {e}"


def register_twins(core):
    """C functions nests inline as their Python twins (stagepy._twins): bisect.bisect_right
    (also bisect.bisect) and bisect.bisect_left, where they are _bisect's."""
    import bisect
    import types
    from . import _twins
    for name in ("bisect_right", "bisect_left"):
        f = getattr(bisect, name, None)
        if isinstance(f, types.BuiltinFunctionType) and getattr(f, "__module__", None) == "_bisect":
            core.register_twin(f, getattr(_twins, name))


def register_random(core):
    """Kernels draw from the `random` module's generator (random.random(), uniform(),
    randint(), randrange(), choice(), gauss(), normalvariate(), expovariate()) once the core found
    its words and matched its draws on a probe (hook/random_generator.h); otherwise nests calling
    them stay in CPython. Returns why not, or None."""
    import random
    try:
        return core.register_random(random._inst, random.Random(20261130),
                                    (random.random, random.uniform, random.randint, random.randrange,
                                     random.choice, random.gauss, random.normalvariate,
                                     random.expovariate),
                                    vars(random))
    except Exception as e:  # a CPython without these: the nests stay in CPython
        return f"{type(e).__name__}: {e}"


def _scalar_name(np, value):
    t = type(value)
    name = _names.get(t)
    if name is None:
        name = "?"  # a type stagepy does not compute in (float16, longlong, clongdouble...)
        if t in _PYTHON_NAMES:
            name = _PYTHON_NAMES[t]
        elif issubclass(t, np.generic):
            d = np.dtype(t)
            if "numpy." + d.name in _SCALARS and d.type is t:
                name = "numpy." + d.name
        _names[t] = name
    return name


_PYTHON_NAMES = {bool: "bool", int: "int", float: "float", complex: "complex"}
_names = {}


def _probe(np, fn, *args):
    """The type name of fn(*args), "" where it raises. Run inside _quiet(np)."""
    try:
        r = fn(*args)
    except Exception:
        return ""
    return _scalar_name(np, r)


@contextlib.contextmanager
def _quiet(np):
    """No warnings and no NumPy floating-point errors while the probes run (entered once:
    entering these contexts per probe made probing most of a process's start-up)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def oracle_entries(np):
    """(kind, op, a, b, result) for every operation involving a NumPy scalar."""
    with _quiet(np):
        return _oracle_entries(np)


def cached_oracle_entries(np):
    """oracle_entries(np), kept in the cache folder (`oracle/<python>.marshal`) for this
    build of stagepy and this NumPy (its version, its extension module's file, the
    promotion state): the 6577 probes took about 30 ms of every process's first nest."""
    from . import _library_cache
    d = _library_cache.cache_dir()
    if not d:
        return oracle_entries(np)
    try:
        ext = np._core._multiarray_umath.__file__ if hasattr(np, "_core") else np.core._multiarray_umath.__file__
        st = os.stat(ext)
        state = np._get_promotion_state() if hasattr(np, "_get_promotion_state") else ""
        key = "\n".join([_library_cache.build(), np.__version__, ext, str(st.st_size), str(st.st_mtime_ns),
                         str(state), os.environ.get("NPY_PROMOTION_STATE", "")])
    except (OSError, AttributeError):
        return oracle_entries(np)
    path = os.path.join(d, "oracle", "%d.%d.marshal" % sys.version_info[:2])
    data = _library_cache.read(path, "key", key)
    if data is not None and type(data.get("entries")) is list:
        return [tuple(e) for e in data["entries"]]
    entries = oracle_entries(np)
    _library_cache.write(path, {"key": key, "entries": entries})
    return entries


def _oracle_entries(np):
    samples_a = [True, 3, 2.5, np.bool_(True)] + [np.dtype(n[6:]).type(3) for n in _SCALARS[4:12]] + \
                [np.float32(2.5), np.float64(2.5), np.complex64(2.5 + 1j), np.complex128(2.5 + 1j), 2.5 + 1j]
    samples_b = [True, 2, 1.5, np.bool_(True)] + [np.dtype(n[6:]).type(2) for n in _SCALARS[4:12]] + \
                [np.float32(1.5), np.float64(1.5), np.complex64(1.5 - 2j), np.complex128(1.5 - 2j), 1.5 - 2j]
    n = len(_SCALARS)
    pure = {0, 1, 2, n - 1}  # Python's own scalars: their rules are built in (oracle.cpp)
    cplx = {n - 3, n - 2, n - 1}
    n = len(_SCALARS)
    out = []
    for op, fn in _BINOPS.items():
        for i in range(n):
            for j in range(n):
                if i in pure and j in pure:
                    continue
                out.append(("bin", op, i, j, _probe(np, fn, samples_a[i], samples_b[j])))
    for i in range(3, n - 1):
        for op, fn in _UNOPS.items():
            out.append(("un", op, i, -1, _probe(np, fn, samples_a[i])))
        for name in ("abs", "int", "float", "bool", "round"):
            # int()/float() of a NumPy complex number warn (ComplexWarning) or raise:
            # those stay with CPython.
            r = "" if i in cplx and name in ("int", "float", "round") else \
                _probe(np, getattr(builtins, name), samples_a[i])
            out.append(("call1", name, i, -1, r))
    for i in range(n):
        for j in range(n):
            if i in pure and j in pure:
                continue
            out.append(("cmp", "<", i, j, _probe(np, operator.lt, samples_a[i], samples_b[j])))
    for name in _NUMPY1:
        fn = getattr(np, name)
        for i in range(n):
            out.append(("call1", "numpy." + name, i, -1, _probe(np, fn, samples_a[i])))
    for name in _NUMPY2:
        fn = getattr(np, name)
        for i in range(n):
            for j in range(n):
                out.append(("call2", "numpy." + name, i, j, _probe(np, fn, samples_a[i], samples_b[j])))
    return out


def register_numpy():
    """Called by the runtime the first time it sees NumPy imported."""
    if _done["numpy"]:
        return
    _done["numpy"] = True
    np = sys.modules.get("numpy")
    if np is None:
        return
    core = _hook.core()
    for name in _NUMPY1 + _NUMPY2:
        core.register_callable(getattr(np, name), "numpy." + name)
    for name in _NUMPY_TYPES:
        core.register_callable(np.dtype(name).type, "numpy." + name)
    # Reductions of one-dimensional arrays only (no oracle entries: they take no scalars).
    core.register_callable(np.sum, "numpy.sum")
    core.register_callable(np.mean, "numpy.mean")
    core.register_callable(np.where, "numpy.where")
    core.register_callable(np.clip, "numpy.clip")
    core.register_callable(np.dot, "numpy.dot")
    for name in ("max", "min"):
        core.register_callable(getattr(np, name), "numpy." + name)
        if getattr(np, "a" + name, None) is not getattr(np, name) and hasattr(np, "a" + name):
            core.register_callable(getattr(np, "a" + name), "numpy." + name)
    major = int(np.__version__.split(".")[0])
    entries = cached_oracle_entries(np)
    if major < 2:
        # NumPy 1.x decides the types of mixed Python/NumPy operations by value: a probe
        # says nothing about other values, so leave those operations to CPython.
        pure = {0, 1, 2, len(_SCALARS) - 1}
        entries = [e for e in entries if e[0] in ("un", "call1") or (e[2] not in pure and e[3] not in pure)]
    core.set_oracle_entries(entries, major)


# NumPy computes these with its own implementations (SIMD ones on many CPUs), which can
# differ from libm's in the last bit: kernels call NumPy's own inner loop instead, after
# checking on sample values that the loop found gives exactly what np.<name> gives. The check
# runs the first time a kernel needs the loop (the runtime calls verify_ufunc_loop).
_LOOPED = ["exp", "log", "sin", "cos", "tan", "tanh", "arctan", "log2", "log10", "expm1", "log1p",
           "sinh", "cosh", "arcsin", "arccos", "arctan2", "hypot", "power", "cbrt", "exp2",
           "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "radians", "degrees", "fmin", "fmax"]


def _same_float(a, b):
    """Equal, with the same sign of zero, or both NaN."""
    return (a == b and math.copysign(1, a) == math.copysign(1, b)) or (a != a and b != b)


def _same_floats(xs, ys):
    """Two sequences of floats of one length, pairwise _same_float."""
    return len(xs) == len(ys) and all(_same_float(x, y) for x, y in zip(xs, ys))


def verify_ufunc_loop(qualified, dtype):
    """Registers NumPy's loop of `qualified` ("numpy.exp") for `dtype` ("float64" or
    "float32"; "complex128" or "complex64" for those in _LOOPED_COMPLEX) if it computes
    exactly what the ufunc computes on sample values."""
    name = qualified.removeprefix("numpy.")
    np = sys.modules.get("numpy")
    if np is not None and dtype in ("complex128", "complex64") and name in _LOOPED_COMPLEX:
        return _verify_complex_loop(np, name, qualified, dtype)
    if np is None or name not in _LOOPED or dtype not in ("float64", "float32"):
        return False
    core = _hook.core()
    fn = getattr(np, name)
    nin = fn.nin
    t = np.dtype(dtype).type
    rng = np.random.default_rng(12345)
    base = [0.0, -0.0, 0.5, 1.0, -1.0, 2.0, 1e-300, -1e-300, 1e300, 700.0, -700.0, 3.14159, 1e-8, 0.999999,
            math.inf, -math.inf, math.nan]
    values = base + list(rng.standard_normal(200) * 10) + list(rng.random(100) * 2 - 1)
    if nin == 2:
        values = values + list(rng.random(len(values)) * 5) + base[::-1]
    with np.errstate(all="ignore"):
        values = [float(t(v)) for v in values][: (len(values) // nin) * nin]
    if not core._ufunc_loop(fn, qualified, dtype, "register"):
        return False
    got = core._ufunc_loop(fn, qualified, dtype, "run", values)
    with np.errstate(all="ignore"):
        args = [np.array(values[k::nin], dtype=dtype) for k in range(nin)]
        want = [float(fn(*(t(a[i]) for a in args))) for i in range(len(args[0]))]
    if not _same_floats(got, want):
        core._ufunc_loop(fn, qualified, dtype, "unregister")
        return False
    _verified.append(f"{qualified}[{dtype}]")
    # Arrays: NumPy may run other code for a whole array than for a scalar (SIMD bodies).
    # Where the element-by-element loop gives exactly what the ufunc gives for contiguous
    # and strided arrays too, operations on arrays may use it; kernels hand a statement to
    # CPython where the operand has a negative stride (NumPy 2.4's exp of a reversed
    # float64 array differs from its contiguous one in the last bit for some values).
    with np.errstate(all="ignore"):
        for form in (lambda a: a, lambda a: np.repeat(a, 2)[::2], lambda a: np.repeat(a, 3)[1::3]):
            arrays = [form(a) for a in args]
            have = [float(x) for x in fn(*arrays)]
            if not _same_floats(got, have):
                return True
        if nin == 2:
            # A number beside an array (NumPy's loop then sees a zero stride), either side
            # (for power only as the exponent: np.power(-0.0, a) with 0.5 in `a` gives
            # +0.0, the loop called one element at a time -0.0; type inference refuses a
            # number raised to an array); for power also `a ** c` (ndarray.__pow__ takes
            # other functions for some c).
            a0, a1 = args
            sides = ((lambda x, c: fn(x, t(c)), lambda x, c: (x, c)),) if name == "power" else (
                (lambda x, c: fn(x, t(c)), lambda x, c: (x, c)), (lambda x, c: fn(t(c), x), lambda x, c: (c, x)))
            for c in [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -2.0, 1.5, 0.25, 7.0, 1e-3, math.inf, math.nan, 2.7]:
                for form, pair in sides:
                    want = [float(v) for v in form(a0, c)]
                    flat = [v for x in a0.tolist() for v in pair(float(x), c)]
                    if not _same_floats(core._ufunc_loop(fn, qualified, dtype, "run", [float(t(v)) for v in flat]), want):
                        return True
                if name == "power":
                    # The exponent as a float, and as an int where it is a whole number.
                    for exp in [c] + ([int(c)] if math.isfinite(c) and c == int(c) else []):
                        want = [float(v) for v in a0 ** exp]
                        ran = core._ufunc_loop(fn, qualified, dtype, "run",
                                               [float(t(v)) for x in a0.tolist() for v in (x, float(exp))])
                        if not _same_floats(ran, want):
                            return True
    core._ufunc_loop(fn, qualified, dtype, "arrays")
    _verified.append(f"{qualified}[{dtype}] arrays")
    return True


_verified = []  # NumPy loops kernels call, verified so far (for tests and the curious)

# NumPy functions of one complex number kernels compute with NumPy's loop for the dtype.
_LOOPED_COMPLEX = ["sqrt", "exp", "log", "log10", "log2", "expm1", "log1p", "sin", "cos", "tan", "sinh", "cosh",
                   "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "square"]


def _verify_complex_loop(np, name, qualified, dtype):
    """The loop of np.<name> for a complex dtype, called on one number as kernels call it,
    against the ufunc on the same scalar, part by part (scalars only: kernels do not use it
    for arrays). Results that are not finite go to CPython in kernels: only finite ones
    must match, and each must be the ufunc's."""
    core = _hook.core()
    fn = getattr(np, name)
    t = np.dtype(dtype).type
    parts = [0.0, -0.0, 0.5, 1.0, -1.0, 2.0, -3.5, 1e-300, 1e-8, 0.999999, 20.0, 300.0, -700.0, 1e300, 3.14159]
    rng = np.random.default_rng(4321)
    extra = list(rng.standard_normal(60) * 10.0 ** rng.integers(-3, 4, 60))
    with np.errstate(all="ignore"):
        values = [complex(t(complex(a, b))) for a in parts + extra[:30] for b in parts + extra[30:]]
    if not core._ufunc_loop(fn, qualified, dtype, "register"):
        return False
    got = core._ufunc_loop(fn, qualified, dtype, "run", values)
    with np.errstate(all="ignore"):
        for v, g in zip(values, got):
            w = complex(fn(t(v)))
            if not (_same_float(g.real, w.real) and _same_float(g.imag, w.imag)):
                core._ufunc_loop(fn, qualified, dtype, "unregister")
                return False
    _verified.append(f"{qualified}[{dtype}]")
    return True


def _cfunc_samples():
    """Complex operands for verify_cfunc: every path of each function (zeros of both
    signs, |z| near 1, past log(DBL_MAX / 4), near DBL_MAX, subnormal), integers, and
    seeded random values of many magnitudes."""
    import random
    rng = random.Random(1729)
    parts = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 0.7, 0.71, 0.9, 1.2, 1.73, 1.75, 3.7,
             math.pi, 10.0, 100.0, 700.0, 709.5, 710.5, -711.0, 1e10, 1e-5, 1e-200, 2.2e-308,
             1e-310, 5e-324, 1e200, -1e300, 1.5e308, 12345.678]
    parts += [rng.uniform(-1, 1) * 10.0 ** rng.randint(-8, 8) for _ in range(16)]
    return [complex(a, b) for a in parts for b in parts]


def _cfunc_reference(name):
    if name == "pow":
        return lambda z, w: z ** w
    if name == "log_base":
        return cmath.log
    if name == "rect":
        return lambda z, w: cmath.rect(z.real, z.imag)
    f = getattr(cmath, name)
    return lambda z, w: f(z)


def verify_hypot():
    """Whether the kernels' math.hypot (backends/cpu/vector_norm.h) gives what the running
    CPython's math.hypot gives, bit for bit, on pairs of sample values: every
    magnitude from subnormals to near overflow, zeros of both signs, infinities and NaNs."""
    core = _hook.core()
    if core is None:
        return False
    import random
    r = random.Random(4242)
    specials = [0.0, -0.0, 1.0, -1.0, 3.0, 4.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-310,
                1.7976931348623157e308, -1.7976931348623157e308, 1e308, 8.98846567431158e307,
                math.inf, -math.inf, math.nan, 0.5, 1e-300, 1e300]
    values = specials + [r.uniform(-1, 1) * 10.0 ** r.randint(-320, 308) for _ in range(4000)]
    values += [r.random() for _ in range(500)] + [float(r.randint(-10**6, 10**6)) for _ in range(500)]
    pairs = [(x, y) for x in specials for y in specials]
    pairs += [(r.choice(values), r.choice(values)) for _ in range(20000)]
    for x, y in pairs:
        if not _same_float(core._hypot(x, y), math.hypot(x, y)):
            return False
    _verified.append("math.hypot")
    return True


def verify_cfunc(name):
    """Whether the kernels' `name` ("pow", "sqrt", "log_base"...: complex_functions.h) gives
    what the running CPython gives, bit for bit, wherever it does not hand over to CPython,
    on sample operands (and, for pow and log_base, sample exponents and bases)."""
    core = _hook.core()
    if core is None:
        return False
    ref = _cfunc_reference(name)
    zs = _cfunc_samples()
    if name in ("pow", "log_base"):
        ws = [2, -1, 0, 3, 7, -5, 100, -100, 101, 0.5, -0.5, 2.5, 1e-3, 33.3, 1e3, -7.25,
              0.5j, 1 + 1j, -2 - 0.5j, 1e-300 + 2j, 3e2j, 2.0 + 0j, 1.5 - 1e-9j]
        if name == "log_base":
            ws = [w for w in ws if w != 0] + [math.e, 10, 1.0000001, 0.1 + 0.2j]
        pairs = [(z, complex(w)) for z in zs[::7] for w in ws]
    else:
        pairs = [(z, 0j) for z in zs]
    for z, w in pairs:
        got = core._cfunc(name, z, w)
        if got is None:
            continue
        try:
            want = ref(z, w)
        except (ArithmeticError, ValueError):
            return False
        if not (_same_float(got.real, want.real) and _same_float(got.imag, want.imag)):
            return False
    _verified.append("complex." + name)
    return True


def _pairwise(a, n, off, acc):
    # The pairwise summation kernels run for np.sum (src/backends/cpu/pairwise_sum.h).
    if n < 8:
        res = acc(-0.0)
        for i in range(n):
            res = acc(res + a[off + i])
        return res
    if n <= 128:
        r = [acc(a[off + j]) for j in range(8)]
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] = acc(r[j] + a[off + i + j])
            i += 8
        res = acc(acc(acc(r[0] + r[1]) + acc(r[2] + r[3])) + acc(acc(r[4] + r[5]) + acc(r[6] + r[7])))
        while i < n:
            res = acc(res + a[off + i])
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return acc(_pairwise(a, n2, off, acc) + _pairwise(a, n - n2, off + n2, acc))


def verify_np_dot():
    """Whether np.dot and `@` of two 1-d float64 (float32) arrays give what NumPy's dot
    function for the dtype gives called on the arrays' memory as kernels call it (they
    do in NumPy 2: both end in it for such arrays, with BLAS or without), on sample
    arrays: contiguous, strided, columns, reversed (for `@` only: np.dot copies arrays
    with negative strides first, and kernels leave those to CPython), of lengths around
    BLAS's unrolling, with values of many magnitudes."""
    np = sys.modules.get("numpy")
    core = _hook.core()
    if np is None or core is None:
        return False
    rng = np.random.default_rng(7)
    with np.errstate(all="ignore"):
        for dt in (np.float64, np.float32):
            for n in list(range(0, 34)) + [63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 1031, 4099]:
                m = (rng.standard_normal((n + 2, 3)) * 10.0 ** rng.integers(-3, 4, (n + 2, 3))).astype(dt)
                v = m[:, 0].copy()
                pairs = [(v[:n], v[1:n + 1]), (m[:n, 1], m[2:, 2]), (m[:n, 0], v[:n]), (v[:n][::-1], m[:n, 2])]
                for x, y in pairs:
                    got = core._run_dot(x, y)
                    if got is None or not _same_float(x @ y, dt(got)):
                        return False
                    if x.strides[0] > 0 and y.strides[0] > 0 and not _same_float(np.dot(x, y), dt(got)):
                        return False
    _verified.append("numpy.dot")
    return True


def verify_np_sum():
    """Whether the installed NumPy's np.sum of 1-d float64 and float32 arrays (contiguous,
    strided, computed) is the pairwise summation kernels run, and np.mean that sum divided
    by the count, on sample arrays."""
    np = sys.modules.get("numpy")
    if np is None:
        return False
    rng = np.random.default_rng(2024)
    with np.errstate(all="ignore"):
        for dt in (np.float64, np.float32):
            for n in list(range(0, 40)) + [127, 128, 129, 136, 255, 256, 257, 300, 1000, 1031]:
                a = (rng.standard_normal(2 * n) * 10.0 ** rng.integers(-4, 5, 2 * n)).astype(dt)
                for x in (a[:n], a[::2], a[:n] * dt(1.5)):
                    want = np.sum(x)
                    got = dt(dt(0.0) + _pairwise(x.tolist(), n, 0, dt))
                    if not _same_float(want, got):
                        return False
                    # np.mean: the sum divided by the count as float64, in the array's type.
                    if n and not _same_float(np.mean(x), dt(np.float64(got) / n)):
                        return False
    _verified.append("numpy.sum")
    return True
