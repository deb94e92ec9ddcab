"""Random plain-Python loop nests, inside and just outside the subset stagepy runs natively.

program(draw) returns (source, make_args): a function `f` whose loop nest reads and writes
NumPy arrays, Python lists (of lists, M's rows maybe of different lengths; of floats, some lists also np.float64s;
of ints and floats together) or array.array buffers and scalars of random dtypes, with random range forms (empty, negative steps,
bounds from outer variables, a row's length `len(M[i])`), loops over sequences and slices of them (`enumerate`, `zip`,
`reversed(S)`, `M.flat`, `M.ravel()`, a row `M[i]`, `enumerate(zip(A, B))` unpacked two levels deep), rows of M picked by
an index computed from the data (`q = M[int(abs(A[i])) % (n + 1)]`), M a list of objects whose attributes the loops
read and assign (`M[i].a`, `for r in M: r.b += ...`, a helper reading them `o1(r)`, methods `M[i].ab()`,
`r.bump(x)`, `s = r.take(x)`, `w2(M, x)` calling them on every object), affine and non-affine subscripts (some out of bounds, some
negative), reductions, if/elif/else, bounded while loops (the nest itself may be one), break/continue, for ... else, return/raise inside the loops, appends to a list and lists made in the loops (`L1 = []`, appended to `L0`), lists made, grown and popped (`P.append(x)`, `s = P.pop()`, `P.pop(k)`),
aliased, swapped, read and written in the loops (`P = [x] * (n + 1)`, `Q = P[1:]`, `Q = P`), min/max/abs, math.sqrt/log, float('inf'), np.float32(x) and the other scalar types, mixed
int/float/bool arithmetic, draws from the random module (seeded: random(), randint(), uniform(),
randrange(), choice(), gauss(), normalvariate(), expovariate(), and np.random's rand(), randn(),
randint(), normal(), uniform(), exponential(); the states compared after the nest), helpers reading
globals that module code's nest assigns (module_program), sum/min/max/any/all of generator expressions, stores of elementwise
operations into slices, rows, columns and whole arrays, a complex flavour
(complex scalars, arrays and lists, with the operations complex numbers have), and ending
with `return locals()`.
"""
import array

import os

import numpy as np
from hypothesis import strategies as st

DTYPES = ["float64", "float32", "int64", "int32", "int16", "int8", "uint8", "bool"]
SCALARS = ["s", "t", "u"]
OBJECTS = os.environ.get("STAGEPY_FUZZ_OBJECTS") == "1"
# Helper functions the nests may call (inlined), some reading elements of what they are passed,
# some looping.
HELPERS = """
import cmath
import math
import random
import numpy as np

def h1(x, y):
    if x > y:
        return x - y
    return y * 2

def h2(x):
    t = x + 1
    return t * t if t < 50 else -t

def h3(x, y):
    t = x * y
    return t - x if t != y else t + 1

def h4(x, y, z=2):
    a, b = y, x * z
    return a - b, b, h2(a)

# Globals r1/r2 read: f's parameters of the same names are other variables; where the
# program runs as module code (test_fuzz), the nest's own (one variable for both).
s, t, u = 1, 0.5, 2

def r1(x):
    return x + s

def r2(x):
    w = x * t
    return w - u if w > s else w + u

def o1(r):
    return r.a * 2 - r.c if r.b else r.c

WORD = "abcabd\u00e9ab"
WIDE = "b\U0001F600a\u2603c"

def g1(X, i):
    return X[i] * 2 + X[i - 1]

def g2(X, i, j):
    return X[i][j] - X[j][i]

def g3(X, i, d=1):
    return X[i + d] if i + d < len(X) else h2(X[i])

def l1(X, n):
    s = 0
    for q in range(n):
        s += X[q]
    return s

def l2(X, i, w=2):
    t = 0.5
    for q in range(i, i + w):
        t = t * 0.5 + h1(X[q % len(X)], q)
    return t

def l3(X, t, n=4):
    for q in range(n):
        if X[q] > t:
            return q
        if X[q] == t:
            break
    k = 0
    while k < n:
        if X[k] < -t:
            return -k
        k += 1
    return n * 2

def l4(X, i, w=3):
    for p in range(w):
        for q in range(p, w):
            if X[(i + p + q) % len(X)] > X[i % len(X)]:
                return p * w + q
    return -1

def w1(X, x, n=3):
    # Stores into what it is passed inside its loop: a logged call.
    for q in range(n):
        X[q % len(X)] = X[q % len(X)] * 2 - x
    return n

def w2(M, x):
    # Assigns the attributes of the objects its loop takes (a logged call), and fails
    # part way about one call in three (as Obj.take).
    t = 0
    for o in M:
        o.a -= x
        o.c = o.c * 0.5 + o.a
        t += o.c / (int(o.a) % 3)
    return t
"""
CDTYPES = ["complex128", "complex128", "complex64", "float64", "int64", "float32"]
CSCALARS = [1j, 2 - 1j, np.complex128(0.5 + 1j), 2.5, 3, 0j, np.float64(1.5), complex(-0.0, 0.0),
            np.complex64(0.1 - 1.5j)]
ARRAY_CODES = {"float64": "d", "float32": "f", "int64": "q", "int32": "i", "int16": "h", "int8": "b", "uint8": "B"}


class Obj:
    """M's items in the objects mode (Gen.objs)."""
    def __init__(self, a, b, c):
        self.a = a
        self.b = b
        self.c = c

    def __repr__(self):
        return f"Obj({self.a!r}, {self.b!r}, {self.c!r})"

    # Methods the programs call (`M[i].ab()`, `r.bump(x)`): inlined as their functions, those
    # that assign attributes as statements of their own (a class of another module than the
    # programs': they read no globals).
    def ab(self):
        return self.a * 2 - self.c if self.b else self.c

    def bump(self, x):
        self.a += x
        self.c = self.c * 0.5 + self.a

    def swap(self):
        self.a, self.c = self.c, self.a

    def take(self, x):
        # (Fails about one call in three, after its assignment: ZeroDivisionError, or
        # int() of an infinity or a NaN.)
        self.a -= x
        return self.c / (int(self.a) % 3)


