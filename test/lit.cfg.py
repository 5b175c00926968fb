# -*- Python -*-
# lit configuration for gridjit's FileCheck suites. The build directory's
# lit.site.cfg.py (generated from lit.site.cfg.py.in) sets the paths, then
# loads this file.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "gridjit"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".kir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gridjit_obj_root, "test")

# Every FileCheck runs strict: captured variables do not leak between
# CHECK-LABEL blocks, and a misspelt prefix is an error, not a silent pass.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"
# Diagnostics must not depend on the terminal.
config.environment["TERM"] = "dumb"
# jit-run caches compiled kernels (docs/Cache.md): keep the suite's cache in
# the build tree, never in the user's home directory.
config.environment["GRIDJIT_CACHE_DIR"] = os.path.join(config.gridjit_obj_root, "test", "jit-cache")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.gridjit_tools_dir, append_path=True)

tools = ["jit-run", "FileCheck", "not", "count", "split-file"]
llvm_config.add_tool_substitutions(tools, [config.gridjit_tools_dir, config.llvm_tools_dir])

config.substitutions.append(("%examples", os.path.join(config.gridjit_src_root, "examples")))
config.substitutions.append(("%docs", os.path.join(config.gridjit_src_root, "docs")))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%gridjit_src", config.gridjit_src_root))

# clang-format-19 checks that every C++ file is formatted (test/Format);
# utils/setup.sh installs it.
_clang_format = shutil.which("clang-format-19") or shutil.which("clang-format", path=config.llvm_tools_dir)
if _clang_format:
    config.available_features.add("clang-format")
    config.substitutions.append(("%clang_format", _clang_format))

# ptxas from the CUDA toolkit, when there is one: every PTX test is then
# also assembled.
if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))

# libdevice, which the NVPTX target links for rsqrt exp exp2 log log2 log10
# sin cos tan tanh pow: found where the target looks for it
# ($CUDA_HOME/nvvm/libdevice, then /usr/local/cuda/nvvm/libdevice). CUDA_HOME
# is passed on to the tests so that jit-run looks in the same place.
_libdevice_paths = []
if os.environ.get("CUDA_HOME"):
    config.environment["CUDA_HOME"] = os.environ["CUDA_HOME"]
    _libdevice_paths.append(os.path.join(os.environ["CUDA_HOME"], "nvvm", "libdevice", "libdevice.10.bc"))
_libdevice_paths.append("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")
if any(os.path.exists(p) for p in _libdevice_paths):
    config.available_features.add("libdevice")
