#!/usr/bin/env bash
#===- utils/gpu-bundle.sh - Package jit-run and the GPU suite for a GPU box -===#
#
# Usage: utils/gpu-bundle.sh [--with-bench] [--with-python] [BUILD_DIR] [OUT]
#
# Makes OUT (default: BUILD_DIR/gridjit-gpu-bundle.tar.xz; a name ending in
# .tar.zst is compressed with zstd instead) from a built BUILD_DIR (default:
# build): a self-contained package of jit-run and the GPU suite, to be
# carried to a machine that has only glibc, libstdc++, Python 3 and the
# NVIDIA driver (docs/CUDA.md, "The GPU bundle and suite"). It holds, under
# one top directory gridjit-gpu-bundle/:
#
#   bin/jit-run                 stripped, RUNPATH $ORIGIN/../lib (gridjit
#                               and LLVM are linked into it statically)
#   bin/bench-CudaBench         with --with-bench: the GPU benchmark
#                               (benchmarks/CudaBench.cpp; LLVM inside it
#                               too, so it about doubles the bundle), its
#                               shared dependencies in lib/, and the CUDA
#                               C++ peers it compiles, benchmarks/*.cu
#   lib/libgridjit.so python/gridjit/ benchmarks/peers/
#                               with --with-python: the library and the
#                               Python package over it, and the scripts
#                               that measure it against Numba-CUDA, CuPy
#                               and Triton (benchmarks/peers/run.py)
#   lib/libz.so.1 libzstd.so.1 libz3.so.4 libhiredis.so.0.14
#                               jit-run's shared dependencies outside
#                               glibc/libstdc++/libgcc (LLVM's, hiredis), copied from
#                               this machine and stripped
#   nvvm/libdevice/             libdevice, when the build machine has it
#                               (f64 math on --target=cuda; CUDA_HOME)
#   examples/ test/             every .kir file, the tests' expected-value
#                               scripts (test/Host/Inputs) and the tests
#                               whose commands the suite reuses
#   docs/CUDA.md                the suite reads its tolerance table here
#   gpu-suite.sh gpu_suite.py   the suite (utils/gpu-suite.sh) and its list
#   gpu-suite-order-dependent.txt of kernels undefined under its launch
#   MANIFEST                    what went in, and the ldd closure checked
#
# The closure is checked with ldd (and readelf): the script fails if jit-run
# or a bundled library needs a library that is neither bundled nor part of
# glibc, libstdc++ or libgcc. Needs patchelf (utils/setup.sh installs it).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

src=$(cd -P "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
with_bench=0
with_python=0
while [ $# -gt 0 ]; do
  case "$1" in
    --with-bench) with_bench=1 ;;
    --with-python) with_python=1 ;;
    *) break ;;
  esac
  shift
done
build=$(cd "${1:-$src/build}" && pwd)
out=${2:-$build/gridjit-gpu-bundle.tar.xz}

die() { echo "gpu-bundle: error: $*" >&2; exit 1; }

for tool in patchelf ldd readelf tar; do
  command -v "$tool" >/dev/null || die "$tool not found (utils/setup.sh installs what is needed)"
done
strip_tool=$(command -v llvm-strip-19 || command -v strip) || die "no strip tool (llvm-strip-19 or strip)"
[ -x "$build/bin/jit-run" ] || die "$build/bin/jit-run not found: build first"

# The libraries every Linux machine with a C++ runtime has; anything else
# that is needed must be in the bundle.
system_re='^(linux-vdso|ld-linux[-a-z0-9_]*|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.so'

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/gridjit-gpu-bundle
mkdir -p "$root/bin" "$root/lib"

