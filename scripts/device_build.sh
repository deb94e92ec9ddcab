#!/usr/bin/env bash
# On the GPU machine (docs/gpu.md): builds stagepy's extension against that machine's
# Python 3.12, libLLVM-16, libisl and libffi, with the headers scripts/device_pack.sh
# carried in .device/. The extension lands in python/stagepy, so PYTHONPATH=python runs it.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
hdr=/tmp/stagepy-hdr
rm -rf "$hdr" && mkdir -p "$hdr" && tar -C "$hdr" -xJf .device/headers.tar.xz
lib=/usr/lib/x86_64-linux-gnu
py="${PYTHON:-python3}"
# The system compiler: its libstdc++ is the shared one libLLVM-16 uses. Another GCC on the
# PATH or in CXX (there is one under /opt) links its own libstdc++ statically, and the
# extension then carries a second C++ runtime whose iostreams crash (STAGEPY_DEBUG did).
cc=()
[ -x /usr/bin/g++ ] && cc=(-DCMAKE_C_COMPILER=/usr/bin/gcc -DCMAKE_CXX_COMPILER=/usr/bin/g++)
if [ -f build/device/CMakeCache.txt ] && ! grep -q "CMAKE_CXX_COMPILER:[A-Z]*=/usr/bin/g++" build/device/CMakeCache.txt; then
  rm -rf build/device
fi
cmake -S . -B build/device -G Ninja -DCMAKE_BUILD_TYPE=Release "${cc[@]}" \
  -DSTAGEPY_BUILD_TESTS=OFF -DPython_EXECUTABLE="$(command -v "$py")" \
  -DSTAGEPY_LLVM_INCLUDE_DIRS="$hdr/hdr/llvm16" -DSTAGEPY_LLVM_LIBRARY="$lib/libLLVM-16.so.1" \
  -DSTAGEPY_ISL_INCLUDE_DIR="$hdr/hdr/isl" -DSTAGEPY_ISL_LIBRARY="$lib/libisl.so.23" \
  -DSTAGEPY_FFI_INCLUDE_DIR="$hdr/hdr/ffi" -DSTAGEPY_FFI_LIBRARY="$lib/libffi.so.8" >/dev/null
cmake --build build/device -j "$(nproc)"
PYTHONPATH=python "$py" -c 'import stagepy, json; print(json.dumps(stagepy.gpu_info()))'
