#!/usr/bin/env bash
# A jit-run that gives a wrong answer on purpose: run as JIT_RUN, it runs
# the real jit-run ($REAL_JIT_RUN) with a grid of 1 block instead of 2
# whenever --threads 1 is given (the second run of gpu-suite.sh
# --host-only), so that the suite's comparison must find the difference.
args=("$@")
case " $* " in
  *" --threads 1 "*)
    for i in "${!args[@]}"; do
      if [ "$i" -gt 0 ] && [ "${args[$i]}" = 2 ] && [ "${args[$((i - 1))]}" = --grid ]; then
        args[$i]=1
      fi
    done ;;
esac
exec "$REAL_JIT_RUN" "${args[@]}"