cp "$build/bin/jit-run" "$root/bin/jit-run"
bins=("$root/bin/jit-run")
deps_of=("$build/bin/jit-run")
if [ "$with_bench" = 1 ]; then
  [ -x "$build/bin/bench-CudaBench" ] || die "$build/bin/bench-CudaBench not found: build first"
  cp "$build/bin/bench-CudaBench" "$root/bin/bench-CudaBench"
  bins+=("$root/bin/bench-CudaBench")
  deps_of+=("$build/bin/bench-CudaBench")
  mkdir -p "$root/benchmarks"
  cp "$src"/benchmarks/*.cu "$root/benchmarks/"
fi
if [ "$with_python" = 1 ]; then
  [ -f "$build/lib/libgridjit.so" ] || die "$build/lib/libgridjit.so not found: build first"
  cp "$build/lib/libgridjit.so" "$root/lib/libgridjit.so"
  deps_of+=("$build/lib/libgridjit.so")
  mkdir -p "$root/python" "$root/benchmarks/peers"
  cp -r "$src/python/gridjit" "$root/python/"
  rm -rf "$root/python/gridjit/__pycache__"
  cp "$src"/benchmarks/peers/*.py "$root/benchmarks/peers/"
fi

# The binaries' shared dependencies (zlib, zstd, z3 through LLVM; the
# benchmark library), resolved where this machine's loader finds them.
for who in "${deps_of[@]}"; do
  while read -r name arrow path rest; do
    [ "$arrow" = "=>" ] || continue
    if [[ "$name" =~ $system_re ]]; then continue; fi
    [ -f "$path" ] || die "ldd cannot resolve $name for $who"
    cp -L "$path" "$root/lib/$name"
  done < <(ldd "$who")
done

for f in "${bins[@]}" "$root"/lib/*.so*; do
  chmod u+w "$f"
  "$strip_tool" --strip-all "$f"
done
for f in "${bins[@]}"; do patchelf --set-rpath '$ORIGIN/../lib' "$f"; done
for f in "$root"/lib/*.so*; do patchelf --set-rpath '$ORIGIN' "$f"; done

# The closure: with a clean environment, everything jit-run and the bundled
# libraries need resolves inside the bundle or to a system library.
closure=$work/closure.txt
for f in "${bins[@]}" "$root"/lib/*.so*; do
  env -i ldd "$f" | sed "s|^|$(basename "$f"): |"
done > "$closure"
if grep -q 'not found' "$closure"; then
  cat "$closure" >&2
  die "a dependency is not found"
fi
while read -r who name arrow path rest; do
  [ "$arrow" = "=>" ] || continue
  if [[ "$name" =~ $system_re ]]; then continue; fi
  case "$(realpath -m "$path")" in
    "$root"/lib/*) ;;
    *) die "$who needs $name from $path, outside the bundle" ;;
  esac
done < "$closure"

# libdevice, for f64 math on --target=cuda (docs/Targets.md): the suite sets
# CUDA_HOME to the bundle.
for d in "${CUDA_HOME:-}" /usr/local/cuda; do
  if [ -n "$d" ] && [ -f "$d/nvvm/libdevice/libdevice.10.bc" ]; then
    mkdir -p "$root/nvvm/libdevice"
    cp "$d/nvvm/libdevice/libdevice.10.bc" "$root/nvvm/libdevice/"
    break
  fi
done

# The test inputs: every .kir file (the suite picks the runnable kernels the
# way test/Host/all-test-kernels.test does), the tests it reads commands
# from, the expected-value scripts, and the tolerance table.
(cd "$src" && find examples test -name '*.kir' -print0 |
   xargs -0 cp --parents -t "$root")
(cd "$src" && cp --parents -t "$root" test/Host/examples.test test/Host/all-test-kernels.test \
   test/Host/Inputs/*.py docs/CUDA.md)
cp "$src/utils/gpu-suite.sh" "$src/utils/gpu_suite.py" "$src/utils/gpu-suite-order-dependent.txt" "$root/"

{
  echo "gridjit GPU bundle"
  echo "source: $(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
  echo "jit-run: $("$root/bin/jit-run" --version 2>&1 | tr '\n' ' ')"
  # The newest symbol versions used: the GPU machine's glibc and libstdc++
  # must be at least these.
  if command -v objdump >/dev/null; then
    echo "needs: $(for f in "${bins[@]}" "$root"/lib/*.so*; do objdump -T "$f"; done |
      grep -o -E '(GLIBC|GLIBCXX|CXXABI)_[0-9.]+' | sort -u -V |
      awk -F_ '{m[$1] = $0} END {for (k in m) printf "%s ", m[k]}')"
  fi
  echo
  echo "ldd closure (outside glibc/libstdc++/libgcc everything is in lib/):"
  sed "s|$root|<bundle>|g" "$closure"
} > "$root/MANIFEST"

mkdir -p "$(dirname "$out")"
case "$out" in
  *.tar.zst) tar -C "$work" -cf - gridjit-gpu-bundle |
      zstd -q -T2 "-${GRIDJIT_BUNDLE_ZSTD_LEVEL:-6}" -f -o "$out" ;;
  # A 192 MiB dictionary spans the whole bundle, so that the copies of
  # LLVM in jit-run, bench-CudaBench and libgridjit.so are stored about
  # once (with --with-bench: 22 MB instead of 33 MB; it needs about 2 GiB
  # of memory to compress, 192 MiB to unpack).
  *.tar.xz) tar -C "$work" -cf - gridjit-gpu-bundle | xz -T2 --lzma2=preset=6,dict=192MiB > "$out" ;;
  *) die "OUT must end in .tar.xz or .tar.zst: $out" ;;
esac
echo "gpu-bundle: $out ($(stat -c %s "$out") bytes)"
