#!/usr/bin/env bash
# Packs the headers the GPU machine lacks (LLVM 16, isl, libffi) into .device/headers.tar.xz,
# for scripts/device_build.sh to build stagepy there against that machine's own libraries
# (see docs/gpu.md). Run here, as root; .device/ is ignored by git and travels with the
# device tool's `carry`.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
if ! [ -d /usr/lib/llvm-16/include/llvm ] || ! [ -f /usr/include/isl/cpp.h ] || ! ls /usr/include/*/ffi.h >/dev/null 2>&1; then
  apt-get install -y -q llvm-16-dev libisl-dev libffi-dev >/dev/null
fi
grep -qx '/.device/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo '/.device/' >> .git/info/exclude; }
tmp="$(mktemp -d)"
mkdir -p "$tmp/hdr/llvm16" "$tmp/hdr/isl" "$tmp/hdr/ffi"
cp -rL /usr/lib/llvm-16/include/llvm /usr/lib/llvm-16/include/llvm-c "$tmp/hdr/llvm16/"
cp -rL /usr/include/isl "$tmp/hdr/isl/"
cp -L /usr/include/x86_64-linux-gnu/ffi.h /usr/include/x86_64-linux-gnu/ffitarget.h "$tmp/hdr/ffi/"
mkdir -p .device
tar -C "$tmp" -cJf .device/headers.tar.xz hdr
rm -rf "$tmp"
ls -l .device/headers.tar.xz
