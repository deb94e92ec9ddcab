#!/usr/bin/env bash
# Installs everything stagepy's build, tests, demo and benchmarks need on a fresh
# Debian 12 machine: Debian packages (LLVM 19 for the build, LLVM 16 headers for the
# compile check the GPU machine needs, isl, libffi, GoogleTest, ccache, ninja) and, for
# each CPython found (3.11, 3.12, 3.13), the Python packages. Safe to run again.
#
#   scripts/setup.sh            # everything
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/pythons.sh"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

pkgs=(llvm-19-dev llvm-16-dev libisl-dev libffi-dev libgtest-dev libgmock-dev ccache ninja-build
      cmake zlib1g-dev libzstd-dev libxml2-dev libedit-dev pkg-config g++ libasan8 libubsan1)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

py_pkgs=(numpy pytest hypothesis scikit-build-core coverage numba)
for py in $(stagepy_pythons); do
  echo "setup: Python packages for $py"
  "$py" -m pip install -q --disable-pip-version-check "${py_pkgs[@]}"
done
