# -*- Python -*-
#===- utils/lit_sanitizers.py - sanitizer options for gridjit's lit suites -===#
#
# Shared by test/lit.cfg.py and unittests/lit.cfg.py. For a build with
# GRIDJIT_SANITIZE (the asan and tsan presets, docs/Building.md,
# "Sanitizers") it adds the lit features `asan`, `ubsan`, `tsan` and sets
# the sanitizers' options in the tests' environment, which every program a
# test starts inherits:
#
# - every report is fatal and aborts (abort_on_error): a sanitized program
#   that reports an error dies of SIGABRT, which fails the test even where
#   the RUN line expects a failure (`not jit-run ...` accepts an exit code,
#   never a signal);
# - LeakSanitizer is on (detect_leaks=1): a leak fails the test;
# - ASan's own SIGSEGV handler gives way to one the program installs
#   (allow_user_segv_handler): the host runtime's handler turns a kernel's
#   memory fault into a launch error (LaunchOptions::CatchFaults,
#   test/Host/kernel-faults.kir) and passes other faults on to ASan's.
#
# Options already in the environment (ASAN_OPTIONS, ...) are appended to
# ours, and a sanitizer takes the last value of an option, so a developer
# can still change one for a run (e.g. ASAN_OPTIONS=detect_leaks=0).
#
#===----------------------------------------------------------------------===#

import os
import shutil
import subprocess

_COMMON = [
    "abort_on_error=1",
    "halt_on_error=1",
    "print_stacktrace=1",
    "disable_coredump=1",
]

_OPTIONS = {
    "address": {
        "ASAN_OPTIONS": _COMMON
        + [
            "detect_leaks=1",
            "allow_user_segv_handler=1",
            "check_initialization_order=1",
        ],
    },
    "undefined": {"UBSAN_OPTIONS": _COMMON},
    "thread": {
        # ignore_noninstrumented_modules: TSan's interceptors (memset,
        # memcpy, ...) ignore calls from code outside instrumented modules.
        # The JIT-compiled kernels are such code, and a kernel may race by
        # CUDA's rules (several blocks writing the same value to one
        # element, as test/NVPTX/grid-sync.kir's g_direct does through a
        # memset LLVM made of its stores): those are the kernel's races, not
        # gridjit's, and TSan reported them as gridjit's whenever two blocks
        # ran on two threads.
        "TSAN_OPTIONS": _COMMON + ["second_deadlock_stack=1", "ignore_noninstrumented_modules=1"],
    },
}

_FEATURES = {"address": "asan", "undefined": "ubsan", "thread": "tsan"}


def configure(config, lit_config):
    sanitizers = [s for s in config.gridjit_sanitize.split(";") if s]
    for s in sanitizers:
        if s in _FEATURES:
            config.available_features.add(_FEATURES[s])
        for var, opts in _OPTIONS.get(s, {}).items():
            given = os.environ.get(var, "")
            config.environment[var] = ":".join(opts + ([given] if given else []))
    # The flags a test adds when it compiles and links a program of its own
    # against libgridjit.so (test/CAPI): the same sanitizers, and for a C
    # program (%sanitize_cflags) the C++ parts of their runtimes and the
    # C++ library they use, which UBSan's vptr checks in libgridjit need.
    flags = cflags = ""
    if sanitizers:
        flags = "-fsanitize=%s" % ",".join(sanitizers)
        cflags = flags + " -fsanitize-link-c++-runtime -lstdc++"
    config.substitutions.append(("%sanitize_cflags", cflags))
    config.substitutions.append(("%sanitize_flags", flags))
    if sanitizers:
        # Symbolized reports name the file and line.
        symbolizer = shutil.which("llvm-symbolizer", path=config.llvm_tools_dir)
        if symbolizer:
            for s in ["ASAN", "LSAN", "UBSAN", "TSAN"]:
                config.environment[s + "_SYMBOLIZER_PATH"] = symbolizer


def outside_program_prefix(config):
    """A command prefix for a program gridjit did not build (the Python
    interpreter) that loads the sanitized libgridjit.so, or None when it
    cannot: the library's undefined references to the sanitizer runtime are
    met by preloading the shared runtime (ASan's, which carries UBSan's
    handlers too). Leak checking is off in such a process: CPython
    deliberately leaves its objects allocated at exit, so LSan would report
    the interpreter rather than gridjit (the C and C++ tests check
    gridjit's own leaks)."""
    sanitizers = [s for s in config.gridjit_sanitize.split(";") if s]
    if not sanitizers:
        return ""
    if "address" not in sanitizers or not set(sanitizers) <= {"address", "undefined"}:
        return None
    try:
        runtime = subprocess.run(
            [config.cxx_compiler, "-print-file-name=libclang_rt.asan-x86_64.so"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    if not os.path.isabs(runtime) or not os.path.exists(runtime):
        return None
    options = config.environment.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    return "env LD_PRELOAD=%s ASAN_OPTIONS=%s " % (runtime, options)
