# -*- Python -*-
# lit runs the GoogleTest binary (every executable ending in "Tests" in the
# build's unittests/ directory) as part of check-gridjit.

import os
import sys

import lit.formats

config.name = "gridjit-unit"
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = os.path.join(config.gridjit_obj_root, "unittests")
config.test_exec_root = config.test_source_root

# Under a sanitizer (GRIDJIT_SANITIZE) the same options as test/ (abort on
# every report, leak checking): utils/lit_sanitizers.py.
sys.path.insert(0, os.path.join(config.gridjit_src_root, "utils"))
import lit_sanitizers

lit_sanitizers.configure(config, lit_config)

# `--param gtest_filter=PATTERN` runs only the GoogleTest tests PATTERN
# selects (GoogleTest's --gtest_filter syntax); check-gridjit-tsan uses it.
_filter = lit_config.params.get("gtest_filter")
if _filter:
    config.environment["GTEST_FILTER"] = _filter