class Gen:
    def __init__(self, draw, n, cplx=False):
        self.draw = draw
        self.n = n
        # The complex flavour: complex values everywhere, and only the operations complex
        # numbers have (order comparisons, //, %, min/max go through abs() or .real).
        self.cplx = cplx
        self.chain = draw(st.booleans())  # M[i][j] (lists and arrays) or M[i, j] (arrays only)
        self.loop_vars = []
        self.item_vars = []  # the items of enclosing loops over sequences (x0, y1...)
        self.row_vars = []   # the rows of M enclosing loops hold (r1...)
        self.lines = []
        self.counter = 0
        self.no_scalars = False  # expressions read no s, t, u (which the body may assign later)
        self.slices = not cplx and draw(st.integers(0, 2)) == 0  # stores into slices and rows
        # Lists P and Q (made before the nest) that the loops make anew (`P = [x] * (n + 1)`,
        # `Q = P[1:]`), alias (`Q = P`), swap, read and write.
        self.made = not cplx and draw(st.integers(0, 2)) == 0
        # M a list of objects (Obj: attributes a, b, c), read and assigned as `M[i].a` and
        # through rows `r.b`; the other uses of M's rows then read A instead.
        # (STAGEPY_FUZZ_OBJECTS=1: in every program that may have it, for runs aimed at it.)
        self.objs = not cplx and not self.slices and (OBJECTS or draw(st.integers(0, 3)) == 0)

    def pick(self, seq):
        return self.draw(st.sampled_from(seq))

    def int_(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def emit(self, indent, text):
        self.lines.append("    " * indent + text)

    # ---------------------------------------------------------------- expressions
    def index(self):
        if not self.loop_vars or self.int_(0, 9) == 0:
            return str(self.int_(-self.n - 1, self.n))
        v = self.pick(self.loop_vars)
        form = self.int_(0, 6)
        if form == 0:
            return v
        if form == 1:
            return f"{v} + {self.int_(-2, 2)}"
        if form == 2:
            return f"-1 - {v}"
        if form == 3 and self.int_(0, 1):  # periodic: in bounds where the divisor fits
            return f"({v} + {self.int_(-2, 2)}) % {self.pick(['n', '(n + 1)', '(n - 1)', 'k', 'len(B)'])}"
        if form == 3:
            return f"({v} * {self.int_(1, 3)}) % n"
        if form == 4:
            return f"n - 1 - {v}"
        if form == 5 and len(self.loop_vars) > 1:
            return f"{self.loop_vars[0]} + {self.loop_vars[-1]}"
        return f"{v} // 2"

    def atom(self):
        choice = self.int_(0, 9)
        if choice <= 1:
            return repr(self.pick([0, 1, 2, 3, -1, 7, 100]))
        if choice == 2 and self.cplx:
            return repr(self.pick([1j, 0.5 - 2j, -1 + 0j, 2.5, 0j, 1e300 + 1e300j, -0.0j]))
        if choice == 2:
            return self.pick([repr(x) for x in (0.5, 1.5, -2.25, 0.0, 3.0, 1e10)] +
                             ["float('inf')", "float('-inf')", "float('1e-3')"])
        if choice == 3 and self.item_vars and self.int_(0, 1):
            return self.pick(self.item_vars)
        if choice == 3 and self.loop_vars:
            return self.pick(self.loop_vars)
        if choice == 4:
            return "k" if self.no_scalars else self.pick(SCALARS)
        if choice in (5, 6):
            return f"A[{self.index()}]"
        if choice == 7:
            return f"B[{self.index()}]"
        if choice == 8 and self.slices and self.int_(0, 2) == 0:
            return self.pick([f"np.sum(A[{self.slice_()}])", f"np.sum(M[{self.index()}])",
                              f"np.sum(M[{self.slice_()}, {self.index()}] * 2)", f"np.max(B[{self.slice_()}])",
                              f"M[{self.index()}, {self.slice_()}].min()", f"(A[{self.slice_()}] > 1).sum()",
                              f"np.mean(M[{self.slice_()}, {self.index()}])", f"B[{self.slice_()}].mean()",
                              # dot products: NumPy's dot function (lengths may differ: ValueError)
                              f"A[{self.slice_()}] @ B[{self.slice_()}]", f"M[{self.index()}] @ M[:, {self.index()}]",
                              f"np.dot(M[{self.slice_()}, {self.index()}], A[{self.slice_()}])"])
        if choice == 8:
            return self.m_item()
        if self.made and self.int_(0, 1):
            return self.pick([f"P[{self.index()}]", f"Q[{self.index()}]", "len(P)", f"P[{self.index()}] * 2"])
        if not self.cplx and self.int_(0, 2) == 0:  # draws from the random module (seeded in f)
            return self.pick(["random.random()", "random.randint(-2, 3)", "random.uniform(-1, k)",
                              "random.randrange(1, 4)", f"random.randrange({self.pick(['n', 'k', '3'])})",
                              "random.choice(A)", "random.choice(B)", "random.gauss()",
                              f"random.gauss({self.pick(['k', '0.5', 'n'])}, {self.pick(['2', '0.25', 'k'])})",
                              "random.normalvariate(sigma=k)", f"random.expovariate({self.pick(['k', '2', '0.5'])})",
                              "np.random.rand()", "np.random.randn()", f"np.random.randint({self.pick(['n', 'k', '3'])})",
                              f"np.random.normal(k, {self.pick(['2', '0.5', 'k'])})", "np.random.uniform(-1, k)",
                              "np.random.exponential(k)"])
        return self.pick(["k", "n", "True", "False"])

    def m_row(self, index):
        """`M[index]` used as a sequence (A where M holds objects)."""
        return "A" if self.objs else f"M[{index}]"

    def m_item(self, target=False):
        if self.objs:
            attr = self.pick(["a", "b", "c"])
            item = self.pick(self.row_vars) if self.row_vars and self.int_(0, 2) == 0 else f"M[{self.index()}]"
            if not target and self.int_(0, 4) == 0:
                # A helper reading the object's attributes, or a method doing so.
                return self.pick([f"o1({item})", f"{item}.ab()"])
            return f"{item}.{attr}"
        if self.row_vars and self.int_(0, 2) == 0:
            return f"{self.pick(self.row_vars)}[{self.index()}]"
        a, b = self.index(), self.index()
        return f"M[{a}][{b}]" if self.chain else f"M[{a}, {b}]"

    def expr(self, depth=0):
        if depth > 2 or self.int_(0, 3) == 0:
            return self.atom()
        form = self.int_(0, 13)
        if form == 13 and depth <= 1:
            return self.generator()
        form = min(form, 12)
        a, b = self.expr(depth + 1), self.expr(depth + 1)
        if self.cplx:
            return self.complex_expr(min(form, 11), a, b, depth)
        if form == 12:
            # math.sqrt / math.log of values the sign analysis proves safe (squares, sums of
            # them, abs, max with 0) or not (prove_domains.h).
            x = self.pick([f"{a} * {a}", f"({a} * {a} + {b} * {b})", f"abs({a})", f"max({a}, 0.0)",
                           f"({a} * {a} - 1)", a, f"(k * k + {a} * {a})"])
            t = self.pick(["float64", "float32", "int64", "int32", "int8", "uint8", "uint16", "uint64", "bool_"])
            return self.pick([f"math.sqrt({x})", f"math.log(1.0 + {x})", f"math.log({x})", f"np.{t}({a})"])
        if form <= 4:
            op = self.pick(["+", "-", "*", "+", "*"])
            return f"({a} {op} {b})"
        if form == 5:
            return f"({a} // {self.pick(['2', '3', 'k', '(n - 3)'])})"
        if form == 6:
            return f"({a} % {self.pick(['2', '5', 'k'])})"
        if form == 7:
            return f"({a} / {self.pick(['2.0', '4', 'k', '(n - 3)'])})"
        if form == 8:
            return f"{self.pick(['min', 'max'])}({a}, {b})"
        if form == 9:
            return f"abs({a})"
        if form == 10:
            return f"({a} if {self.cond(depth + 1)} else {b})"
        if form == 11 and self.int_(0, 1):
            return self.pick([f"h1({a}, {b})", f"h2({a})", f"r1({a})", f"r2({a})"])
        if form == 11 and self.int_(0, 1):
            # Helpers that read elements of what they are passed (inlined; the analysis
            # runs again on the nest with them inlined).
            return self.pick([f"g1({self.pick(['A', 'B'])}, {self.index()})", f"g2({'[A, B]' if self.objs else 'M'}, {self.index()}, {self.index()})",
                              f"g3({self.pick(['A', 'B'])}, {self.index()})", f"g3(A, {self.index()}, {self.index()})",
                              # helpers that loop (inlined as statements before the call's)
                              f"l1({self.pick(['A', 'B'])}, {self.index()})", f"l1({self.m_row(self.index())}, k)",
                              f"l2({self.pick(['A', 'B'])}, {self.index()})",
                              # helpers that loop and return from several places
                              f"l3({self.pick(['A', 'B'])}, {a})", f"l3({self.m_row(self.index())}, {a}, k)",
                              f"l4({self.pick(['A', 'B'])}, {self.index()})"])
        return f"({a} ** {self.pick(['2', '0', '3'])})"

    def generator(self):
        # sum/min/max/any/all of a generator expression over a range or a sequence, maybe
        # filtered, reading the enclosing loops' variables (lifted into the nest, lift.cpp).
        g = f"g{self.counter}"
        self.counter += 1
        it = self.pick([self.range_(), self.range_(), "A", "B"])
        self.loop_vars.append(g)
        body = self.expr(2)
        filt = f" if {self.cond(2)}" if self.int_(0, 2) == 0 else ""
        self.loop_vars.pop()
        red = self.pick(["sum", "any", "all"] if self.cplx else ["sum", "sum", "min", "max", "any", "all"])
        start = f", {self.pick(['0.5', '1', 'k'])}" if red == "sum" and self.int_(0, 3) == 0 else ""
        if self.int_(0, 3) == 0:  # of a sequence itself: a list or array, or a row of M
            return f"{red}({self.pick(['A', 'B', self.m_row(self.index())])}{start})"
        return f"{red}(({body} for {g} in {it}{filt}){start})"

    def complex_expr(self, form, a, b, depth):
        if form <= 4:
            return f"({a} {self.pick(['+', '-', '*', '+', '*'])} {b})"
        if form == 5:
            return f"({a}).{self.pick(['real', 'imag'])}"
        if form == 6:
            return f"({a}).conjugate()"
        if form == 7:
            return f"({a} / {self.pick(['2.0', '4', 'k', '(n - 3)', '1j', b])})"
        if form == 8:
            return f"{self.pick(['min', 'max'])}(abs({a}), ({b}).real)"
        if form == 9:
            return self.pick([f"abs({a})", f"complex(({a}).real, ({b}).real)", f"(-{a})"])
        if form == 10:
            return f"({a} if {self.cond(depth + 1)} else {b})"
        if form == 11 and self.int_(0, 1):
            return f"h3({a}, {b})"
        if self.int_(0, 2) == 0:  # cmath (of a NumPy complex too: it converts), a Python complex
            f = self.pick(["sqrt", "exp", "log", "sin", "cos", "tanh", "log10"])
            return self.pick([f"cmath.{f}(complex({a}))", f"cmath.{f}({a} * 0.125)", f"cmath.phase({a})",
                              f"np.{self.pick(['exp', 'sqrt', 'log', 'sin', 'tanh', 'square'])}({a})",
                              f"cmath.rect(abs({a}), 0.5)", f"(complex({a}) ** {self.pick(['0.5', 'k', '1.5j', '(-0.25)'])})"])
        return f"({a} ** {self.pick(['2', '0', '3', '-1', '-2', '5'])})"

    def cond(self, depth=0):
        a, b = self.expr(depth + 1), self.expr(depth + 1)
        op = self.pick(["<", "<=", ">", ">=", "==", "!="])
        if self.cplx and self.int_(0, 3) == 0:  # |z| against a number (codegen's hypot_compare)
            a, b = f"abs({a})", self.pick(["2.0", "2", "0.5", "3.25", "1e-30", "1e120"])
            if self.int_(0, 1):
                a, b = b, a
        elif self.cplx and op not in ("==", "!="):
            a, b = f"abs({a})", f"({b}).real"
        elif self.cplx and self.int_(0, 3) == 0:
            a = f"bool({a})"
        c = f"{a} {op} {b}"
        if self.int_(0, 9) == 0:
            # Characters of a str (code points of 1, 2 or 4 bytes; indices may be out of range).
            w = self.pick(["WORD", "WIDE"])
            c = self.pick([f"{w}[{self.index()}] {op} {w}[{self.index()}]", f"{w}[{self.index()}] == 'b'",
                           f"{w}[{self.index()}] in 'a\u00e9c'", f"ord({w}[{self.index()}]) > {a}"])
        if not self.cplx and self.int_(0, 11) == 0:
            # Membership in a sequence the nest reads (a scan; a NaN looked up goes to CPython).
            c = f"{a} {self.pick(['in', 'not in'])} {self.pick(['A', 'B', self.m_row(self.index())])}"
        if depth < 2 and self.int_(0, 4) == 0:
            c = f"({c}) {self.pick(['and', 'or'])} ({self.cond(depth + 1)})"
        if self.int_(0, 6) == 0:
            c = f"not ({c})"
        return c

    def range_(self):
        form = self.int_(0, 7)
        outer = self.loop_vars[-1] if self.loop_vars else None
        if form == 7:
            # Counting down through reversed().
            inner = self.pick(["n", f"{self.int_(-2, 3)}, n - {self.int_(0, 2)}"] + ([f"{outer}", f"{outer}, n"] if outer else []))
            return f"reversed(range({inner}))"
        if form == 0:
            return "range(n)"
        if form == 1:
            return f"range({self.int_(-2, 3)}, n - {self.int_(0, 2)})"
        if form == 2:
            return f"range(n - 1, {self.int_(-2, 1)}, -{self.int_(1, 2)})"
        if form == 3 and outer:
            return f"range({outer})"
        if form == 4 and outer:
            return f"range({outer}, n, {self.int_(1, 3)})"
        if form == 5:
            return f"range({self.int_(0, 3)})"
        if form == 6 and outer and self.int_(0, 1):
            # Over a row's length (M's rows may differ in length: a ragged list).
            return f"range({self.pick(['', '1, '])}len({self.m_row(outer)}){self.pick(['', ' - 1'])})"
        return f"range(0, n, {self.int_(1, 3)})"

    def header(self, indent, v):
        """A for statement with loop variable `v`: over range(), or over the sequences A
        and B (the names of their items are returned; `v` is then enumerate's index, or
        the number of items so far)."""
        form = self.int_(0, 8)
        d = len(self.loop_vars)
        x, y = f"x{d}", f"y{d}"
        seq = self.seq_(self.pick(["A", "B"]))
        if form == 3 and not self.cplx:
            # The rows of M in a variable (reads and writes through it, taken each iteration
            # or by index).
            r = f"r{d}"
            if self.int_(0, 1):
                self.emit(indent, f"{v} = -1")
                self.emit(indent, f"for {r} in M:")
                self.emit(indent + 1, f"{v} += 1")
            else:
                self.emit(indent, f"for {v} in {self.range_()}:")
                self.emit(indent + 1, f"{r} = M[{self.index()}]")
            self.row_vars.append(r)
            return []
        if form == 0:
            self.emit(indent, f"for {v}, {x} in enumerate({seq}{self.pick(['', ', 1', ', -2'])}):")
            return [x]
        if form in (1, 2):
            # v counts the items (a loop variable the body can index with).
            self.emit(indent, f"{v} = -1")
            self.emit(indent, f"for {x}, {y} in zip({self.seq_('A')}, {self.seq_('B')}):" if form == 1 else f"for {x} in {seq}:")
            self.emit(indent + 1, f"{v} += 1")
            return [x, y] if form == 1 else [x]
        if form == 5 and self.int_(0, 1):
            # Counting down a sequence (a list's items as they are then: no copy).
            self.emit(indent, f"{v} = -1")
            self.emit(indent, f"for {x} in reversed({seq}):")
            self.emit(indent + 1, f"{v} += 1")
            return [x]
        if form == 6 and self.int_(0, 1):
            # The index and the items of two sequences, unpacked two levels deep.
            self.emit(indent, f"for {v}, ({x}, {y}) in enumerate(zip({self.seq_('A')}, {self.seq_('B')})"
                              f"{self.pick(['', ', 1', ', -2'])}):")
            return [x, y]
        if form == 4:
            # A tuple constant (a neighbourhood's offsets), or one unpacked with weights.
            ks = [self.int_(-2, 3) for _ in range(self.int_(1, 4))]
            if self.int_(0, 1):
                self.emit(indent, f"for {v} in ({', '.join(map(str, ks))},):")
                return []
            ws = [self.pick(["0.5", "-1.25", "2.0", "-0.0", "3.0"]) for _ in ks]
            self.emit(indent, f"for {v}, {x} in ({', '.join(f'({a}, {w})' for a, w in zip(ks, ws))},):")
            return [x]
        self.emit(indent, f"for {v} in {self.range_()}:")
        return []

    def seq_(self, name):
        """A sequence to loop over: the variable itself, mostly, or a slice of it (a view
        of an array, a copy of a list) with bounds from numbers, parameters and the
        enclosing loops' variables."""
        if self.int_(0, 2):
            return name
        outer = self.loop_vars[-1] if self.loop_vars else "k"
        if self.int_(0, 4) == 0:
            # Every item in C order (a list has no ravel(): AttributeError, in CPython), or a
            # row of M (out of range: IndexError).
            if self.objs:
                return f"{name}.ravel()"
            return self.pick(["M.flat", "M.ravel()", f"{name}.ravel()", f"M[{outer}]", "M[n - 1]", f"M[{outer} - 1]"])
        return name + self.pick(["[1:]", "[:-1]", "[::2]", "[::-1]", "[k:]", "[:n]", f"[{outer}:]",
                                 f"[{outer} + 1:n]", "[-3:]", "[1::3]"])

    # ---------------------------------------------------------------- statements
    def accumulator(self, indent):
        # An accumulator around an inner loop, used after it (a gemm's `acc`, a row's dot
        # product): the iterations of the enclosing loop may run interleaved.
        a = f"a{self.counter}"
        self.counter += 1
        v = f"v{len(self.loop_vars)}"
        outer = self.loop_vars[-1] if self.loop_vars else None
        if self.no_scalars and outer:
            # Lanes side by side: a range the same for every iteration, an element of the
            # enclosing loop's own.
            init, rng = self.pick(['0.0', '0.0', '0']), "range(n)"
            term = f"({self.expr()}) * {self.pick(['A', 'B'])}[{outer}]"
        else:
            init, rng, term = self.pick(['0.0', '0', self.expr()]), self.range_(), None
        if outer and self.int_(0, 2) == 0:
            # The accumulator is the enclosing loop's own element, updated in place (2mm's
            # `C[i, j] = 0.0; for k: C[i, j] += ...`), set or scaled first or neither.
            a = f"{self.pick(['A', 'B'])}[{outer}]"
            first = self.int_(0, 2)
            if first < 2:
                self.emit(indent, f"{a} {'=' if first == 0 else '*='} {init}")
            self.emit(indent, f"for {v} in {rng}:")
            self.loop_vars.append(v)
            self.emit(indent + 1, f"{a} {self.pick(['+=', '+=', '-='])} {term or self.expr()}")
            self.loop_vars.pop()
            if self.int_(0, 1):
                self.emit(indent, f"{self.pick(SCALARS)} = {a} + {self.expr()}")
            return
        self.emit(indent, f"{a} = {init}")
        self.emit(indent, f"for {v} in {rng}:")
        self.loop_vars.append(v)
        if self.int_(0, 3) == 0:
            self.emit(indent + 1, f"if {self.cond()}:")
            self.emit(indent + 2, "continue")
        if self.int_(0, 5) == 0:
            # A recurrence that does not keep an infinity (1 / inf is 0): its NumPy warnings
            # cannot all be tested once after the loop (codegen's sticky_updates).
            self.emit(indent + 1, f"{a} = {term or self.expr()} / ({a} + {self.pick(['1.5', '0.5', '2'])})")
        else:
            self.emit(indent + 1, f"{a} {self.pick(['+=', '+=', '-=', '*='])} {term or self.expr()}")
        self.loop_vars.pop()
        if self.int_(0, 1):
            self.emit(indent, f"{self.pick(['A', 'B'])}[{self.index()}] = {a}")
        else:
            self.emit(indent, f"{self.pick(SCALARS)} = {a} + {self.expr()}")

    def stmts(self, indent, depth, count=None):
        count = count if count is not None else self.int_(1, 3)
        for _ in range(count):
            self.stmt(indent, depth)

    # ---------------------------------------------------------------- slices
    def slice_(self):
        def bound():
            if self.loop_vars and self.int_(0, 2) == 0:
                return f"{self.pick(self.loop_vars)}{self.pick(['', ' + 1', ' - 2'])}"
            return str(self.int_(-self.n - 3, self.n + 3))
        form = self.int_(0, 6)
        step = self.pick(["", ":2", ":-1", ":-2", ":3", ":1", ":k"]) if form >= 5 else ""
        if form <= 1:
            return ":" + step
        if form == 2:
            return f"{bound()}:" + step
        if form == 3:
            return f":{bound()}" + step
        return f"{bound()}:{bound()}" + step

    def section_value(self, operands, depth=0):
        if depth > 1 or self.int_(0, 2) == 0:
            if self.int_(0, 3) == 0:
                return self.atom()
            return self.pick(operands)
        a = self.section_value(operands, depth + 1)
        form = self.int_(0, 9)
        if form <= 4:
            b = self.section_value(operands, depth + 1)
            return f"({a} {self.pick(['+', '-', '*', '/', '//', '%', '*', '+'])} {b})"
        if form == 5:
            return f"np.maximum({a}, {self.section_value(operands, depth + 1)})"
        if form == 6:
            return self.pick([f"np.sqrt(np.abs({a}))", f"np.exp({a})", f"np.sin({a})", f"np.log1p(np.abs({a}))",
                              f"np.abs({a}) ** 1.5", f"{a} ** 3", f"np.arctan2({a}, 2.0)",
                              f"np.hypot({a}, {self.section_value(operands, depth + 1)})"])
        if form == 7:
            b = self.section_value(operands, depth + 1)
            return self.pick([f"abs({a})", f"np.where({a} > 1, {a}, {b})", f"np.clip({a}, -1, {b})",
                              f"np.clip({a}, {self.atom()}, 2.5)"])
        if form == 8:
            return f"({a} > {self.section_value(operands, depth + 1)})"
        return f"-{a}"

    def section_stmt(self, indent):
        """A store into a slice or row: 1-d slices of A and B (same length), rows and
        columns of M, the whole of A (in place), values that broadcast or not."""
        form = self.int_(0, 6)
        if form == 5:
            # A view of A stored into another view of A, shifted or strided (same length
            # mostly): NumPy's in-place 1-d assignment goes forward or backward by where
            # the views start, a copy first where their strides have opposite signs.
            length = self.int_(1, max(1, self.n // 3))
            views = [f"A[{self.int_(0, self.n // 2)}::{self.pick(['1', '2', '-1', '-2', '3'])}][:{length}]",
                     f"A[{self.int_(-self.n, self.n)}:][:{length}]", f"A[::-1][:{length}]"]
            target, value = self.pick(views), self.pick(views)
            self.emit(indent, f"{target} {self.pick(['=', '=', '+='])} {value}")
            return
        if form <= 1:
            sl = self.slice_()
            target = f"{self.pick(['A', 'B'])}[{sl}]"
            operands = [f"A[{sl}]", f"B[{sl}]", target]
            if self.int_(0, 3) == 0:
                operands.append(f"M[{self.index()}]")  # n + 1 elements: matches A[1:]
        elif form == 2:
            sl = self.slice_()
            i = self.index()
            target = f"M[{i}][{sl}]" if self.chain else f"M[{i}, {sl}]"
            operands = [f"M[{self.index()}, {sl}]", f"M[{sl}, {self.index()}]", target]
        elif form == 3:
            target = f"M[{self.index()}]"
            operands = [f"M[{self.index()}]", "A[1:]", "B[:-1]", f"M[:, {self.index()}]"]
        elif form == 4:
            sl1, sl2 = self.slice_(), self.slice_()
            target = f"M[{sl1}, {sl2}]"
            operands = [f"M[{sl2}, {sl1}]", f"M[{sl1}, {sl2}]", f"M[{self.index()}, {sl2}]"]
        else:
            self.emit(indent, f"A {self.pick(['+=', '-=', '*='])} {self.section_value(['A', 'B', 'A[::-1]'])}")
            return
        op = self.pick(["=", "=", "+=", "-=", "*="])
        if self.int_(0, 3) == 0:
            # The value kept in a variable first (`T0 = A[1:] * 2`), then used in the store.
            self.emit(indent, f"T0 = {self.section_value(operands)}")
            self.emit(indent, f"{target} {op} {self.section_value(operands + ['T0', 'T0'])}")
            return
        self.emit(indent, f"{target} {op} {self.section_value(operands)}")

    def made_stmt(self, indent):
        form = self.int_(0, 7)
        if form <= 1:
            item = self.pick(["0", "1", "-2", "0.5", "True", self.expr()])
            # (`n + 1` most often: the length of the lists made before the nest, so that P and Q
            # often hold lists of one length, whose subscripts get facts: made_lengths.h.)
            count = self.pick(["n + 1", "n + 1", "n + 1", "n", "2", "-1", "len(P)", "k % 4"] + self.loop_vars)
            self.emit(indent, f"{self.pick(['P', 'Q'])} = [{item}] * ({count})")
        elif form == 2:
            self.emit(indent, f"{self.pick(['P', 'Q'])} = {self.pick(['P', 'Q', 'Q'])}[{self.slice_()}]")
        elif form == 3:
            self.emit(indent, self.pick(["Q = P", "P = Q", "P, Q = Q, P", "Q = P.copy()",
                                         f"P = [{self.expr()}, {self.expr()}]", "L0.append(P)",
                                         f"L0.append([{self.expr()}, Q])",
                                         # Lists that grow and shrink while read (a pop of an
                                         # empty one raises IndexError).
                                         f"{self.pick(['P', 'Q'])}.append({self.expr()})",
                                         f"{self.pick(['P', 'Q'])}.append({self.pick(['P', 'Q'])}[-1] + {self.expr()})",
                                         f"{self.pick(SCALARS)} = {self.pick(['P', 'Q'])}.pop()",
                                         f"{self.pick(SCALARS)} += {self.pick(['P', 'Q'])}.pop()",
                                         f"{self.pick(SCALARS)} = {self.pick(['P', 'Q'])}.pop({self.pick(['0', '-2', '1', 'k'] + self.loop_vars)})"]))
        elif form <= 5:
            self.emit(indent, f"{self.pick(['P', 'Q'])}[{self.index()}] = {self.expr()}")
        else:
            self.emit(indent, f"{self.pick(['P', 'Q'])}[{self.index()}] {self.pick(['+=', '-='])} {self.expr()}")

    def stmt(self, indent, depth):
        in_loop = bool(self.loop_vars)
        if self.made and self.int_(0, 3) == 0:
            self.made_stmt(indent)
            return
        if self.slices and self.int_(0, 3) == 0:
            self.section_stmt(indent)
            return
        form = self.int_(0, 14)
        if form == 13 and depth < 3 and len(self.loop_vars) < 3:
            self.accumulator(indent)
        elif form == 14:
            # Unpacking: a row of M (of n + 1 items: ValueError unless n is 1), a helper's
            # tuple (with or without its default), or a tuple display.
            kind = self.int_(0, 2)
            if kind == 0:
                self.emit(indent, f"s, t = {self.m_row(self.index())}")
            elif kind == 1:
                extra = f", {self.expr()}" if self.int_(0, 1) else ""
                names = self.pick(["s, t, u", "s, t", "s, t, u, u"])
                self.emit(indent, f"{names} = h4({self.expr()}, {self.expr()}{extra})")
            else:
                self.emit(indent, f"t, s = {self.expr()}, {self.expr()}")
        elif form <= 2:
            if self.int_(0, 3) == 0:
                # A list the nest only appends to (its items are compared by `return locals()`),
                # and L1, which it may make anew (`L1 = []`) and append to L0 (one object in
                # both places, also when appended to afterwards).
                item = self.expr() if self.int_(0, 2) else f"({self.expr()}, {self.expr()})"
                kind = self.int_(0, 5)
                if kind == 0:
                    self.emit(indent, self.pick(["L1 = []", f"L1 = [{item}]", f"L1 = [{self.expr()}, L1]"]))
                elif kind == 1:
                    self.emit(indent, f"L1.append({item})")
                elif kind == 2:
                    self.emit(indent, self.pick(["L0.append(L1)", f"L0.append([{item}, len(L1)])"]))
                else:
                    self.emit(indent, f"L0.append({item})")
            else:
                self.emit(indent, f"{self.pick(SCALARS)} = {self.expr()}")
        elif form <= 4:
            e = self.expr()
            if not self.cplx and self.int_(0, 3) == 0:
                e = f"{self.pick(['r1', 'r2'])}({e})"  # reading s, t, u (module_program)
            self.emit(indent, f"{self.pick(SCALARS)} {self.pick(['+=', '-=', '*='])} {e}")
        elif form <= 6 and self.int_(0, 5) == 0:
            # A helper that stores into what it is passed inside its loop, as a statement.
            call = self.pick([f"w1({self.pick(['A', 'B'])}, {self.expr()})", f"w1(A, {self.expr()}, n)",
                              f"w1({self.m_row(self.index())}, {self.expr()}, n)"])
            self.emit(indent, self.pick([call, f"{self.pick(SCALARS)} = {call}"]))
        elif form <= 6:
            self.emit(indent, f"{self.pick(['A', 'B'])}[{self.index()}] = {self.expr()}")
        elif form == 7 and self.objs and self.int_(0, 1) == 0:
            # A method that assigns the object's attributes, as a statement of its own.
            item = self.pick(self.row_vars) if self.row_vars and self.int_(0, 1) else f"M[{self.index()}]"
            self.emit(indent, self.pick([f"{item}.bump({self.expr()})", f"{item}.swap()",
                                         f"{self.pick(SCALARS)} = {item}.take({self.expr()})",
                                         f"{self.pick(SCALARS)} = {item}.take({self.expr()})",
                                         f"w2(M, {self.expr()})", f"{self.pick(SCALARS)} = w2(M, {self.expr()})"]))
        elif form == 7:
            self.emit(indent, f"{self.m_item(target=True)} += {self.expr()}")
        elif form == 8 and depth < 3:
            self.emit(indent, f"if {self.cond()}:")
            self.stmts(indent + 1, depth + 1)
            if self.int_(0, 1):
                self.emit(indent, f"elif {self.cond()}:")
                self.stmts(indent + 1, depth + 1)
            if self.int_(0, 1):
                self.emit(indent, "else:")
                self.stmts(indent + 1, depth + 1)
        elif form == 9 and depth < 3 and len(self.loop_vars) < 3:
            v = f"v{len(self.loop_vars)}"
            rows = len(self.row_vars)
            items = self.header(indent, v)
            self.loop_vars.append(v)
            self.item_vars += items
            self.stmts(indent + 1, depth + 1)
            if len(self.row_vars) > rows and self.int_(0, 2) == 0:
                self.emit(indent + 1, f"{self.row_vars[-1]}[{self.index()}] = {self.expr()}")
            self.loop_vars.pop()
            del self.item_vars[len(self.item_vars) - len(items):]
            del self.row_vars[rows:]
            if self.int_(0, 3) == 0:
                # for ... else: the clause runs where no break left the loop.
                self.emit(indent, "else:")
                self.stmts(indent + 1, depth + 1)
        elif form == 10 and depth < 3:
            w = f"w{self.counter}"
            self.counter += 1
            self.emit(indent, f"{w} = 0")
            self.emit(indent, f"while {w} < {self.int_(0, 4)} and ({self.cond()}):")
            self.emit(indent + 1, f"{w} += 1")
            self.stmts(indent + 1, depth + 1)
        elif form == 11 and in_loop:
            # Leaving the loop, the nest, or the function (a return or raise inside the
            # loops ends the nest there, and CPython runs that statement).
            self.emit(indent, f"if {self.cond()}:")
            exits = ["return locals()", f"raise ValueError(({self.pick(SCALARS)}, {self.loop_vars[-1]}))"]
            self.emit(indent + 1, self.pick(["break", "continue"] * 2 + exits))
        elif form == 12 and not self.cplx and self.int_(0, 1):
            # The min/max reduction idioms (parallel when the analysis allows; a float one
            # combines its parts in iteration order).
            v, e = self.pick(SCALARS), self.expr()
            f = self.pick(["min", "max"])
            form2 = self.int_(0, 3)
            if form2 == 0:
                self.emit(indent, f"{v} = {f}({v}, {e})")
            elif form2 == 1:
                self.emit(indent, f"{v} = {f}({e}, {v})")
            else:
                op = self.pick(["<", ">", "<=", ">="])
                self.emit(indent, f"if {e} {op} {v}:" if form2 == 2 else f"if {v} {op} {e}:")
                self.emit(indent + 1, f"{v} = {e}")
                if self.int_(0, 1):
                    # A companion (argmax's index): assigned beside the update.
                    c = self.pick([x for x in SCALARS if x != v])
                    self.emit(indent + 1, f"{c} = {self.pick(self.loop_vars + [self.expr()])}")
        elif not self.cplx and in_loop and self.int_(0, 4) == 0:
            # A row of M picked by an index computed from the data (a lookup table's row:
            # the dependence model's "some row of M"), read, stored into, or copied out.
            q = f"q{self.counter}"
            self.counter += 1
            self.emit(indent, f"{q} = M[int(abs({self.pick(['A', 'B'])}[{self.index()}])) % (n + 1)]")
            kind = self.int_(0, 3)
            if kind == 0:
                self.emit(indent, f"{self.pick(SCALARS)} += {q}[{self.index()}]")
            elif kind == 1:
                self.emit(indent, f"{q}[{self.index()}] = {self.expr()}")
            else:
                self.emit(indent, f"{self.pick(['A', 'B'])}[{self.index()}] = {q}[{self.index()}] * 2")
        else:
            self.emit(indent, f"{self.pick(SCALARS)} = {self.expr()}")


@st.composite
def programs(draw):
    n = draw(st.integers(0, 7))
    cplx = draw(st.integers(0, 3)) == 0
    g = Gen(draw, n, cplx)
    g.lines += HELPERS.splitlines()
    g.emit(0, "def f(A, B, M, n, k, s, t, u):")
    seed = draw(st.integers(0, 99))
    g.emit(1, f"random.seed({seed})")
    g.emit(1, f"np.random.seed({seed})")
    g.emit(1, "L0 = []")
    g.emit(1, "L1 = []")
    if g.made:
        g.emit(1, f"P = [{g.pick(['0', '1', '0.0', '2.5', 'False'])}] * (n + 1)")
        g.emit(1, f"Q = {g.pick(['P', 'P[:]', '[3, 4, 5]', '[0.5] * 3'])}")
    g.loop_vars = ["v0"]
    body_start = len(g.lines)
    if not cplx and draw(st.integers(0, 3)) == 0:
        # A body that opens with an accumulator reading no scalar the body assigns: the
        # shape whose iterations run interleaved (plan_interleave.h).
        g.no_scalars = True
        g.accumulator(2)
        g.no_scalars = False
    g.stmts(2, 1)
    body = g.lines[body_start:]
    g.lines = g.lines[:body_start]
    g.loop_vars = []
    outer = draw(st.integers(0, 7))
    if outer < 2:
        g.emit(1, f"for v0, x0 in enumerate({g.pick(['A', 'B'])}):")
    elif outer == 2:
        # A while statement as the nest (counted up first, so that a `continue` moves on).
        g.emit(1, f"v0 = {g.int_(-2, 0)}")
        test = f"v0 < n - {g.int_(0, 2)}"
        if draw(st.booleans()):
            test += f" and ({g.cond()})"
        g.emit(1, f"while {test}:")
        g.emit(2, "v0 += 1")
    else:
        g.emit(1, f"for v0 in {g.range_()}:")
    g.lines += body
    g.emit(1, "after = random.random(), random.gauss(), np.random.rand(), np.random.randn()  # (the generators' states)")
    g.emit(1, "return locals()")
    src = "\n".join(g.lines) + "\n"
    dtypes = [draw(st.sampled_from(CDTYPES if cplx else DTYPES)) for _ in range(3)]
    # Each of A, B, M may be a Python list (of lists) of the Python values of its dtype;
    # A and B may be an array.array of its item type.
    # Not with section stores: `A += A[::-1]`, `M[i] *= k` on a list or array.array extend
    # or repeat it, and in a loop nest it grows exponentially (CPython runs out of memory).
    kinds = [draw(st.sampled_from(["ndarray", "ndarray", "list", "mixed list", "numbers list"] + ([] if cplx else ["array.array"])))
             if not g.slices else "ndarray" for _ in range(2)]
    kinds.append(draw(st.sampled_from(["ndarray", "ndarray", "list", "mixed list", "numbers list", "ragged list"]))
                 if not g.slices else "ndarray")
    seed = draw(st.integers(0, 2**16))
    # k may be large: products with it leave 53 bits (int / int rounds the exact quotient)
    # or 64 (big ints), where the facts that drop those checks must not hold.
    k = draw(st.sampled_from([1, 2, 3, -2, 0, 1, 2, 3, 2**40 + 3, -(2**62)]))
    scalars = [draw(st.sampled_from(CSCALARS if cplx else [0, 1, 2.5, -3, 0.0, np.float64(1.5), np.int64(4), True]))
               for _ in range(3)]
    # Values that make NumPy warn (overflow, invalid) or that are already non-finite.
    special = draw(st.sampled_from([None, None, None, 1e300, -1e308, np.inf, np.nan]))

    objs = g.objs

    def make_args():
        rng = np.random.default_rng(seed)
        arrs = []
        for d, shape in zip(dtypes, [(n + 2,), (n + 2,), (n + 1, n + 1)]):
            if d.startswith("complex"):
                a = ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * 4).astype(d)
                if special is not None:
                    with np.errstate(over="ignore"):
                        a.flat[int(rng.integers(0, a.size))] = complex(special, rng.standard_normal())
            elif d == "bool":
                a = rng.random(shape) > 0.5
            elif d.startswith("float"):
                a = (rng.standard_normal(shape) * 4).astype(d)
                if special is not None:
                    with np.errstate(over="ignore"):
                        a.flat[int(rng.integers(0, a.size))] = special
            else:
                info = np.iinfo(d)
                a = rng.integers(max(info.min, -9), min(info.max, 9), size=shape).astype(d)
            kind = kinds[len(arrs)]
            if kind == "array.array" and d in ARRAY_CODES:
                a = array.array(ARRAY_CODES[d], a.tolist())
            elif kind != "ndarray":
                a = a.tolist()
                if kind == "mixed list" and d == "float64":
                    # Floats and np.float64s, each kept with its own type (a tagged list).
                    def mix(x):
                        if isinstance(x, list):
                            return [mix(y) for y in x]
                        return np.float64(x) if rng.random() < 0.5 else x
                    a = mix(a)
                if kind == "numbers list" and d != "bool" and not d.startswith("complex"):
                    # Python ints and floats in one list (a tagged list): about a third of
                    # the elements the other type (finite floats made ints, ints made floats).
                    def numbers(x):
                        if isinstance(x, list):
                            return [numbers(y) for y in x]
                        if rng.random() >= 0.35:
                            return x
                        if isinstance(x, float):
                            return int(round(x)) if np.isfinite(x) else x
                        return x + 0.5
                    a = numbers(a)
                if kind == "ragged list" and a and isinstance(a[0], list):
                    # Rows of different lengths: about half of them cut short (some emptied).
                    a = [r[:int(rng.integers(0, len(r) + 1))] if rng.random() < 0.5 else r for r in a]
            if objs and len(arrs) == 2:
                # M's rows made objects: attributes a, b, c from the row's first items.
                rows = a.tolist() if isinstance(a, np.ndarray) else list(a)
                a = [Obj(*[(r[j % len(r)] if len(r) else 0) for j in range(3)]) for r in rows]
                if rng.random() < 0.5:
                    # Attributes of different kinds (Type::columns): b a bool, c an int where
                    # finite (now and then one object's c left as it was: a column of kinds).
                    keep = int(rng.integers(0, 2 * len(a) + 1))
                    for i, o in enumerate(a):
                        o.b = bool(o.b)
                        if i != keep and isinstance(o.c, float) and np.isfinite(o.c):
                            o.c = int(o.c)
            arrs.append(a)
        return (*arrs, n, k, *scalars)
    return src, make_args


def module_program(src):
    """The program f of programs() as module code: its body at module level after the
    helpers, its arguments from the global ARGS; None where its body returns (a `return`
    inside the loops). The nest's variables are then the module's globals, which r1/r2 read."""
    lines = src.splitlines()
    start = lines.index("def f(A, B, M, n, k, s, t, u):")
    body = lines[start + 1:]
    assert body[-1] == "    return locals()"
    body = body[:-1]
    if any(line.lstrip().startswith("return") for line in body):
        return None
    return "\n".join(lines[:start] + ["A, B, M, n, k, s, t, u = ARGS"] + [line[4:] for line in body]) + "\n"
