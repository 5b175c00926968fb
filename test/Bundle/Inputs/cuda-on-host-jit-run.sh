#!/usr/bin/env bash
# A jit-run whose "GPU" is the host: runs the real jit-run ($REAL_JIT_RUN)
# without --target=cuda and --device N, so that gpu-suite.sh's default
# (cuda against host) path can run where no kernel can run on a device.
args=()
skip=0
for a in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  case "$a" in
    --target=cuda) ;;
    --device) skip=1 ;;
    *) args+=("$a") ;;
  esac
done
exec "$REAL_JIT_RUN" "${args[@]}"
