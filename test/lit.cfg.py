# -*- Python -*-
# lit configuration for gridjit's FileCheck suites. The build directory's
# lit.site.cfg.py (generated from lit.site.cfg.py.in) sets the paths, then
# loads this file.

import os
import re
import shutil
import subprocess
import sys

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

# llc: LLVM's own view of the host CPU (test/Driver/version.test).
tools = ["jit-run", "gridjit-capi-test", "FileCheck", "not", "count", "split-file", "llc"]
llvm_config.add_tool_substitutions(tools, [config.gridjit_tools_dir, config.llvm_tools_dir])

config.substitutions.append(("%examples", os.path.join(config.gridjit_src_root, "examples")))
config.substitutions.append(("%docs", os.path.join(config.gridjit_src_root, "docs")))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%gridjit_src", config.gridjit_src_root))
# The build directory (test/Bundle packs it).
config.substitutions.append(("%gridjit_obj", config.gridjit_obj_root))
# The C++ compiler of the build and LLVM's headers (test/Layering).
config.substitutions.append(("%cxx", config.cxx_compiler))
# The C compiler of the build (test/CAPI compiles the docs' C examples).
config.substitutions.append(("%cc", config.c_compiler))
config.substitutions.append(("%llvm_include", config.llvm_include_dir))
# LLVM's libraries (test/CAPI links a program against LLVMSupport).
config.substitutions.append(("%llvm_libdir", os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")))
# The fake CUDA driver libraries (unittests/FakeCuda/FakeCuda.cpp), for
# GRIDJIT_CUDA_DRIVER.
config.substitutions.append(("%fake_cuda_nolaunch", os.path.join(config.fake_cuda_dir, "libgridjit-fake-cuda-nolaunch.so")))
config.substitutions.append(("%fake_cuda", os.path.join(config.fake_cuda_dir, "libgridjit-fake-cuda.so")))

# The benchmark programs are built (GRIDJIT_BUILD_BENCHMARKS; the sanitizer
# presets turn them off).
if config.gridjit_benchmarks.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("benchmarks")

# A sanitized build (GRIDJIT_SANITIZE): libgridjit.so needs the sanitizer
# runtimes, which only the build's own programs link: a program a test
# compiles is linked with them (%sanitize_flags, %sanitize_cflags), and
# Python gets ASan's shared runtime preloaded. The sanitizer options
# (utils/lit_sanitizers.py) go into the environment of every RUN line, so
# the programs a test starts, and theirs, get them too; a sanitizer report
# aborts the program, which fails the test even under `not`. Features:
# `sanitizer` (any), `asan`, `ubsan`, `tsan`.
if config.gridjit_sanitize:
    config.available_features.add("sanitizer")
sys.path.insert(0, os.path.join(config.gridjit_src_root, "utils"))
import lit_sanitizers

lit_sanitizers.configure(config, lit_config)

# A sanitized build's frames are larger (ASan's redzones, TSan's shadow
# stack): a test that bounds the stack with `ulimit -s N` for work that
# needs a measured amount of it gives `$((N * %stack_factor))`
# (test/Host/deep-chains.test's chain at the inlining limit needs 2 MiB in
# release, 4 MiB under ASan).
config.substitutions.append(("%stack_factor", "4" if config.gridjit_sanitize else "1"))

# The libFuzzer targets (GRIDJIT_FUZZERS=ON, `cmake --preset asan`;
# docs/Fuzzing.md): test/Fuzz runs each for 60 seconds on its seed corpus
# (made at build time in the build tree) and the inputs of
# fuzz/regressions/ once. They are on PATH with jit-run.
_fuzzers = ["fuzz-kir", "fuzz-kir-diff", "fuzz-cache-entry", "fuzz-npy", "fuzz-capi", "fuzz-redis-reply"]
if config.gridjit_fuzzers.upper() in ("ON", "1", "TRUE", "YES") and all(
    os.path.exists(os.path.join(config.gridjit_tools_dir, f)) for f in _fuzzers
):
    config.available_features.add("fuzzer")
    config.substitutions.append(("%fuzz_corpus", os.path.join(config.gridjit_obj_root, "fuzz", "corpus")))
    config.substitutions.append(("%fuzz_src", os.path.join(config.gridjit_src_root, "fuzz")))

# A Python that can import Debian's python3-numba (utils/setup.sh installs
# it; a pyenv or venv Python usually cannot see it): test/CAPI runs Numba
# and gridjit in one process with it. In a sanitized build the interpreter
# gets the sanitizer runtime preloaded (utils/lit_sanitizers.py), or, where
# that cannot be done (TSan), the test does not run.
_outside_prefix = lit_sanitizers.outside_program_prefix(config)
for _py in [config.python_executable, "/usr/bin/python3"]:
    if _outside_prefix is None:
        break
    if _py and os.path.exists(_py) and subprocess.run(
        [_py, "-c", "import numba, numpy"], capture_output=True
    ).returncode == 0:
        config.available_features.add("numba")
        config.substitutions.append(("%numba_python", _outside_prefix + _py))
        break

# clang-format-19 checks that every C++ file is formatted (test/Format);
# utils/setup.sh installs it.
_clang_format = shutil.which("clang-format-19") or shutil.which("clang-format", path=config.llvm_tools_dir)
if _clang_format:
    config.available_features.add("clang-format")
    config.substitutions.append(("%clang_format", _clang_format))

# redis-server, for the remote cache tests (test/Cache/remote-*.test);
# utils/setup.sh installs it.
if shutil.which("redis-server"):
    config.available_features.add("redis")

# A small tmpfs can be mounted (root, and a kernel that lets this process
# mount): test/Fault fills one to emulate a full disk and remounts one
# read-only. Elsewhere those tests are UNSUPPORTED.
def _can_mount_tmpfs():
    import tempfile
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("mount"):
        return False
    d = tempfile.mkdtemp(prefix="gridjit-lit-mount-")
    try:
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d],
                          capture_output=True).returncode != 0:
            return False
        subprocess.run(["umount", d], capture_output=True)
        return True
    finally:
        try:
            os.rmdir(d)
        except OSError:
            pass


