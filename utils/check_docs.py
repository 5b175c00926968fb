#!/usr/bin/env python3
"""Documentation that cannot go stale: every fenced block of README.md and
docs/*.md is run, or marked as an illustration, and the names the prose
uses exist (docs/Building.md, "Documentation as tests").

Usage: check_docs.py --root SRC --build BUILD [-j N] [-v] [--only REGEX]
                     [--features FEATURES] [FILE.md ...]

A block's info string says what it is (the first word) and how to run it
(attributes after it):

  sh          a bash script, run with `set -e`; it must succeed

Commands run in a view of the checkout: a scratch directory holding a link
to each top-level entry of the source tree, and `build` linked to the build
directory, so that `build/bin/jit-run examples/saxpy.kir` works whatever
the build directory is called, and a file a block writes at the top level
lands in the scratch directory.

  console     `$ COMMAND` lines, each followed by the output it must print
              (standard output and error together); a line `...` stands for
              any lines, and `{{...}}` inside a line for any text
  kir         a KIR module that must parse and verify (jit-run --emit=kir)
  kir-error   a KIR module, then a line `// ==>`, then the diagnostics it
              must give (as `jit-run - --emit=kir` prints them: the file is
              <stdin>)
  python      a Python program that must run (the package from the source
              tree on the build's library; NumPy); where a `print(...)`
              line ends in a comment, or is followed by comment lines, those
              comments are the output it must print, in order
  c           a C program that must compile against gridjit-c/gridjit.h and
              libgridjit.so with warnings as errors, and run
  text        an illustration: output, grammar, a sketch; not run

Attributes: `cuda` runs the block only where a CUDA device is (the
`cuda-device` feature of jit-run --print-features; else it is counted as
needing a GPU, never as passed); `fake-cuda` runs it against the fake CUDA
driver of the build (one device); `tested-by=PATH[,PATH...]` (sh,
console) runs nothing here and checks instead that each command of the
block (each part of a `&&` chain) stands verbatim in one of the PATHs,
the tests that run it (for a command that cannot run inside the test
suite: the set-up script, a sanitizer build, a GPU bundle).

Names in the prose are checked too: a path of the repository in backquotes
(`lib/...`, `docs/X.md`, ...) or a relative Markdown link must exist; an
environment variable GRIDJIT_* must be read somewhere in the code; a C
API function `gj_*` must be declared in include/gridjit-c/gridjit.h; an
option of a `jit-run` command line must be one jit-run --help lists.

Prints one line per problem and a table of the blocks (run / illustration /
needs a GPU, per file); exits 1 when there is a problem.
"""

import argparse
import concurrent.futures
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

RUNNABLE = {"sh", "console", "kir", "kir-error", "python", "c"}
ILLUSTRATION = {"text"}
TIMEOUT = 300


class Block:
    def __init__(self, doc, line, info, lines):
        self.doc, self.line, self.lines = doc, line, lines
        words = info.split()
        self.kind = words[0] if words else ""
        self.attrs = {}
        for w in words[1:]:
            k, _, v = w.partition("=")
            self.attrs[k] = v or True

    @property
    def where(self):
        return "%s:%d" % (self.doc, self.line)

    @property
    def text(self):
        return "\n".join(self.lines) + "\n"


def blocks_of(path, rel):
    """The fenced blocks of a Markdown file, and the prose (lines outside
    blocks, with their numbers)."""
    blocks, prose = [], []
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f.read().splitlines(), 1):
            if fence is None:
                m = re.match(r"^(```+)(.*)$", line)
                if m:
                    fence, info, start, body = m.group(1), m.group(2).strip(), n, []
                else:
                    prose.append((n, line))
            elif line.startswith(fence) and not line[len(fence):].strip():
                blocks.append(Block(rel, start, info, body))
                fence = None
            else:
                body.append(line)
    if fence is not None:
        blocks.append(Block(rel, start, info, body))
    return blocks, prose


# --- running blocks -----------------------------------------------------------


