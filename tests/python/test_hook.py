"""The PEP 523 hook: replacement code runs in place of a frame's code from its first call,
for every kind of frame, without changing what the program does otherwise."""
import gc
import os
import sys
import textwrap
import threading
import traceback
import warnings

import pytest

import stagepy
from stagepy import _hook
from helpers import code_of, compile_module, core, define, run_python  # noqa: F401


def test_first_call_runs_replacement(replacing):
    f = define("def f(x):\n    return x + 1\n", "f")
    replacing[f.__code__] = code_of("def f(x):\n    return x + 100\n", "f")
    assert f(1) == 101  # the very first call
    assert f(2) == 102
    assert core.hook_stats()["swaps"] >= 1


def test_function_is_retargeted_after_first_call(replacing):
    f = define("def f(x):\n    return -x\n", "f")
    repl = code_of("def f(x):\n    return 2 * x\n", "f")
    replacing[f.__code__] = repl
    assert f(3) == 6
    assert f.__code__ is repl  # later calls need no swap


def test_exception_and_traceback_point_into_replacement(replacing):
    f = define("def f(x):\n    return x\n", "f")
    repl = code_of("def f(x):\n    y = x + 1\n    raise ValueError(f'bad {y}')\n", "f",
                   filename="replacement.py")
    replacing[f.__code__] = repl
    with pytest.raises(ValueError, match="bad 2") as info:
        f(1)
    tb = info.value.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert tb.tb_frame.f_code is repl
    assert tb.tb_lineno == 3
    text = "".join(traceback.format_exception(info.value))
    assert 'File "replacement.py", line 3, in f' in text


def test_try_except_inside_replacement(replacing):
    f = define("def f(x):\n    return 0\n", "f")
    replacing[f.__code__] = code_of(textwrap.dedent("""
        def f(x):
            try:
                return 1 // x
            except ZeroDivisionError:
                return -1
        """), "f")
    assert f(0) == -1


def test_closures_and_cells(replacing):
    src = """
    def outer(a):
        b = a * 10
        def inner(c):
            return a + b + c
        return inner
    """
    outer = define(src, "outer")
    inner_code = code_of(src, "inner")
    replacing_src = """
    def outer(a):
        b = a * 10
        def inner(c):
            return (a + b + c) * 1000
        return inner
    """
    # Functions made later from the same code object are replaced too.
    inner1 = outer(1)
    replacing[inner1.__code__] = code_of(replacing_src, "inner")
    assert inner1(2) == (1 + 10 + 2) * 1000
    inner2 = outer(3)
    assert inner2.__code__ is inner1.__code__ or inner2(1) == (3 + 30 + 1) * 1000
    assert inner2(1) == (3 + 30 + 1) * 1000
    assert inner_code.co_freevars == ("a", "b")


def test_cell_argument(replacing):
    src = "def f(x):\n    def g():\n        return x\n    return g()\n"
    f = define(src, "f")
    replacing[f.__code__] = code_of("def f(x):\n    def g():\n        return x * 7\n    return g()\n", "f")
    assert f(6) == 42


def test_signatures(replacing):
    src = "def f(a, /, b, c=3, *rest, k, m=5, **kw):\n    return 0\n"
    f = define(src, "f")
    replacing[f.__code__] = code_of(
        "def f(a, /, b, c=3, *rest, k, m=5, **kw):\n    return (a, b, c, rest, k, m, sorted(kw.items()))\n", "f")
    assert f(1, 2, k=4) == (1, 2, 3, (), 4, 5, [])
    assert f(1, 2, 9, 10, 11, k=4, m=6, z=1) == (1, 2, 9, (10, 11), 4, 6, [("z", 1)])
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'k'"):
        f(1, 2)


def test_incompatible_replacement_is_rejected_and_recorded(replacing):
    f = define("def f(a, b):\n    return a - b\n", "f")
    replacing[f.__code__] = code_of("def f(a, c):\n    return 0\n", "f")
    assert f(5, 3) == 2  # the original runs
    assert any("different argument names" in e for e in core.hook_stats()["errors"])


def test_resolver_failure_never_changes_the_program():
    f = define("def f(x):\n    return x * 3\n", "f")

    def bad_resolver(code):
        raise RuntimeError("resolver exploded")
    stagepy.enable()
    core.set_resolver(bad_resolver, prefilter=False)
    try:
        assert f(2) == 6
    finally:
        stagepy.disable()
        from stagepy import _resolve
        core.set_resolver(_resolve.resolve)
    assert any("resolver exploded" in e for e in core.hook_stats()["errors"])


