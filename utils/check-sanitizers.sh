#!/usr/bin/env bash
#===- utils/check-sanitizers.sh - The test suite under the sanitizers ----===#
#
# Usage: bash utils/check-sanitizers.sh [asan] [tsan]   (default: both)
#
#   asan  configures the `asan` preset (AddressSanitizer, LeakSanitizer and
#         UndefinedBehaviorSanitizer) into build-asan/, builds what the
#         suite needs and runs the whole suite (check-gridjit);
#   tsan  configures the `tsan` preset (ThreadSanitizer) into build-tsan/,
#         builds what the subset needs and runs the concurrency, cache and
#         runtime tests (check-gridjit-tsan, test/CMakeLists.txt).
#
# Every sanitizer report fails its test (utils/lit_sanitizers.py). Run it
# after utils/setup.sh, which installs the packages (clang-19's sanitizer
# runtimes come with libclang-rt-19-dev). docs/Building.md, "Sanitizers".
#
#===----------------------------------------------------------------------===#
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=("$@")
if [ "${#runs[@]}" -eq 0 ]; then
  runs=(asan tsan)
fi

for run in "${runs[@]}"; do
  case "$run" in
  asan) dir=build-asan target=check-gridjit ;;
  tsan) dir=build-tsan target=check-gridjit-tsan ;;
  *)
    echo "check-sanitizers.sh: unknown run '$run' (asan or tsan)" >&2
    exit 2
    ;;
  esac
  echo "== $run: $target in $dir"
  # The preset is applied again each time: it is quick, and an existing
  # build directory then follows the preset's current settings.
  cmake --preset "$run" >/dev/null
  cmake --build "$dir" --target "$target"
done
