#!/usr/bin/env python3
"""The GPU suite (utils/gpu-suite.sh; docs/CUDA.md, "The GPU bundle and
suite"): runs every example and every runnable kernel of the test suite on
a CUDA device with `jit-run --target=cuda` and compares the results with
the host target's, plus the launch checks only a real GPU can make.

Usage: gpu_suite.py [--host-only] [--root DIR] [--jit-run PATH] [-j N]
                    [--only REGEX] [--device N] [--host-timeout S] [-v]

--root is the unpacked bundle (or a source tree; default: this script's
directory), with examples/, test/ and docs/CUDA.md; --jit-run defaults to
ROOT/bin/jit-run. --host-only runs no GPU: each example is checked against
the values its command in test/Host/examples.test expects, and each
runnable kernel is run twice on the host (the second time with one worker
thread) and the two results are compared as the GPU's would be; this
checks the suite itself where there is no GPU. --only REGEX keeps the
.kir files whose path (relative to ROOT) matches.

Exit status: 0 when every check passed, 1 when one failed, 2 on misuse,
3 when there is no CUDA device (jit-run --list-devices says why; the
suite then runs nothing). The last line printed is `N passed, N failed`.
Python 3 standard library only.
"""
import argparse
import array
import concurrent.futures
import importlib.util
import math
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile

NO_DEVICE = 3
MISUSE = 2
TIMEOUT = 120  # seconds for one jit-run; a hang is a failure
HOST_KERNEL_TIMEOUT = 20  # default seconds for one host kernel (jit-run --timeout, status 4)
# Kernels of the test suite that race under any launch of several threads
# (utils/gpu-suite-order-dependent.txt; the bundle has it at its top).
ORDER_DEPENDENT = "gpu-suite-order-dependent.txt"


def log(msg):
    print(msg, flush=True)


# --- tolerances ------------------------------------------------------------


def read_tolerances(cuda_md):
    """{function: (f32 ulps, f64 ulps)} from the table under "### Tolerances"
    in docs/CUDA.md: the one place the numbers are written."""
    table, inside = {}, False
    with open(cuda_md, encoding="utf-8") as f:
        for line in f:
            if line.startswith("### Tolerances"):
                inside = True
                continue
            if inside and line.startswith("#"):
                break
            m = re.match(r"^\|\s*([`\w ,+*/-]+?)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|", line) if inside else None
            if m:
                for name in re.findall(r"[\w+*/-]+", m.group(1).replace("`", " ")):
                    table[name] = (int(m.group(2)), int(m.group(3)))
    if "arithmetic" not in table:
        raise SystemExit("gpu-suite: error: no tolerance table (### Tolerances) in " + cuda_md)
    return table


def tolerance_for(source, table):
    """The largest tolerance of the math functions SOURCE calls (the
    'arithmetic' row when it calls none)."""
    f32, f64 = table["arithmetic"]
    for name, (u32, u64) in table.items():
        if re.match(r"^\w+$", name) and re.search(r"\b%s\s*\(" % re.escape(name), source):
            f32, f64 = max(f32, u32), max(f64, u64)
    return f32, f64


# --- .npy files and comparison -----------------------------------------------

_CODES = {"f4": "f", "f8": "d", "i1": "b", "u1": "B", "b1": "B", "i2": "h", "u2": "H",
          "i4": "i", "u4": "I", "i8": "q", "u8": "Q"}