def test_resolver_returning_garbage_is_recorded():
    f = define("def f(x):\n    return x + 5\n", "f")
    stagepy.enable()
    core.set_resolver(lambda code: 42 if code is f.__code__ else None, prefilter=False)
    try:
        assert f(1) == 6
    finally:
        stagepy.disable()
        from stagepy import _resolve
        core.set_resolver(_resolve.resolve)
    assert any("non-code object" in e for e in core.hook_stats()["errors"])


def test_methods_and_zero_argument_super(replacing):
    src = """
    class Base:
        def who(self):
            return "base"
    class Child(Base):
        def who(self):
            return "child:" + super().who()
        def plain(self, k):
            return k
    """
    ns = {}
    exec(compile_module(src), ns)
    Child = ns["Child"]
    # Zero-argument super() reads the __class__ cell: the replacement has it too.
    replacing[Child.who.__code__] = code_of("""
    class Child:
        def who(self):
            return "CHILD:" + super().who()
    """, "who")
    replacing[Child.plain.__code__] = code_of("""
    class Child:
        def plain(self, k):
            return k * 2
    """, "plain")
    c = Child()
    assert c.who() == "CHILD:base"
    assert Child.who(c) == "CHILD:base"
    bound = c.plain
    assert bound(21) == 42


def test_module_code_via_exec_is_replaced(replacing):
    code = compile_module("result = 1\n")
    replacing[code] = compile_module("result = 2\n")
    ns = {}
    exec(code, ns)
    assert ns["result"] == 2


def test_module_code_via_runpy_is_replaced(replacing, tmp_path):
    import runpy
    script = tmp_path / "mod_script.py"
    script.write_text("value = 'original'\n")
    code = compile(script.read_text(), str(script), "exec")
    # runpy compiles the file itself, so key the replacement by file name.
    table_hit = []

    def resolver(c):
        if c.co_filename == str(script) and c.co_name == "<module>":
            table_hit.append(c)
            return compile("value = 'replaced'\n", str(script), "exec")
        return None
    core.set_resolver(resolver, prefilter=False)
    ns = runpy.run_path(str(script))
    assert ns["value"] == "replaced"
    assert table_hit


