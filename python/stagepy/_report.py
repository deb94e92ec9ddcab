"""The report: in, the runtime's per-nest records; out, a list of dicts, a printed table,
or a JSON file (STAGEPY_REPORT=1 or STAGEPY_REPORT=path.json at exit)."""
import json
import os
import sys

from . import _hook


def report():
    c = _hook.core()
    if c is None or not hasattr(c, "nest_records"):
        return []
    return c.nest_records()


def print_report(file=None):
    file = file or sys.stderr
    rows = report()
    stats = {}
    c = _hook.core()
    if c is not None and c.HOOK_SUPPORTED:
        stats = c.hook_stats()
    print("stagepy report", file=file)
    if not rows:
        print("  no loop nests were seen", file=file)
    for r in rows:
        print(f"  {r}", file=file)
    if stats.get("errors"):
        print("  hook errors:", file=file)
        for e in stats["errors"]:
            print(f"    {e}", file=file)


def write_at_exit():
    """Registered at start-up when STAGEPY_REPORT is set."""
    target = os.environ.get("STAGEPY_REPORT", "")
    if target in ("", "0"):
        return
    if target.endswith(".json"):
        data = {"nests": report(), "hook": _hook.core().hook_stats() if _hook.core() else {}}
        with open(target, "w") as f:
            json.dump(data, f, indent=2, default=str)
    else:
        print_report(sys.stderr)
