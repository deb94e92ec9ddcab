"""Strings inside nests: a str is read in place (its code points, of CPython's 1-, 2- or 4-byte
kind), and its characters (`s[i]`, `for ch in s`, one-character constants like 'G') compare as
their code points or give ord(); a variable holding one is written back as a str of one
character. Every result is compared with
CPython's: values, IndexError at the same index after the earlier writes."""
import random

import numpy as np
import pytest

from difftest import ran_parallel, run

KINDS = {
    "ascii": "ACGT",
    "latin-1": "acgtéü",
    "bmp": "aé☃λ",
    "astral": "a😀b😺",
}


def text(alphabet, n, seed):
    r = random.Random(seed)
    return "".join(r.choice(alphabet) for _ in range(n))


def native(recs, name="f"):
    return any(r["native_calls"] for r in recs if r["function"] == name)


@pytest.mark.parametrize("kind", list(KINDS))
def test_edit_distance_over_an_array(kind):
    recs = run("""
    import numpy as np
    def f(s, t):
        n, m = len(s), len(t)
        D = np.zeros((n + 1, m + 1), dtype=np.int64)
        for i in range(n + 1):
            D[i, 0] = i
        for j in range(m + 1):
            D[0, j] = j
        for i in range(1, n + 1):
            for j in range(1, m + 1):
                cost = 0 if s[i - 1] == t[j - 1] else 1
                D[i, j] = min(D[i - 1, j] + 1, D[i, j - 1] + 1, D[i - 1, j - 1] + cost)
        return int(D[n, m])
    """, "f", lambda: (text(KINDS[kind], 70, 1), text(KINDS[kind], 60, 2)))
    assert native(recs), recs


def test_longest_common_subsequence_over_lists_with_strs_of_different_kinds():
    recs = run("""
    def f(a, b):
        L = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(1, len(a) + 1):
            for j in range(1, len(b) + 1):
                if a[i - 1] == b[j - 1]:
                    L[i][j] = L[i - 1][j - 1] + 1
                else:
                    L[i][j] = max(L[i - 1][j], L[i][j - 1])
        return L[len(a)][len(b)]
    """, "f", lambda: (text("abcé", 50, 3), text("abc😀", 40, 4)))
    assert native(recs), recs


def test_counts_orderings_constants_and_ord():
    recs = run("""
    def f(seq):
        gc = 0
        low = 0
        h = 0
        vowels = 0
        for i in range(len(seq)):
            if seq[i] == 'G' or seq[i] == 'C':
                gc += 1
            if 'a' <= seq[i] <= 'z' and seq[i] != 'q':
                low += 1
            if seq[i] in ('a', 'e', 'i', 'o', 'u', 'é'):
                vowels += 1
            if seq[i] not in "GCé😀":
                vowels += 10
            h = (h * 31 + ord(seq[i])) % 1000000007
        return gc, low, vowels, h
    """, "f", lambda: (text("GCATgcatéqz😀", 400, 5),))
    assert native(recs), recs


def test_a_conditional_expression_of_characters():
    recs = run("""
    def f(s, t, n):
        c = 0
        for i in range(n):
            if (s[i] if i % 2 else t[i]) == 'a':
                c += 1
            x = s[i] if s[i] > t[i] else t[i]
            c += ord(x)
        return c, x
    """, "f", lambda: ("abacabadabacaba", "aabbaabbaabbaab", 15))
    assert native(recs), recs


def test_a_loop_comparing_two_strs_runs_in_parallel():
    recs = run("""
    def f(s, t, out):
        for i in range(len(out)):
            out[i] = 1 if s[i] == t[i] else 0
        return out
    """, "f", lambda: (text("ACGT", 3000, 6), text("ACGT", 3000, 7), np.zeros(3000, dtype=np.int64)))
    assert ran_parallel(recs, "i"), recs


