"""Run from the installed stagepy-activate.pth when STAGEPY is set (not '' or '0'), before
the program's own code: turns stagepy on for the whole process, module code included."""
import atexit
import os

from . import _hook, _report

if _hook.enable():
    if os.environ.get("STAGEPY_REPORT", "") not in ("", "0"):
        atexit.register(_report.write_at_exit)