class Runner:
    def __init__(self, opts):
        self.root, self.build = os.path.abspath(opts.root), os.path.abspath(opts.build)
        self.features = opts.features
        self.tmp = tempfile.mkdtemp(prefix="gridjit-docs-")
        self.view = os.path.join(self.tmp, "checkout")
        os.mkdir(self.view)
        for n in os.listdir(self.root):
            if n not in (".git", "build"):
                os.symlink(os.path.join(self.root, n), os.path.join(self.view, n))
        os.symlink(self.build, os.path.join(self.view, "build"))
        env = dict(os.environ)
        env["PATH"] = os.path.join(self.build, "bin") + os.pathsep + env.get("PATH", "")
        env["PYTHONPATH"] = os.path.join(self.root, "python")
        env["GRIDJIT_LIBRARY"] = os.path.join(self.build, "lib", "libgridjit.so")
        env["GRIDJIT_CACHE_DIR"] = os.path.join(self.tmp, "cache")
        env["GRIDJIT_SRC"], env["GRIDJIT_BUILD"] = self.root, self.build
        env["TMPDIR"] = self.tmp
        self.env = env
        self.fake_cuda = dict(env, GRIDJIT_CUDA_DRIVER=opts.fake_cuda or "", GRIDJIT_FAKE_CUDA_DEVICES="1")
        self.cflags = shlex.split(opts.cflags or "")
        self.python = opts.python or sys.executable
        self.cc = opts.cc

    def run(self, args, stdin=None, cwd=None, block=None):
        env = self.fake_cuda if block is not None and block.attrs.get("fake-cuda") else self.env
        try:
            return subprocess.run(args, input=stdin, capture_output=True, text=True, env=env,
                                  cwd=cwd or self.view, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(args, "timeout", "", "timed out after %d s" % TIMEOUT)

    def check(self, b):
        """A list of problems of block \\p b (empty: it passed)."""
        return getattr(self, "run_" + b.kind.replace("-", "_"))(b)

    def failed(self, r, what):
        out = (r.stdout + r.stderr).strip().splitlines()
        return ["%s (status %s):\n      %s" % (what, r.returncode, "\n      ".join(out[-12:]))]

    def run_sh(self, b):
        r = self.run(["bash", "-e", "-o", "pipefail", "-c", b.text], block=b)
        return [] if r.returncode == 0 else self.failed(r, "the commands failed")

    def run_console(self, b):
        problems = []
        steps = []  # (command, expected lines)
        for line in b.lines:
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
            elif line.strip():
                return ["output before the first '$ ' command: %r" % line]
        for cmd, want in steps:
            r = self.run(["bash", "-o", "pipefail", "-c", cmd], block=b)
            got = (r.stdout + r.stderr).splitlines()
            while want and not want[-1].strip():
                want.pop()
            if not matches(want, got):
                problems.append("`%s` printed:\n      %s\n    but the doc shows:\n      %s" % (
                    cmd, "\n      ".join(got[:20]), "\n      ".join(want)))
        return problems

    def run_kir(self, b):
        r = self.run(["jit-run", "-", "--emit=kir"], stdin=b.text)
        return [] if r.returncode == 0 else self.failed(r, "the module does not verify")

    def run_kir_error(self, b):
        if "// ==>" not in b.lines:
            return ["a kir-error block needs a line `// ==>` before the diagnostics it shows"]
        i = b.lines.index("// ==>")
        src, want = "\n".join(b.lines[:i]) + "\n", b.lines[i + 1:]
        r = self.run(["jit-run", "-", "--emit=kir"], stdin=src)
        got = r.stderr.splitlines()
        if r.returncode == 0:
            return ["the module verifies: the doc shows errors"]
        if not matches(want, got):
            return ["jit-run printed:\n      %s\n    but the doc shows:\n      %s" % (
                "\n      ".join(got), "\n      ".join(want))]
        return []

    def run_python(self, b):
        r = self.run(shlex.split(self.python) + ["-c", b.text], block=b)
        if r.returncode != 0:
            return self.failed(r, "the program failed")
        want = printed(b.lines)
        got = r.stdout.splitlines()
        if want and not matches(want, got):
            return ["the program printed:\n      %s\n    but the doc shows:\n      %s" % (
                "\n      ".join(got[:20]), "\n      ".join(want))]
        return []

    def run_c(self, b):
        d = tempfile.mkdtemp(dir=self.tmp)
        src, exe = os.path.join(d, "example.c"), os.path.join(d, "example")
        with open(src, "w") as f:
            f.write(b.text)
        lib = os.path.join(self.build, "lib")
        cc = shlex.split(self.cc) + self.cflags + ["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I",
                                     os.path.join(self.root, "include"), src, "-o", exe, "-L", lib,
                                     "-lgridjit", "-Wl,-rpath," + lib]
        r = self.run(cc)
        if r.returncode != 0:
            return self.failed(r, "the program does not compile")
        r = self.run([exe], cwd=d, block=b)
        return [] if r.returncode == 0 else self.failed(r, "the program failed")


PRINT_RE = re.compile(r"^\s*print\(.*\)\s+#\s?(.*?)\s*$")
BARE_PRINT_RE = re.compile(r"^\s*print\(.*\)\s*$")


def printed(lines):
    """The output a Python block shows: the comment at the end of a
    `print(...)` line, or the comment lines right after a `print(...)` line
    that has none."""
    want, following = [], False
    for l in lines:
        m = PRINT_RE.match(l)
        if m:
            want.append(m.group(1))
            following = False
        elif BARE_PRINT_RE.match(l):
            following = True
        elif following and l.lstrip().startswith("#"):
            want.append(re.sub(r"^\s*# ?", "", l).rstrip())
        else:
            following = False
    return want


def matches(want, got):
    """\\p got (lines) as \\p want shows it: `...` lines match any lines,
    `{{...}}` any text within a line."""
    def line_re(w):
        parts = w.split("{{...}}")
        return re.compile("^" + ".*".join(re.escape(p) for p in parts) + "$")

    def go(i, j):
        if i == len(want):
            return j == len(got)
        if want[i].strip() == "...":
            return any(go(i + 1, k) for k in range(j, len(got) + 1))
        return j < len(got) and line_re(want[i].rstrip()).match(got[j].rstrip()) is not None and go(i + 1, j + 1)

    return go(0, 0)


def tested_by(root, b):
    """Problems of a block whose commands other tests run: each command
    (each part of a `&&` chain, its comment cut) must stand in one of
    them."""
    texts = []
    for rel in b.attrs["tested-by"].split(","):
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            return ["tested-by=%s: no such file" % rel]
        with open(path, encoding="utf-8") as f:
            texts.append(" ".join(f.read().split()))
    lines = [l[2:] if l.startswith("$ ") else l for l in b.lines
             if l.strip() and not l.lstrip().startswith("#") and (b.kind != "console" or l.startswith("$ "))]
    # Backslash continuations make one command.
    commands, cur = [], ""
    for l in lines:
        cur += l.rstrip()[:-1] + " " if l.rstrip().endswith("\\") else l
        if not l.rstrip().endswith("\\"):
            commands.append(cur)
            cur = ""
    problems = []
    for c in commands:
        c = re.sub(r"\s+#.*$", "", c)
        for part in c.split("&&"):
            part = " ".join(part.split())
            if part and not any(part in t for t in texts):
                problems.append("tested-by=%s does not run `%s`" % (b.attrs["tested-by"], part))
    return problems


# --- names in the prose ---------------------------------------------------------

PATH_RE = re.compile(r"`((?:\.ci|benchmarks|docs|examples|fuzz|include|lib|python|test|tools|unittests|utils)/[^`\s]*"
                     r"|[A-Za-z0-9_-]+\.md)`")
LINK_RE = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
ENV_RE = re.compile(r"\bGRIDJIT_[A-Z0-9_]*[A-Z0-9]\b")
GJ_RE = re.compile(r"`(gj_[a-z0-9_]+)`|\b(gj_[a-z0-9_]+)\(")
JITRUN_RE = re.compile(r"(?:^|[\s`(])(?:build/bin/|\S*/)?jit-run(?=\s)([^`\n]*)")


class Names:
    def __init__(self, root, build, runner):
        self.root, self.build = root, os.path.abspath(build)
        with open(os.path.join(root, "include", "gridjit-c", "gridjit.h"), encoding="utf-8") as f:
            self.capi = set(re.findall(r"\b(gj_[a-z0-9_]+)\b", f.read()))
        self.env = set()
        for top in ("lib", "tools", "python", "utils", "test", "unittests", "benchmarks", "fuzz", ".ci"):
            for d, dirs, files in os.walk(os.path.join(root, top)):
                for n in files:
                    if n.endswith((".cpp", ".h", ".py", ".sh", ".cfg", ".in", ".test", ".kir", ".c", ".txt")) or top == ".ci":
                        try:
                            with open(os.path.join(d, n), encoding="utf-8", errors="replace") as f:
                                self.env.update(ENV_RE.findall(f.read()))
                        except OSError:
                            pass
        r = runner.run(["jit-run", "--help"])
        self.options = set(re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", r.stdout))
        self.runner = runner

    def is_option(self, opt):
        """jit-run lists its own options in --help and passes LLVM's on
        (docs/jit-run.md, "LLVM OPTIONS"): those it does not list are asked
        of it."""
        if opt not in self.options:
            r = self.runner.run(["jit-run", opt, "--version"])
            if "Unknown command line argument" in r.stderr:
                return False
            self.options.add(opt)
        return True

    def exists(self, doc_dir, p):
        p = p.rstrip(".,:;")
        if "*" in p or "..." in p or "<" in p or "{" in p:
            return True  # a pattern, not a file
        p = re.sub(r":\d+(-\d+)?$", "", p)  # file:line
        if re.search(r"(^|/)[A-Z][A-Z_]+(\.|/|$)", p):
            return True  # a placeholder: fuzz/corpus/TARGET/
        for base in (self.root, doc_dir, self.build):
            if os.path.exists(os.path.join(base, p)):
                return True
        return False

    def check(self, doc, prose):
        problems = []
        doc_dir = os.path.dirname(os.path.join(self.root, doc))
        text = "\n".join(l for _, l in prose)
        for n, line in prose:
            for m in PATH_RE.finditer(line):
                if not self.exists(doc_dir, m.group(1)):
                    problems.append("%s:%d: `%s` does not exist" % (doc, n, m.group(1)))
            for m in LINK_RE.finditer(line):
                target = m.group(1)
                if "://" in target or target.startswith("mailto:") or "..." in target:
                    continue
                if not os.path.exists(os.path.join(doc_dir, target)):
                    problems.append("%s:%d: the link to %s goes nowhere" % (doc, n, target))
            for v in ENV_RE.findall(line):
                if v not in self.env:
                    problems.append("%s:%d: %s is read nowhere in the code" % (doc, n, v))
            for a, b in GJ_RE.findall(line):
                f = a or b
                if f not in self.capi:
                    problems.append("%s:%d: %s is not in gridjit-c/gridjit.h" % (doc, n, f))
        return problems

    def check_commands(self, b):
        problems = []
        for i, line in enumerate(b.lines):
            for m in JITRUN_RE.finditer(line):
                for opt in re.findall(r"(?<![\w/.=-])(--?[a-z][a-z0-9-]*)(?==|\s|$)", m.group(1)):
                    if opt not in ("-", "-o") and not self.is_option(opt):
                        problems.append("%s:%d: jit-run has no option %s" % (b.doc, b.line + 1 + i, opt))
        return problems


# --- the whole check -------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--python")
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--cflags", help="for the C blocks (a sanitized build's flags)")
    ap.add_argument("--fake-cuda", help="the fake CUDA driver, for `fake-cuda` blocks")
    ap.add_argument("--features", default="", help="jit-run --print-features (cuda-device runs `cuda` blocks)")
    ap.add_argument("-j", "--jobs", type=int, default=max(1, min(os.cpu_count() or 1, 8)))
    ap.add_argument("--only", help="check only the blocks of files whose path matches")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/*.md)")
    opts = ap.parse_args()
    root = os.path.abspath(opts.root)
    files = opts.files or (["README.md"] + sorted(os.path.join("docs", n) for n in os.listdir(os.path.join(root, "docs"))
                                                  if n.endswith(".md")))
    runner = Runner(opts)
    names = Names(root, opts.build, runner)
    has_gpu = "cuda-device" in opts.features.split()

    problems, jobs, table = [], [], {}
    for rel in files:
        path = rel if os.path.isabs(rel) else os.path.join(root, rel)
        doc = os.path.relpath(path, root)
        if opts.only and not re.search(opts.only, doc):
            continue
        blocks, prose = blocks_of(path, doc)
        problems += names.check(doc, prose)
        row = table.setdefault(doc, {"run": 0, "illustration": 0, "gpu": 0, "tested-by": 0})
        for b in blocks:
            if b.kind in ILLUSTRATION:
                row["illustration"] += 1
                continue
            if b.kind not in RUNNABLE:
                problems.append("%s: a block must say what it is: ```%s``` is none of %s" % (
                    b.where, b.kind, ", ".join(sorted(RUNNABLE | ILLUSTRATION))))
                continue
            problems += names.check_commands(b)
            if "tested-by" in b.attrs:
                row["tested-by"] += 1
                problems += ["%s: %s" % (b.where, p) for p in tested_by(root, b)]
            elif b.attrs.get("cuda") and not has_gpu:
                row["gpu"] += 1
            else:
                row["run"] += 1
                jobs.append(b)

    if not opts.files:
        # The README's map of the documentation names every page.
        with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        for n in sorted(os.listdir(os.path.join(root, "docs"))):
            if n.endswith(".md") and "docs/" + n not in readme:
                problems.append("README.md: docs/%s is not named (\"Where to go next\")" % n)

    with concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool:
        for b, found in zip(jobs, pool.map(runner.check, jobs)):
            if found:
                problems += ["%s: %s block: %s" % (b.where, b.kind, p) for p in found]
            elif opts.verbose:
                print("ok: %s (%s)" % (b.where, b.kind))

    for p in problems:
        print("check-docs: " + p)
    print("| file | run | run by another test | illustration | needs a GPU |")
    print("|---|---:|---:|---:|---:|")
    for doc, r in table.items():
        print("| %s | %d | %d | %d | %d |" % (doc, r["run"], r["tested-by"], r["illustration"], r["gpu"]))
    print("check-docs: %d blocks run, %d problems" % (len(jobs), len(problems)))
    shutil.rmtree(runner.tmp, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