if _can_mount_tmpfs():
    config.available_features.add("tmpfs-mount")

# ptxas from the CUDA toolkit, when there is one: every PTX test is then
# also assembled.
if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))

# What this build of jit-run can do on this machine (host-jit, nvptx,
# libdevice, ...): asked once, from jit-run itself (`--print-features`,
# docs/jit-run.md), so that the tests and jit-run agree, e.g. on where
# libdevice is. CUDA_HOME, where the NVPTX target looks for libdevice, is
# passed on to the tests and to this question alike.
if os.environ.get("CUDA_HOME"):
    config.environment["CUDA_HOME"] = os.environ["CUDA_HOME"]
_jit_run = os.path.join(config.gridjit_tools_dir, "jit-run")
try:
    _features = subprocess.run(
        [_jit_run, "--print-features"], env=config.environment, capture_output=True, text=True, check=True
    ).stdout.split()
except (OSError, subprocess.CalledProcessError) as e:
    lit_config.fatal("cannot ask %s for its features: %s" % (_jit_run, e))
config.available_features.update(_features)
config.substitutions.append(("%{jit_features}", " ".join(_features)))
# `jit-run --check` (checked code, docs/Check.md): the HostIR tests of the
# checked code's instrumentation (test/HostIR/check-*.kir) need it.
try:
    _help = subprocess.run(
        [_jit_run, "--help"], env=config.environment, capture_output=True, text=True
    ).stdout
    if re.search(r"^\s*--check\b(?!-)", _help, re.MULTILINE):
        config.available_features.add("jit-run-check")
except OSError:
    pass

# The Python package (python/gridjit) and its tests (test/Python): a Python
# with NumPy runs them (Debian: python3-numpy, which utils/setup.sh
# installs), the interpreter CMake found or, when it lacks NumPy (a pyenv or
# virtualenv of its own), the system's. $GRIDJIT_TEST_PYTHON chooses one.
# The package is used from the source tree, with the build's library.
def _python_with(module, candidates):
    for exe in candidates:
        if exe and os.path.exists(exe) and subprocess.run(
            [exe, "-c", "import " + module], capture_output=True
        ).returncode == 0:
            return exe
    return None


_test_python = _python_with(
    "numpy",
    [os.environ.get("GRIDJIT_TEST_PYTHON"), config.python_executable, "/usr/bin/python3"],
)
# Under ASan the interpreter gets the shared sanitizer runtime preloaded
# (utils/lit_sanitizers.py); under TSan the Python tests do not run.
if _test_python and _outside_prefix is not None:
    config.available_features.add("python-numpy")
    config.substitutions.append(("%gridjit_python", _outside_prefix + _test_python))
config.environment["PYTHONPATH"] = os.path.join(config.gridjit_src_root, "python")
config.environment["GRIDJIT_LIBRARY"] = os.path.join(config.fake_cuda_dir, "libgridjit.so")
