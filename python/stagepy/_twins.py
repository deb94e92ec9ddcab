"""Python twins of C functions that nests call.

In: nothing. Out: functions whose bytecode stagepy inlines where a nest calls the C function
each stands for (registered by _types.register_python; the C function's identity is the
guard). A twin computes what its C function computes for the arguments it takes — the same
comparisons on the same items, in the same order — and a call it cannot take (more
arguments, keyword arguments) leaves the nest in CPython. A statement that goes to CPython
(an IndexError, a comparison it cannot make) calls the C function itself, which raises.
"""


def bisect_right(a, x):
    # _bisect.bisect_right(a, x) (Modules/_bisectmodule.c, internal_bisect_right with lo 0
    # and hi len(a)): `x < a[mid]` decides.
    lo = 0
    hi = len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def bisect_left(a, x):
    # _bisect.bisect_left(a, x) (internal_bisect_left): `a[mid] < x` decides.
    lo = 0
    hi = len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo
