#!/usr/bin/env bash
#===- utils/gpu-suite.sh - Run the GPU suite from an unpacked GPU bundle -===#
#
# Usage: gridjit-gpu-bundle/gpu-suite.sh [--host-only] [--device N] [-j N] [--host-timeout S]
#                                        [--only REGEX] [-v]
#
# Runs every example and every runnable test kernel with jit-run
# --target=cuda and compares the results with the host target's, then the
# GPU-only checks (docs/CUDA.md, "The GPU bundle and suite"). Needs only the
# bundle, Python 3 (standard library) and the NVIDIA driver. The last line
# is `N passed, N failed`. Exit status: 0 all passed, 1 a check failed,
# 2 misuse, 3 no CUDA device (nothing ran; the reason is printed).
# From a source tree: utils/gpu-suite.sh --root . --jit-run build/bin/jit-run
#
#===----------------------------------------------------------------------===#
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=$(command -v python3 || true)
if [ -z "$python" ]; then
  echo "gpu-suite: error: python3 not found" >&2
  exit 2
fi
exec "$python" "$here/gpu_suite.py" "$@"
