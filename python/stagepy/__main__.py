"""python -m stagepy [-m module | script.py] [args...]: run a program with stagepy on
from its first line, as `python script.py` / `python -m module` would run it."""
import atexit
import os
import runpy
import sys

USAGE = "usage: python -m stagepy [-m module | script.py] [args...]"


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 2
    from . import _hook, _report
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        target, is_module, args = argv[1], True, argv[2:]
    else:
        target, is_module, args = argv[0], False, argv[1:]
    turned_on = _hook.enable()
    if turned_on and os.environ.get("STAGEPY_REPORT", "") not in ("", "0"):
        atexit.register(_report.write_at_exit)
    if is_module:
        # `python -m stagepy` already put the working directory first on sys.path,
        # as `python -m module` does; runpy replaces argv[0] with the module's path.
        sys.argv = [target] + args
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        sys.argv = [target] + args
        sys.path[0] = os.path.dirname(os.path.abspath(target))  # as `python script.py` does
        runpy.run_path(target, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
