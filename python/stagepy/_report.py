"""The report: in, the runtime's per-nest records; out, a list of dicts (report()), a table
(print_report(), STAGEPY_REPORT=1 at exit, on stderr) or a JSON file
(STAGEPY_REPORT=path.json). The schema is in docs/report.md."""
import json
import os
import sys

from . import _hook


def report(include_library=True):
    """One dict per loop nest that ran (see docs/report.md)."""
    c = _hook.core()
    if c is None or not hasattr(c, "nest_records"):
        return []
    rows = c.nest_records()
    if not include_library:
        rows = [r for r in rows if r["user"] or r["native_calls"]]
    return rows


def _where(r):
    return f"{os.path.basename(r['file'])}:{r['line']}"


def _fmt_time(t):
    if not t:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.0f} us"
    if t < 1:
        return f"{t * 1e3:.1f} ms"
    return f"{t:.2f} s"


def _notes(r):
    """The reason a nest is not (always) native, then what each loop did on threads."""
    notes = [r["reason"]] if r["reason"] else []
    if r["native_calls"]:
        if r.get("convert_s"):
            notes.append(f"lists read and written back in {_fmt_time(r['convert_s'])}")
        for l in r.get("loops", []):
            g = l.get("gpu")
            if g and g["launches"]:
                notes.append(f"`{l['variable']}` (line {l['line']}) on the GPU: {g['launches']} launches, "
                             f"{_fmt_time(g['gpu_s'])} with copies (estimated {_fmt_time(g['estimate_gpu_s'])} "
                             f"vs {_fmt_time(g['estimate_cpu_s'])} on the CPU)")
                if g["cpu_runs"]:
                    notes.append(f"{g['cpu_runs']} runs on the CPU: {g['why_cpu']}")
            elif g and (g["why_cpu"]):
                notes.append(f"`{l['variable']}` (line {l['line']}) not on the GPU: {g['why_cpu']}")
            if l.get("interchanged"):
                notes.append(f"`{l['variable']}` (line {l['line']}) runs inside its inner loop")
            if l.get("interleaved"):
                notes.append(f"`{l['variable']}` (line {l['line']}) {l['interleaved']} iterations at a time")
            # The call's values decide some loops (`A[i] = A[i + d]`): the latest call's, and
            # when iterations conflict.
            decided, when = l.get("decided_with", ""), l.get("carried_when", "")
            if l["why"] and not l["why"].startswith("one thread") and not l["parallel"]:
                note = f"`{l['variable']}` (line {l['line']}) sequential: {l['why']}"
                if decided and when:
                    note += f" ({decided}; its iterations conflict when {when})"
                if l["parallel_runs"]:
                    note += f"; parallel in {l['parallel_runs']} earlier run(s)"
                notes.append(note)
            elif l["parallel_runs"]:
                how = {"blocks": " (a block of iterations per thread)", "chunks": " (chunks dealt round-robin)",
                       "in order": " (contiguous runs, combined in order)"}.get(l.get("schedule"), "")
                because = f" because {decided}" if decided and l["parallel"] else ""
                summed = ", ".join(f"`{v}`" for v in l["summed"].split(", ")) if l.get("summed") else ""
                if summed:
                    summed = f", summing into {summed} in a copy per thread"
                notes.append(f"`{l['variable']}` (line {l['line']}) parallel{how}{because}{summed}")
    return "; ".join(notes)


def format_table(rows):
    native = [r for r in rows if r["native_calls"]]
    lines = [f"stagepy report: {len(rows)} loop nest(s), {len(native)} ran natively"]
    header = ("where", "function", "status", "calls", "native", "compile", "native time", "reason / loops")
    table = [header]
    for r in sorted(rows, key=lambda r: (r["file"], r["line"])):
        status = r["status"] if r["native_calls"] else "interpreted"
        if r["native_calls"] and r.get("threads", 1) > 1:
            status += f" x{r['threads']}"
        table.append((_where(r), r["function"], status, str(r["calls"]), str(r["native_calls"]),
                      _fmt_time(r["compile_s"]), _fmt_time(r["native_s"]), _notes(r)))
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        cells = [row[i].ljust(widths[i]) if i in (0, 1, 2) else row[i].rjust(widths[i]) for i in range(len(widths))]
        lines.append("  " + "  ".join(cells) + "  " + row[-1])
    return "\n".join(lines)


def print_report(file=None, include_library=False):
    file = file or sys.stderr
    rows = report(include_library=include_library)
    if not rows:
        print("stagepy report: no loop nests ran", file=file)
    else:
        print(format_table(rows), file=file)
    c = _hook.core()
    dropped = c.nest_records_dropped() if c is not None and hasattr(c, "nest_records_dropped") else 0
    if dropped:
        print(f"  (and {dropped} earlier nest(s) of code objects that no longer exist, not kept)", file=file)
    stats = c.hook_stats() if c is not None and c.HOOK_SUPPORTED else {}
    if stats.get("errors"):
        print("  hook errors:", file=file)
        for e in stats["errors"]:
            print(f"    {e}", file=file)


def write_at_exit():
    """Registered at start-up when STAGEPY_REPORT is set."""
    target = os.environ.get("STAGEPY_REPORT", "")
    if target in ("", "0"):
        return
    include_library = os.environ.get("STAGEPY_REPORT_ALL", "") not in ("", "0")
    if target.endswith(".json"):
        c = _hook.core()
        data = {"nests": report(include_library=include_library),
                "hook": c.hook_stats() if c is not None and c.HOOK_SUPPORTED else {}}
        with open(target, "w") as f:
            json.dump(data, f, indent=2, default=str)
    else:
        print_report(sys.stderr, include_library=include_library)