def test_negative_indices_and_an_index_error_after_the_earlier_writes():
    run("""
    def f(s, out, n):
        for i in range(n):
            out[i] = ord(s[-1 - i]) - ord(s[i])
        return out
    """, "f", lambda: ("abcdefg", np.zeros(9, dtype=np.int64), 9), expect="bail")
    run("""
    def f(s, n):
        c = 0
        for i in range(n):
            if s[i] == s[0]:
                c += 1
        return c
    """, "f", lambda: ("", 1), expect=None)


def test_characters_in_variables_and_loops_over_strs():
    # `for ch in s`, zip over two strs, `x = s[i]`: the variables hold code points in the
    # kernel and strs of one character afterwards (the last one, as CPython leaves them).
    recs = run("""
    def f(s, t):
        c = 0
        v = 0
        for ch in s:
            if ch == 'a':
                c += 1
            elif ch in "éü😀":
                v += ord(ch)
        same = 0
        for a, b in zip(s, t):
            if a == b:
                same += 1
        for i in range(len(t)):
            x = t[i]
            if x > 'm':
                c += 2
        return locals()
    """, "f", lambda: (text("abcéü😀", 300, 8), text("abcmnz", 250, 9)))
    assert native(recs), recs
    run("""
    def f(s):
        n = 0
        for ch in s:
            n += 1
        return n, ch
    """, "f", lambda: ("",), expect=None)  # UnboundLocalError at `ch`, as in CPython


@pytest.mark.parametrize("ca", ["a", "é", "😀", "", "ab", "aé"])
def test_a_str_variable_compared_with_characters(ca):
    # `ca` holds a str when the nest starts (the outer loop stays in CPython): equal to a
    # character when it is that one character; strs of other lengths are never equal.
    recs = run("""
    def f(ca, b):
        same = 0
        other = 0
        for cb in b:
            if ca == cb:
                same += 1
            if cb != ca:
                other += 1
        return same, other
    """, "f", lambda: (ca, text("aé😀bc", 200, 3)))
    assert native(recs), recs


def test_character_methods_for_ascii_and_cpython_beyond():
    # isdigit() ... upper() of characters: computed for ASCII (every code point below 128,
    # the control characters Python counts as spaces too); a character beyond ASCII hands
    # the statement to CPython, whose Unicode database answers ('²'.isdigit() is True).
    src = """
    def f(s):
        counts = [0] * 8
        low = 0
        up = 0
        for ch in s:
            counts[0] += ch.isdigit()
            counts[1] += ch.isalpha()
            counts[2] += ch.isalnum()
            counts[3] += ch.isspace()
            counts[4] += ch.isupper()
            counts[5] += ch.islower()
            counts[6] += ch.isdecimal() + ch.isnumeric()
            if ch.lower() == 'q':
                low += 1
            if ch.upper() > 'M':
                up += 1
        last = ch.lower() if s else None
        return counts, low, up, last
    """
    recs = run(src, "f", lambda: ("".join(chr(c) for c in range(128)) * 3,))
    assert native(recs) and not any(r["bailouts"] for r in recs), recs
    run(src, "f", lambda: ("abc Q9\x1c" * 20 + "²ÅßǅΣ" + "xyz",), expect="bail")


@pytest.mark.parametrize("loop, reason", [
    ("for i in range(len(s)):\n        p = (s[i], 1)\n        c += p[1]", "assigns a (character of a str"),
    ("for i in range(len(s)):\n        if s[i] == 1:\n            c += 1", "compares a character of a str"),
    ("for i in range(len(s)):\n        if s[i] == 'ab':\n            c += 1", "str constant"),
    ("for i in range(len(s)):\n        c += 'ab'.count(s[i])", ""),
    ("for i in range(len(s)):\n        c += s[i]", ""),
])
def test_what_a_nest_does_with_strs_beyond_comparing_characters_stays_in_cpython(loop, reason):
    src = "def f(s):\n    c = 0\n    " + loop + "\n    return c\n"
    recs = run(src, "f", lambda: ("abca",), expect=None)
    assert not native(recs), recs
    assert reason in " ".join(r["reason"] for r in recs), recs
