#!/usr/bin/env bash
#===- utils/setup.sh - Install what gridjit needs, configure and build ---===#
#
# Usage: bash utils/setup.sh [PRESET]
#
# Installs the Debian packages the build and the tests need (only the
# missing ones; `apt-get update` runs only when something is missing),
# configures the CMake preset (default: release; `ci` when $CI is set, which
# adds -Werror) into its build directory, and builds what running a kernel
# needs: jit-run and libgridjit.so (for the C API and the Python package).
# The tests, benchmarks and fuzzers are built by `cmake --build BUILD_DIR`
# or, with the tests they serve, by `cmake --build BUILD_DIR --target
# check-gridjit`. Safe to run again.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

preset=${1:-}
if [ -z "$preset" ]; then
  if [ -n "${CI:-}" ]; then preset=ci; else preset=release; fi
fi

packages=(
  cmake ninja-build ccache python3
  # The Python package (python/) and its tests (test/Python) use NumPy
  # (python3-numpy, below); pip, setuptools and wheel install the package
  # offline, into a venv (python3-venv) or a directory, or build its wheel
  # (docs/Python.md, "Installing").
  python3-pip python3-setuptools python3-wheel python3-venv
  llvm-19-dev llvm-19-tools clang-19 libclang-rt-19-dev clang-format-19
  # utils/gpu-bundle.sh sets the bundle's RUNPATHs and compresses it
  # (test/Bundle unpacks a .tar.zst).
  patchelf xz-utils zstd
  libzstd-dev zlib1g-dev
  libgtest-dev libbenchmark-dev
  # test/CAPI/numba-coexistence.test: Debian's Numba (llvmlite, its own
  # LLVM) and gridjit in one Python process.
  python3-numba python3-numpy
  # test/Python/test_math.py: the exact values the math builtins are
  # measured against (docs/LangRef.md, "Accuracy").
  python3-mpmath
  # The remote cache tier's client, and the server its tests start.
  libhiredis-dev redis-server
  # bench-HostExecBench also runs its kernels through PoCL, the usual way
  # of running GPU-style kernels on a CPU, for comparison.
  pocl-opencl-icd ocl-icd-opencl-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
fi

case "$preset" in
  release|ci) build_dir=build ;;
  *) build_dir="build-$preset" ;;
esac

# Re-configure when the directory is new or was configured by another preset.
stamp="$build_dir/.gridjit-preset"
if [ ! -f "$build_dir/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$preset" ]; then
  cmake --preset "$preset" >/dev/null
  echo "$preset" > "$stamp"
fi
cmake --build "$build_dir" --target jit-run gridjit