def _module_probe_script(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(textwrap.dedent("""
        import sys
        from stagepy import _hook
        core = _hook.core()
        me = sys._getframe().f_code
        print("decided" if core.decision(me) != "undecided" else "undecided")
        print("enabled" if core.enabled() else "disabled")
        print(sys.argv[1:])
    """))
    return script


def test_module_code_seen_from_first_line_with_env(tmp_path):
    script = _module_probe_script(tmp_path)
    r = run_python([str(script), "a", "b"], {"STAGEPY": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:3] == ["decided", "enabled", "['a', 'b']"]


def test_module_code_seen_from_first_line_with_runner(tmp_path):
    script = _module_probe_script(tmp_path)
    r = run_python(["-m", "stagepy", str(script), "x"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:3] == ["decided", "enabled", "['x']"]


def test_runner_with_module(tmp_path):
    pkg = tmp_path / "probemod.py"
    pkg.write_text(_module_probe_script(tmp_path).read_text())
    r = run_python(["-m", "stagepy", "-m", "probemod", "y"], cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:3] == ["decided", "enabled", "['y']"]
    r = run_python(["-m", "probemod", "z"], {"STAGEPY": "1"}, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:3] == ["decided", "enabled", "['z']"]


def test_without_env_nothing_is_enabled(tmp_path):
    script = _module_probe_script(tmp_path)
    r = run_python([str(script)], {"STAGEPY": "0"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[1] == "disabled"


def test_program_exit_code_and_exceptions_pass_through_runner(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("import sys\nprint('hi')\nraise SystemExit(3)\n")
    r = run_python(["-m", "stagepy", str(script)])
    assert (r.returncode, r.stdout) == (3, "hi\n")
    script.write_text("def f():\n    raise KeyError('k')\nf()\n")
    r = run_python(["-m", "stagepy", str(script)])
    assert r.returncode == 1
    assert "KeyError: 'k'" in r.stderr and f'File "{script}", line 2, in f' in r.stderr


def test_threads(replacing):
    # (`*rest`: a function stagepy does not inline, so that the loop below, which an earlier
    # test's sweep may have rewritten, calls it through the hook.)
    f = define("def f(x, *rest):\n    return x + 1\n", "f")
    replacing[f.__code__] = code_of("def f(x, *rest):\n    return x - 1\n", "f")
    gen_src = "def g(n):\n    for i in range(n):\n        yield i\n"
    g = define(gen_src, "g")
    results, errors = [], []

    def work(k):
        try:
            s = 0
            for i in range(20000):
                s += f(i)
            results.append((k, s, sum(g(10))))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    expected = sum(i - 1 for i in range(20000))
    assert sorted(results) == [(k, expected, 45) for k in range(8)]


def test_generators_and_coroutines_pass_through(replacing):
    import asyncio
    g = define("def g(n):\n    for i in range(n):\n        yield i\n", "g")
    replacing[g.__code__] = code_of("def g(n):\n    yield 'replaced'\n", "g")
    assert list(g(3)) == [0, 1, 2]  # generator frames are never swapped
    gen = g(5)
    assert next(gen) == 0
    with pytest.raises(ValueError):
        gen.throw(ValueError("x"))
    gen2 = g(5)
    next(gen2)
    gen2.close()

    async def inner():
        await asyncio.sleep(0)
        return 7

    async def outer():
        return await inner() + 1
    assert asyncio.run(outer()) == 8


def test_settrace_sees_replacement(replacing):
    f = define("def f(x):\n    return x\n", "f")
    repl = code_of("def f(x):\n    y = x * 2\n    return y\n", "f", filename="traced.py")
    replacing[f.__code__] = repl
    lines = []

    def tracer(frame, event, arg):
        if frame.f_code.co_filename == "traced.py" and event == "line":
            lines.append(frame.f_lineno)
        return tracer
    sys.settrace(tracer)
    try:
        assert f(4) == 8
    finally:
        sys.settrace(None)
    assert lines == [2, 3]


def test_coverage_still_works(tmp_path):
    pytest.importorskip("coverage")
    import json
    script = tmp_path / "cov_target.py"
    script.write_text(textwrap.dedent("""
        import sys
        def f(n):
            total = 0
            for i in range(n):
                if i % 2:
                    total += i
            return total
        print(f(10))
        if len(sys.argv) > 5:
            print("never")
    """))
    results = []
    for env in ({}, {"STAGEPY": "1"}):
        datafile = tmp_path / f"cov{len(results)}"
        r = run_python(["-m", "coverage", "run", f"--data-file={datafile}", str(script)], env)
        assert r.returncode == 0, r.stderr
        assert r.stdout == "25\n"
        out = tmp_path / f"cov{len(results)}.json"
        r = run_python(["-m", "coverage", "json", f"--data-file={datafile}", "-o", str(out)], env,
                       cwd=str(tmp_path))
        assert r.returncode == 0, r.stderr
        files = json.loads(out.read_text())["files"]
        entry = next(v for k, v in files.items() if k.endswith("cov_target.py"))
        results.append((entry["executed_lines"], entry["missing_lines"]))
    assert results[0] == results[1]
    assert results[0][1] == [11]  # only the print("never") line is missed


def test_no_reference_leaks_over_a_million_replaced_calls(replacing):
    f = define("def f(a, *rest, k=0, **kw):\n    return a\n", "f")
    replacing[f.__code__] = code_of("def f(a, *rest, k=0, **kw):\n    return a\n", "f")
    mod = compile_module("x = obj\n")
    replacing[mod] = compile_module("x = obj\n")
    obj = object()
    ns = {"obj": obj}
    f(obj)
    exec(mod, ns)
    def spin(n):
        for _ in range(n):
            f(obj, 1, k=2, z=3)
            exec(mod, ns)  # module code: every exec is a fresh frame, swapped again
    # (Once first: where an earlier test's sweep rewrote `spin`, its loop's first entry looks
    # at `f` once and keeps what it found, its code included, for later entries.)
    spin(1)
    gc.collect()
    before = (sys.getrefcount(obj), sys.getrefcount(mod), sys.getrefcount(f.__code__), sys.getrefcount(f))
    swaps = core.hook_stats()["swaps"]
    spin(500_000)
    gc.collect()
    after = (sys.getrefcount(obj), sys.getrefcount(mod), sys.getrefcount(f.__code__), sys.getrefcount(f))
    assert before == after
    assert core.hook_stats()["swaps"] - swaps >= 500_000


def test_no_memory_growth_over_replaced_calls(replacing):
    resource = pytest.importorskip("resource")
    mod = compile_module("y = 1\n")
    replacing[mod] = compile_module("y = 2\n")
    ns = {}
    for _ in range(100_000):
        exec(mod, ns)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(500_000):
        exec(mod, ns)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert ns["y"] == 2
    assert rss1 - rss0 < 4096  # KiB


def _max_depth_script(limit, depth, enable):
    return textwrap.dedent(f"""
        import sys, threading
        sys.setrecursionlimit({limit})
        threading.stack_size(256 * 1024 * 1024)
        import stagepy
        if {enable}:
            stagepy.enable()
        def rec(n):
            return 0 if n == 0 else 1 + rec(n - 1)
        def main():
            print(rec({depth}))
        t = threading.Thread(target=main)
        t.start(); t.join()
    """)


@pytest.mark.parametrize("limit,depth", [(1000, 950), (20000, 19000)])
def test_recursion_depth_that_works_without_hook_works_with_it(tmp_path, limit, depth):
    script = tmp_path / "rec.py"
    script.write_text(_max_depth_script(limit, depth, False))
    plain = run_python([str(script)])
    assert plain.returncode == 0 and plain.stdout.strip() == str(depth), plain.stderr
    script.write_text(_max_depth_script(limit, depth, True))
    hooked = run_python([str(script)])
    assert hooked.returncode == 0, hooked.stderr
    assert hooked.stdout.strip() == str(depth)


def test_recursion_under_the_hook_in_process():
    stagepy.enable()
    try:
        rec = define("def rec(n):\n    return 0 if n == 0 else 1 + rec(n - 1)\n", "rec")
        depth = sys.getrecursionlimit() - 60
        assert rec(depth) == depth
    finally:
        stagepy.disable()


def test_enable_disable_idempotent_and_context_manager():
    assert not stagepy.enabled()
    with stagepy.enable() as on:
        assert on and stagepy.enabled()
        stagepy.enable()  # nested enable is a no-op
        assert stagepy.enabled()
    assert not stagepy.enabled()
    stagepy.disable()
    stagepy.disable()
    assert not stagepy.enabled()


def test_inner_context_manager_does_not_disable_outer():
    stagepy.enable()
    try:
        with stagepy.enable():
            pass
        assert stagepy.enabled()
    finally:
        stagepy.disable()


def test_unsupported_version_warns_and_does_nothing(monkeypatch):
    monkeypatch.setattr(sys, "version_info", (3, 11, 2, "final", 0))
    with pytest.warns(RuntimeWarning, match="3.11.4 or newer"):
        on = stagepy.enable()
    assert not on and not stagepy.enabled()


def test_unsupported_interpreter_imports_and_warns():
    exe = os.path.expanduser("~/.pyenv/versions/3.10.13/bin/python")
    if not os.path.exists(exe):
        pytest.skip("no CPython 3.10 here")
    import subprocess
    pkg_dir = os.path.dirname(os.path.dirname(stagepy.__file__))
    r = subprocess.run([exe, "-W", "always", "-c", "import stagepy; print(bool(stagepy.enable()))"],
                       capture_output=True, text=True, env={"PYTHONPATH": pkg_dir, "PATH": os.environ["PATH"]})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "False\n"
    assert "stagepy is not enabled" in r.stderr


def test_chains_to_a_hook_installed_before():
    core._testing_foreign_hook_install()
    try:
        before = core._testing_foreign_hook_frames()
        with stagepy.enable():
            f = define("def f():\n    return 1\n", "f")
            assert f() == 1
            assert core.hook_stats()["chained"]
        assert core._testing_foreign_hook_frames() > before
    finally:
        core._testing_foreign_hook_uninstall()


def test_detects_a_hook_installed_after():
    stagepy.enable()
    core._testing_foreign_hook_install()
    try:
        stagepy.disable()  # must not remove the foreign hook
        assert core.hook_stats()["foreign_hook_after"]
        before = core._testing_foreign_hook_frames()
        define("def f():\n    return 1\n", "f")()
        assert core._testing_foreign_hook_frames() > before
    finally:
        core._testing_foreign_hook_uninstall()
        stagepy.disable()


def test_steps_aside_when_quiet_and_rearms_for_new_code(replacing):
    # (`*rest`: not inlined where an earlier test's sweep rewrote this test's loop: its calls
    # are frames the hook sees.)
    f = define("def f(x, *rest):\n    return x\n", "f")
    core.set_quiet_threshold(50)
    try:
        for i in range(200):
            f(i)
        assert not core.armed(), "the hook should step aside once every frame is decided"
        # New code appears: compile() re-arms the hook, which catches the first call.
        g = define("def g(x):\n    return x + 1\n", "g")
        replacing[g.__code__] = code_of("def g(x):\n    return x + 1000\n", "g")
        assert core.armed()
        assert g(1) == 1001
    finally:
        core.set_quiet_threshold(2000)


def test_sweep_retargets_functions_created_before_enable():
    src = "def f(n):\n    t = 0\n    for i in range(n):\n        t += i\n    return t\n"
    f = define(src, "f")
    repl = code_of("def f(n):\n    return -1\n", "f")
    table = {f.__code__: repl}
    try:
        from stagepy import _sweep
        stagepy.enable()
        core.set_resolver(lambda c: table.get(c), prefilter=False)
        _sweep.sweep()
        assert f.__code__ is repl
        assert f(10) == -1
    finally:
        stagepy.disable()
        from stagepy import _resolve
        core.set_resolver(_resolve.resolve)


def test_default_resolver_replaces_nested_constants():
    # A module whose function has a candidate loop: the module's replacement carries the
    # function's decided code, so functions it creates need no hook.
    with stagepy.enable():
        code = compile_module("def f(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n")
        ns = {}
        exec(code, ns)
        assert ns["f"](5) == 10
        assert core.decision(code) != "undecided"
        assert core.decision(ns["f"].__code__) != "undecided"


STEP_ASIDE_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import stagepy
    if len(sys.argv) > 1:
        stagepy.enable()          # the module's own frame runs its original code

    def total(a):
        s = 0
        for i in range(len(a)):
            s += a[i]
        return s

    a = np.arange(2000.0)
    out = 0
    for k in range(6000):         # stays in CPython (str), calls `total` each time
        out += total(a) + len(str(k))
    %s
    stats = stagepy.hook_stats()
    nests = [{k: r[k] for k in ("function", "calls", "native_calls")} for r in stagepy.report()]
    print(float(out), json.dumps({"armed": stats["armed"], "step_asides": stats["step_asides"], "nests": nests}))
""")


def _step_aside_run(tmp_path, tail=""):
    path = tmp_path / "script.py"
    path.write_text(STEP_ASIDE_SCRIPT % tail)
    plain = run_python([str(path)])
    on = run_python([str(path), "on"])
    assert plain.returncode == 0 and on.returncode == 0, (plain.stderr, on.stderr)
    assert on.stdout.split()[0] == plain.stdout.split()[0]
    import json
    stats = json.loads(on.stdout.split(None, 1)[1])
    return stats, stats["nests"]


def test_steps_aside_while_the_module_that_defined_the_functions_runs(tmp_path):
    # The module's frame, started before enable(), runs its original code, which holds the
    # original code of `total` (that has a replacement); but it is past the definition, so no
    # function can be made from that code again: the hook steps aside (on 3.11 until stop 63
    # it stayed, and every Python call paid for it) and `total` keeps running natively.
    stats, nests = _step_aside_run(tmp_path)
    assert stats["step_asides"] >= 1 and not stats["armed"], stats
    rec = [n for n in nests if n["function"] == "total"]
    assert rec and rec[0]["native_calls"] > 0.8 * rec[0]["calls"], rec


def test_stays_armed_where_a_running_frame_can_define_a_function_again(tmp_path):
    # A loop defining a function at each step, in a frame that runs its original code: on
    # 3.11 (no function watchers) each new function comes from the original code, so the
    # hook must stay to give it the replacement; every one of them runs natively.
    stats, nests = _step_aside_run(tmp_path, textwrap.dedent("""
    for k in range(3000):
        def again(a):
            s = 0
            for i in range(len(a)):
                s += a[i]
            return s
        out += again(a) + len(str(k))
        armed_in_loop = stagepy.hook_stats()["armed"]
    assert armed_in_loop or len(sys.argv) == 1 or sys.version_info >= (3, 12)  # (1: no stagepy)
    """))
    rec = [n for n in nests if n["function"] == "again"]
    assert rec and rec[0]["native_calls"] > 0.8 * rec[0]["calls"], rec