def read_npy(path):
    """(kind, values) of a little-endian .npy file as jit-run --out writes it:
    kind is 'f4', 'f8' or 'int'."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError("%s is not a .npy file" % path)
    if data[6] == 1:
        (hlen,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (hlen,) = struct.unpack("<I", data[8:12])
        start = 12
    header = data[start:start + hlen].decode("latin1")
    descr = re.search(r"'descr':\s*'([<>|=]?)(\w+)'", header).group(2)
    values = array.array(_CODES[descr])
    if values.itemsize != int(descr[1:]):
        raise ValueError("no %d-byte array type for %s" % (int(descr[1:]), descr))
    values.frombytes(data[start + hlen:])
    if sys.byteorder != "little":
        values.byteswap()
    return (descr if descr[0] == "f" else "int"), list(values)


def ordered(x, single):
    if single:
        (i,) = struct.unpack("<i", struct.pack("<f", x))
    else:
        (i,) = struct.unpack("<q", struct.pack("<d", x))
    return i if i >= 0 else -(i & (2 ** (31 if single else 63) - 1))


def close(got, want, ulps, single):
    if got == want:
        return True
    if math.isnan(got) or math.isnan(want):
        return math.isnan(got) and math.isnan(want)
    if math.isinf(got) or math.isinf(want):
        return False
    return abs(ordered(got, single) - ordered(want, single)) <= ulps


def compare_buffer(name, kind, got, want, tol, unordered):
    """A list of mismatch descriptions (empty: equal within tolerance).
    Integers must be equal; floats within TOL ulps (f32, f64); with
    UNORDERED (the module uses atomics, whose returned values and float
    sums depend on the order threads run in), a buffer that differs
    element by element may instead be the same multiset."""
    if len(got) != len(want):
        return ["%s: %d elements, %d expected" % (name, len(got), len(want))]

    def diffs(g, w):
        out = []
        for i, (a, b) in enumerate(zip(g, w)):
            ok = a == b if kind == "int" else close(a, b, tol[0] if kind == "f4" else tol[1], kind == "f4")
            if not ok:
                out.append("%s[%d]: %r, host %r" % (name, i, a, b))
                if len(out) >= 5:
                    break
        return out

    bad = diffs(got, want)
    if bad and unordered:
        key = (lambda v: (math.isnan(v), v if not math.isnan(v) else 0)) if kind != "int" else None
        if not diffs(sorted(got, key=key), sorted(want, key=key)):
            return []
        bad.append("%s: not the same values in another order either" % name)
    return bad


# --- running jit-run ---------------------------------------------------------


class Runner:
    def __init__(self, jit_run, env):
        self.jit_run, self.env = jit_run, env

    def run(self, args, timeout=TIMEOUT):
        try:
            return subprocess.run([self.jit_run] + args, capture_output=True, text=True,
                                  env=self.env, timeout=timeout)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(args, "timeout", "", "timed out after %d s" % timeout)


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- the examples ----------------------------------------------------------


def example_commands(examples_test):
    """[(jit-run arguments, expect.py arguments)] from the RUN lines of
    test/Host/examples.test, with %examples left for the caller."""
    runs, joined, cur = [], [], ""
    with open(examples_test, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^// RUN:(.*)$", line)
            if not m:
                continue
            text = m.group(1).strip()
            if text.endswith("\\"):
                cur += text[:-1] + " "
                continue
            joined.append(cur + text)
            cur = ""
    for cmd in joined:
        words = shlex.split(cmd)
        if words and words[0] == "jit-run" and words[1].startswith("%examples/"):
            run = words[1:]
            for stop in ("|", ">"):
                if stop in run:
                    run = run[:run.index(stop)]
            clean, i = [], 0
            while i < len(run):
                if run[i] == "--out":
                    i += 2
                    continue
                clean.append(run[i])
                i += 1
            runs.append([clean, None])
        if "%S/Inputs/expect.py" in words and runs:
            i = words.index("%S/Inputs/expect.py")
            rest = words[i + 1:]
            for stop in ("|", "<", ">"):
                if stop in rest:
                    rest = rest[:rest.index(stop)]
            runs[-1][1] = rest
    return [(r, e) for r, e in runs]


def printed_buffers(stdout):
    """{name: [text values]} from jit-run --print lines."""
    out = {}
    for line in stdout.splitlines():
        m = re.match(r"^(\w+) = \[(.*)\]\s*$", line)
        if m:
            body = m.group(2).strip()
            out[m.group(1)] = [v.strip() for v in body.split(",")] if body else []
    return out


def parse_printed(values):
    res = []
    for v in values:
        if v in ("true", "false"):
            res.append(int(v == "true"))
        elif re.fullmatch(r"-?\d+", v):
            res.append(int(v))
        else:
            res.append(float(v))
    return res


# --- launch shapes -----------------------------------------------------------

# The builtins whose results need every lane of a warp (docs/LangRef.md:
# "Warp operations need every lane of the warp").
WARP_OPS = re.compile(r"\b(shfl|shfl_up|shfl_down|shfl_xor|vote_any|vote_all|ballot|sync_warp)\(")
BLOCK_IDS = re.compile(r"\b(block_idx|grid_dim)\b")


def bodies(canonical):
    """name -> text of every fn and kernel of a canonically printed module
    (each starts at column 0 and ends with a `}` alone on its line)."""
    return {m.group(2): m.group(0)
            for m in re.finditer(r"^(fn|kernel) (\w+)\(.*?^\}$", canonical, re.M | re.S)}


def uses(items, name, pattern):
    """Whether item NAME, or a function it calls (transitively), matches
    PATTERN."""
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n in seen or n not in items:
            continue
        seen.add(n)
        if pattern.search(items[n]):
            return True
        todo += [f for f in re.findall(r"\b(\w+)\(", items[n]) if f in items and f != n]
    return False


def launch_shape(items, kernel):
    """(grid, block) under which KERNEL's result is defined for the
    suite's arguments: 2 blocks of 4 threads, but full warps (32 threads)
    when it uses a warp operation, and one block when it never reads
    block_idx or grid_dim (a second block would repeat the first block's
    work on the same memory: a race between the two)."""
    block = 32 if uses(items, kernel, WARP_OPS) else 4
    grid = 2 if uses(items, kernel, BLOCK_IDS) else 1
    return grid, block


def read_order_dependent(path):
    """{"FILE:KERNEL": (mode, reason)} from the suite's list of kernels
    whose result depends on the order their threads run in (mode
    `one-thread`) or that are undefined whatever the launch (`undefined`)."""
    entries = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) != 3 or parts[1] not in ("one-thread", "undefined"):
                log("gpu-suite: error: %s:%d: expected 'FILE:KERNEL one-thread|undefined REASON'" % (path, n))
                sys.exit(MISUSE)
            entries[parts[0]] = (parts[1], parts[2])
    return entries


# --- the suite ---------------------------------------------------------------


class Suite:
    def __init__(self, opts):
        self.opts = opts
        self.root = os.path.abspath(opts.root)
        self.passed = self.failed = self.skipped = 0
        self.tmp = tempfile.mkdtemp(prefix="gridjit-gpu-suite-")
        env = dict(os.environ)
        env.setdefault("GRIDJIT_CACHE_DIR", os.path.join(self.tmp, "cache"))
        if os.path.isfile(os.path.join(self.root, "nvvm", "libdevice", "libdevice.10.bc")):
            env["CUDA_HOME"] = self.root  # the bundle's libdevice
        jit_run = opts.jit_run or os.path.join(self.root, "bin", "jit-run")
        if not opts.jit_run and not os.path.exists(jit_run):
            jit_run = os.path.join(self.root, "build", "bin", "jit-run")  # a source tree
        self.jit = Runner(jit_run, env)
        self.tolerances = read_tolerances(os.path.join(self.root, "docs", "CUDA.md"))
        self.host_only = opts.host_only
        self.cuda = [] if opts.host_only else ["--target=cuda"] + (
            ["--device", str(opts.device)] if opts.device is not None else [])

    def result(self, name, problems, detail=""):
        if problems:
            self.failed += 1
            log("FAIL: %s" % name)
            for p in problems[:12]:
                log("    " + p)
        else:
            self.passed += 1
            if self.opts.verbose:
                log("ok: %s%s" % (name, detail))

    def list_devices(self):
        r = self.jit.run(["--list-devices"])
        if r.returncode != 0:
            log("gpu-suite: jit-run --list-devices failed (status %s):\n%s" % (r.returncode, r.stderr))
            return False
        if r.stdout.startswith("no CUDA devices"):
            log("gpu-suite: %s: nothing was run" % r.stdout.strip())
            return None
        log(r.stdout.strip())
        return True

    # The examples: host against the expected values, the GPU against the
    # host.
    def examples(self):
        expect = os.path.join(self.root, "test", "Host", "Inputs", "expect.py")
        for args, expect_args in example_commands(os.path.join(self.root, "test", "Host", "examples.test")):
            args = [a.replace("%examples", os.path.join(self.root, "examples")) for a in args]
            name = "example " + os.path.basename(args[0])
            if self.opts.only and not re.search(self.opts.only, os.path.relpath(args[0], self.root)):
                continue
            with open(args[0], encoding="utf-8") as f:
                tol = tolerance_for(f.read(), self.tolerances)
            host = self.jit.run(args)
            problems = []
            if host.returncode != 0:
                problems.append("host run failed (status %s): %s" % (host.returncode, host.stderr.strip()))
            elif expect_args:
                e = subprocess.run([sys.executable, expect] + expect_args, input=host.stdout,
                                   capture_output=True, text=True)
                if e.returncode != 0:
                    problems.append("host result is not the expected one: " + e.stdout.strip())
            if not problems and not self.host_only:
                gpu = self.jit.run(self.cuda + args)
                if gpu.returncode != 0:
                    problems.append("cuda run failed (status %s): %s" % (gpu.returncode, gpu.stderr.strip()))
                else:
                    want, got = printed_buffers(host.stdout), printed_buffers(gpu.stdout)
                    src = open(args[0], encoding="utf-8").read()
                    for buf in want:
                        if buf not in got:
                            problems.append("%s: not printed by the cuda run" % buf)
                            continue
                        w, g = parse_printed(want[buf]), parse_printed(got[buf])
                        kind = "int" if all(isinstance(v, int) for v in w) else ("f4" if "f32" in src else "f8")
                        problems += compare_buffer(buf, kind, g, w, tol, "atomic_" in src)
            self.result(name, problems)

    # Every runnable kernel, as test/Host/all-test-kernels.test picks them.
    def kernels(self):
        rak = load_module(os.path.join(self.root, "test", "Host", "Inputs", "run_all_kernels.py"),
                          "run_all_kernels")
        with open(os.path.join(self.root, "test", "Host", "all-test-kernels.test"), encoding="utf-8") as f:
            unrunnable = set(re.findall(r"--unrunnable\s+(\S+)", f.read()))
        files = []
        for top in ("test", "examples"):
            for d, dirs, names in os.walk(os.path.join(self.root, top)):
                dirs[:] = sorted(x for x in dirs if x not in ("Inputs", "Output"))
                files += [os.path.join(d, n) for n in sorted(names) if n.endswith(".kir")]
        if self.opts.only:
            files = [p for p in files if re.search(self.opts.only, os.path.relpath(p, self.root))]
        listed = read_order_dependent(next(
            (c for c in (os.path.join(self.root, ORDER_DEPENDENT), os.path.join(self.root, "utils", ORDER_DEPENDENT))
             if os.path.exists(c)), os.path.join(self.root, ORDER_DEPENDENT)))
        jobs = []
        for path in files:
            printed = self.jit.run([path, "--emit=kir"])
            if printed.returncode != 0:
                continue  # a file of invalid programs
            with open(path, encoding="utf-8") as f:
                src = f.read()
            items = bodies(printed.stdout)
            for kernel, params in rak.params_of(printed.stdout).items():
                if "%s:%s" % (os.path.basename(path), kernel) in unrunnable:
                    continue
                key = "%s:%s" % (os.path.relpath(path, self.root), kernel)
                jobs.append((path, kernel, params, src, launch_shape(items, kernel), listed.pop(key, None)))
        if listed and not self.opts.only:
            log("gpu-suite: error: %s names kernels that do not exist: %s"
                % (ORDER_DEPENDENT, ", ".join(sorted(listed))))
            sys.exit(MISUSE)
        with concurrent.futures.ThreadPoolExecutor(self.opts.jobs) as pool:
            for name, problems, skipped in pool.map(lambda j: self.one_kernel(rak, *j), jobs):
                if skipped:
                    self.skipped += 1
                    if self.opts.verbose:
                        log("skipped: %s (%s)" % (name, skipped))
                else:
                    self.result(name, problems)

    def one_kernel(self, rak, path, kernel, params, src, shape, listed):
        name = "kernel %s:%s" % (os.path.relpath(path, self.root), kernel)
        grid, block = shape
        if listed:
            mode, reason = listed
            if mode == "undefined":
                return name, [], "undefined on a GPU: " + reason
            if block == 32:
                # One thread cannot run a warp operation (it needs the
                # whole warp), so an order-dependent warp kernel is left out.
                return name, [], "undefined on a GPU: %s, and one thread cannot run its warp operations" % reason
            grid, block = 1, 1
        name += " [grid %d, block %d]" % (grid, block)
        outdir = tempfile.mkdtemp(dir=self.tmp)
        ptrs = [p for p, ty in params if ty.startswith("ptr<")]
        base = [path, "--kernel", kernel, "--grid", str(grid), "--block", str(block)]
        for p, ty in params:
            base += ["--arg", rak.arg_for(p, ty)]

        def run(tag, extra):
            outs = []
            for p in ptrs:
                outs += ["--out", "%s=%s" % (p, os.path.join(outdir, "%s.%s.npy" % (tag, p)))]
            return self.jit.run(extra + base + outs)

        shared = []
        # A kernel that does not finish on the host (test/Host's `forever`,
        # which tests --timeout) would not finish on a GPU either, where
        # nothing can stop it: jit-run stops it on the host (status 4).
        limit = ["--timeout", str(self.opts.host_timeout)]
        host = run("host", limit)
        if host.returncode == 1 and "declares dynamic shared memory" in host.stderr:
            shared = ["--shared", "4096"]
            host = run("host", limit + shared)
        if host.returncode == 4:
            return name, [], "it does not finish on the host within %d s" % self.opts.host_timeout
        if host.returncode == 1 and "error:" in host.stderr:
            # The host stops it with a message (e.g. divergent
            # synchronisation with these arguments): undefined on a GPU.
            lines = host.stderr.strip().splitlines()
            return name, [], "the host rejects it: " + next((l for l in lines if "error:" in l), lines[-1])
        if host.returncode != 0:
            return name, ["host run failed (status %s): %s" % (host.returncode, host.stderr[-500:])], None
        other = run("other", shared + (["--threads", "1"] if self.host_only else self.cuda))
        if other.returncode != 0:
            return name, ["%s run failed (status %s): %s" % ("second host" if self.host_only else "cuda",
                                                              other.returncode, other.stderr.strip()[-500:])], None
        tol = tolerance_for(src, self.tolerances)
        problems = []
        for p in ptrs:
            kind, want = read_npy(os.path.join(outdir, "host.%s.npy" % p))
            _, got = read_npy(os.path.join(outdir, "other.%s.npy" % p))
            problems += compare_buffer(p, kind, got, want, tol, "atomic_" in src)
        return name, problems, None

    # The checks that need a real GPU's limits and the cubin cache.
    def gpu_checks(self):
        gs = os.path.join(self.root, "examples", "grid_sync.kir")
        args = [gs, "--arg", "n=1000", "--arg", "x=iota:1000", "--arg", "tmp=zeros:1000",
                "--arg", "y=zeros:1000"]
        cache = os.path.join(self.tmp, "coop-cache")
        first = self.jit.run(self.cuda + args + ["--grid", "2", "--block", "64", "--cache-dir", cache, "--stats"])
        second = self.jit.run(self.cuda + args + ["--grid", "2", "--block", "64", "--cache-dir", cache, "--stats",
                                                  "--print", "y"])
        problems = []
        if first.returncode != 0 or second.returncode != 0:
            problems.append("status %s then %s: %s" % (first.returncode, second.returncode,
                                                     (first.stderr + second.stderr).strip()[-800:]))
        else:
            if not re.search(r"cache\s+disk hit", second.stderr):
                problems.append("the second process did not load grid_sync from the disk cache:\n" + second.stderr)
            if "cooperative" not in second.stderr.lower():
                problems.append("--stats of the second process shows no cooperative launch:\n" + second.stderr)
            y = parse_printed(printed_buffers(second.stdout).get("y", []))
            want = [float(i * i + ((i + 1) % 1000) ** 2) for i in range(1000)]
            if y != want:
                problems.append("wrong y from the cached cooperative kernel")
        self.result("grid_sync from the cache in a new process, launched cooperatively", problems)

        # 4 threads launch the cooperative kernel of one loaded module at
        # once, each on its own buffers (jit-run --concurrent checks that
        # all four come back identical); the first thread's y must be right.
        r = self.jit.run(self.cuda + args + ["--grid", "8", "--block", "128", "--cache-dir", cache,
                                             "--concurrent", "4", "--print", "y"])
        problems = []
        if r.returncode != 0:
            problems.append("status %s: %s" % (r.returncode, r.stderr.strip()[-800:]))
        else:
            y = parse_printed(printed_buffers(r.stdout).get("y", []))
            want = [float(i * i + ((i + 1) % 1000) ** 2) for i in range(1000)]
            if y != want:
                problems.append("wrong y from concurrent cooperative launches")
        self.result("4 threads launching cooperative kernels of one module at once", problems)

        def rejected(what, extra, words):
            r = self.jit.run(self.cuda + args + extra, timeout=60)
            p = []
            if r.returncode != 1:
                p.append("status %s, expected 1: %s" % (r.returncode, r.stderr.strip()))
            elif "error:" not in r.stderr or "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" in r.stderr:
                p.append("not a clear error: " + r.stderr.strip())
            else:
                p += ["the error does not mention %r: %s" % (w, r.stderr.strip())
                      for w in words if not re.search(w, r.stderr, re.I)]
            self.result(what, p)

        rejected("an over-large cooperative grid is rejected clearly",
                 ["--grid", "1000000", "--block", "1024"], ["two_phase", "1000000", "cooperative|grid_sync|resident"])
        rejected("an over-large block is rejected clearly", ["--grid", "1", "--block", "2048"],
                 ["two_phase", "2048"])
        self.largest_cooperative_grid(gs)

    # The largest co-resident grid of 256-thread blocks (the number the
    # launch check names) runs, with every thread in the barrier, and gives
    # the host's result; one block more is refused before the launch.
    def largest_cooperative_grid(self, gs):
        n = 1 << 20
        args = [gs, "--block", "256", "--arg", "n=%d" % n, "--arg", "x=iota:%d" % n,
                "--arg", "tmp=zeros:%d" % n, "--arg", "y=zeros:%d" % n]
        probe = self.jit.run(self.cuda + args + ["--grid", "1000000"], timeout=60)
        m = re.search(r"the largest valid grid has (\d+) blocks", probe.stderr)
        if not m:
            self.result("the largest co-resident cooperative grid runs", [
                "the refused launch does not name the largest valid grid (status %s): %s"
                % (probe.returncode, probe.stderr.strip())])
            return
        most = int(m.group(1))
        outdir = tempfile.mkdtemp(dir=self.tmp)
        problems = []
        runs = {}
        # y does not depend on the grid (grid-stride loops): the host's
        # reference runs 64 blocks, within its own co-residency limit.
        for tag, extra, blocks in (("host", [], 64), ("cuda", self.cuda, most)):
            out = os.path.join(outdir, tag + ".npy")
            runs[tag] = self.jit.run(extra + args + ["--grid", str(blocks), "--out", "y=" + out], timeout=60)
            if runs[tag].returncode != 0:
                problems.append("%s run of %d blocks failed (status %s): %s" % (
                    tag, blocks, runs[tag].returncode, runs[tag].stderr.strip()[-500:]))
        if not problems:
            kind, want = read_npy(os.path.join(outdir, "host.npy"))
            _, got = read_npy(os.path.join(outdir, "cuda.npy"))
            problems += compare_buffer("y", kind, got, want, (0, 0), False)
        self.result("the largest co-resident cooperative grid (%d blocks of 256) runs" % most, problems,
                    " (%d blocks)" % most)
        over = self.jit.run(self.cuda + args + ["--grid", str(most + 1)], timeout=60)
        p = []
        if over.returncode != 1 or "the largest valid grid has %d blocks" % most not in over.stderr:
            p.append("status %s, expected 1 and the largest valid grid named: %s" % (
                over.returncode, over.stderr.strip()))
        elif "CUDA_ERROR" in over.stderr:
            p.append("a driver error, not gridjit's check: " + over.stderr.strip())
        self.result("one block more than fits (%d) is refused before the launch" % (most + 1), p)

    def main(self):
        if not self.host_only:
            ok = self.list_devices()
            if ok is None:
                return NO_DEVICE
            if not ok:
                log("0 passed, 1 failed")
                return 1
        self.examples()
        self.kernels()
        if not self.host_only:
            self.gpu_checks()
        log("gpu-suite: %s, %d kernels skipped (the host rejects them with these arguments, or they do not finish)" %
            ("host only" if self.host_only else "cuda against host", self.skipped))
        log("%d passed, %d failed" % (self.passed, self.failed))
        return 1 if self.failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host-only", action="store_true")
    here = os.path.dirname(os.path.abspath(__file__))
    # The bundle has the suite at its top; a source tree has it in utils/.
    ap.add_argument("--root", default=here if os.path.isdir(os.path.join(here, "examples"))
                    else os.path.dirname(here))
    ap.add_argument("--jit-run")
    ap.add_argument("--device", type=int)
    ap.add_argument("--only")
    ap.add_argument("-j", "--jobs", type=int, default=max(1, min(os.cpu_count() or 1, 16)))
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--host-timeout", type=int, default=HOST_KERNEL_TIMEOUT,
                    help="seconds a kernel may run on the host before it counts as one that never finishes")
    opts = ap.parse_args()
    if not os.path.isdir(os.path.join(opts.root, "examples")):
        ap.error("%s has no examples/: give --root" % opts.root)
    suite = Suite(opts)
    try:
        return suite.main()
    finally:
        import shutil
        shutil.rmtree(suite.tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
