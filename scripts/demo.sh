#!/usr/bin/env bash
# Sets everything up on a fresh machine, installs stagepy into python3, and runs the demo
# (examples/demo.py, a script that knows nothing of stagepy) twice: in plain CPython, then
# with STAGEPY=1 and the report printed at exit.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
source scripts/pythons.sh
scripts/setup.sh
py="${STAGEPY_DEMO_PYTHON:-$(stagepy_pythons | cut -d' ' -f1)}"
export CCACHE_DIR="${CCACHE_DIR:-$repo/build/ccache}" CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=1 CMAKE_GENERATOR=Ninja
"$py" -m pip install -q --disable-pip-version-check --no-build-isolation .
cd examples
echo "== plain CPython ($("$py" --version))"
"$py" demo.py
echo
echo "== STAGEPY=1 STAGEPY_REPORT=1"
STAGEPY=1 STAGEPY_REPORT=1 "$py" demo.py
