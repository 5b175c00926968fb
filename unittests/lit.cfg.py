# -*- Python -*-
# lit runs the GoogleTest binary (every executable ending in "Tests" in the
# build's unittests/ directory) as part of check-gridjit.

import os

import lit.formats

config.name = "gridjit-unit"
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = os.path.join(config.gridjit_obj_root, "unittests")
config.test_exec_root = config.test_source_root
