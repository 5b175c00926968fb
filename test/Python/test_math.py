# The math builtins on the host, over a sweep of inputs per function and
# type (zeros of both signs, subnormals, the limits of each type, infinities,
# NaN, large arguments, poles, and seeded random values across each
# function's domain), against references computed independently in Python:
# mpmath at 200 bits for the functions that round (the ulp error against
# the correctly rounded result, as CUDA's Programming Guide counts it), and
# Python's math module and NumPy for the exact ones (bit for bit, NaN for
# NaN, the sign of zero included).
#
# The bounds come from one place: the table "Accuracy" of docs/LangRef.md
# section 6, whose host columns must hold over this sweep (and name every
# math builtin). `python3 test_math.py --measure` prints the measured
# maxima in the table's layout; the host columns are what it printed.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && mkdir -p %t && env GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import math
import pathlib
from fractions import Fraction
import random
import re
import struct
import sys
import unittest

import numpy as np

import gridjit

try:
    import mpmath
except ImportError:  # utils/setup.sh installs python3-mpmath
    sys.exit("test_math.py: needs mpmath (Debian: python3-mpmath; utils/setup.sh installs it)")

mpmath.mp.prec = 200
LANGREF = pathlib.Path(__file__).resolve().parents[2] / "docs" / "LangRef.md"
TYPES = {"f32": np.float32, "f64": np.float64}

# name: (arity, mpmath reference or None for the exact functions, domain)
# The domain picks the random values: "any" log-uniform over the type's
# range, "unit" in [-1, 1], "ge1" in [1, large], "small" in [-30, 30],
# "exp" where exp-like functions neither overflow nor underflow entirely.
ROUNDED = {
    "sqrt": (1, mpmath.sqrt, "any"),
    "rsqrt": (1, lambda x: 1 / mpmath.sqrt(x), "any"),
    "cbrt": (1, mpmath.cbrt, "any"),
    "rcbrt": (1, lambda x: 1 / mpmath.cbrt(x), "any"),
    "exp": (1, mpmath.exp, "exp"),
    "exp2": (1, lambda x: mpmath.power(2, x), "exp"),
    "exp10": (1, lambda x: mpmath.power(10, x), "exp"),
    "expm1": (1, mpmath.expm1, "exp"),
    "log": (1, mpmath.log, "any"),
    "log2": (1, lambda x: mpmath.log(x, 2), "any"),
    "log10": (1, mpmath.log10, "any"),
    "log1p": (1, mpmath.log1p, "any"),
    "sin": (1, mpmath.sin, "any"),
    "cos": (1, mpmath.cos, "any"),
    "tan": (1, mpmath.tan, "any"),
    "asin": (1, mpmath.asin, "unit"),
    "acos": (1, mpmath.acos, "unit"),
    "atan": (1, mpmath.atan, "any"),
    "sinh": (1, mpmath.sinh, "exp"),
    "cosh": (1, mpmath.cosh, "exp"),
    "tanh": (1, mpmath.tanh, "small"),
    "asinh": (1, mpmath.asinh, "any"),
    "acosh": (1, mpmath.acosh, "ge1"),
    "atanh": (1, mpmath.atanh, "unit"),
    "erf": (1, mpmath.erf, "small"),
    "erfc": (1, mpmath.erfc, "small"),
    "erfinv": (1, mpmath.erfinv, "unit"),
    "lgamma": (1, lambda x: mpmath.log(abs(mpmath.gamma(x))), "gamma"),
    "tgamma": (1, mpmath.gamma, "gamma"),
    "pow": (2, mpmath.power, "pow"),
    "atan2": (2, mpmath.atan2, "any"),
    "hypot": (2, mpmath.hypot, "any"),
}


def _py_fdim(x, y):
    if math.isnan(x) or math.isnan(y):
        return math.nan
    return x - y if x > y else 0.0


def _remainder(x, y):
    try:
        return math.remainder(x, y)
    except ValueError:
        return math.nan


def _fmod(x, y):
    try:
        return math.fmod(x, y)
    except ValueError:
        return math.nan


def _round_away(x):
    if not math.isfinite(x):
        return x
    return math.copysign(math.floor(Fraction(abs(x)) + Fraction(1, 2)), x)


# The exact functions: their result is the exact (or exactly rounded)
# value, which math/NumPy give in f64; an f32 result is that, rounded.
EXACT = {
    "floor": (1, np.floor),
    "ceil": (1, np.ceil),
    "trunc": (1, np.trunc),
    "round": (1, _round_away),
    "rint": (1, np.rint),
    "nearbyint": (1, np.rint),
    "abs": (1, abs),
    "modf_frac": (1, lambda x: math.modf(x)[0]),
    "modf_int": (1, lambda x: math.modf(x)[1]),
    "frexp_mant": (1, lambda x: math.frexp(x)[0] if math.isfinite(x) else x),
    "fmod": (2, _fmod),
    "remainder": (2, _remainder),
    "copysign": (2, math.copysign),
    "fdim": (2, _py_fdim),
    "min": (2, np.fmin),
    "max": (2, np.fmax),
    "fma": (3, None),  # exact in fractions, below
}
LDEXP_EXPONENTS = [-1100, -1075, -200, -150, -149, -126, -1, 0, 1, 5, 127, 128, 200, 1023, 1100]


def _ldexp(x, n):
    try:
        return math.ldexp(x, n)
    except OverflowError:
        return math.copysign(math.inf, x)


INT_RESULT = {"frexp_exp": lambda x: math.frexp(x)[1] if math.isfinite(x) else 0}
BOOL_RESULT = {
    "isnan": math.isnan,
    "isinf": math.isinf,
    "isfinite": math.isfinite,
    "signbit": lambda x: math.copysign(1.0, x) < 0,
}


def f32(x):
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def to_type(x, ty):
    """The mpmath or Python number \\p x correctly rounded to \\p ty."""
    if isinstance(x, mpmath.mpc):
        return math.nan
    if ty == "f32" and isinstance(x, mpmath.mpf) and mpmath.isfinite(x) and abs(x) >= 2.0**-126:
        with mpmath.workprec(24):  # once to 24 bits: no double rounding through f64
            x = +x
    d = float(x)  # round to nearest f64 (inf beyond)
    return f32(d) if ty == "f32" else d


def ordered(x, ty):
    if ty == "f32":
        (i,) = struct.unpack("<i", struct.pack("<f", x))
        m = 2**31 - 1
    else:
        (i,) = struct.unpack("<q", struct.pack("<d", x))
        m = 2**63 - 1
    return i if i >= 0 else -(i & m)


def ulps(got, want, ty):
    """Ulps between two values of \\p ty; 0 for NaN and NaN; None when one
    is NaN or an infinity and the other is not the same."""
    if math.isnan(want) or math.isnan(got):
        return 0 if math.isnan(want) and math.isnan(got) else None
    if math.isinf(want) or math.isinf(got):
        return 0 if got == want else None
    return abs(ordered(got, ty) - ordered(want, ty))


def edge_values(ty):
    fi = np.finfo(TYPES[ty])
    tiny = float(fi.smallest_subnormal)
    vals = [0.0, tiny, 2 * tiny, float(fi.tiny) - tiny, float(fi.tiny), 1e-30, 1e-10, 1e-5,
            0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, math.pi, 10.0, 100.0, 1e4,
            1e10, 1e30, float(fi.max), math.inf, math.nan]
    vals = vals + [-v for v in vals]
    return [to_type(v, ty) for v in vals]


def random_values(domain, ty, rng, n):
    fi = np.finfo(TYPES[ty])
    maxexp = math.log2(float(fi.max))
    out = []
    for _ in range(n):
        s = rng.choice((-1.0, 1.0))
        if domain == "unit":
            v = rng.uniform(-1, 1) if rng.random() < 0.7 else s * (1 - 2.0 ** rng.uniform(-52, -1))
        elif domain == "ge1":
            v = 1 + 2.0 ** rng.uniform(-30, 20)
        elif domain == "small":
            v = rng.uniform(-30, 30)
        elif domain == "exp":
            v = rng.uniform(-maxexp * 0.69, maxexp * 0.69)
        elif domain == "gamma":
            v = rng.uniform(-30, 40) if rng.random() < 0.8 else 2.0 ** rng.uniform(-40, 7)
        elif domain == "pow":
            v = 2.0 ** rng.uniform(-20, 20)
        else:
            v = s * 2.0 ** rng.uniform(-maxexp, maxexp)
        out.append(to_type(v, ty))
    return out


def sweep(name, arity, domain, ty):
    """The inputs of \\p name on \\p ty: one list per operand."""
    rng = random.Random("%s-%s" % (name, ty))
    base = edge_values(ty) + random_values(domain or "any", ty, rng, 400)
    if name in ("lgamma", "tgamma"):  # the poles, and between them
        base += [to_type(-k - f, ty) for k in range(0, 12) for f in (0.0, 0.5, 0.1, 0.9)]
        base += [to_type(v, ty) for v in (171.0, 171.7, 172.0, 35.0, 36.0, 2.0**-20)]
    if name == "erfinv":
        base += [to_type(s * (1 - 2.0**-k), ty) for k in range(1, 54) for s in (1, -1)]
    if arity == 1:
        return [base]
    # pairs: every edge value with a few others, then random pairs
    others = edge_values(ty)[:: 3]
    xs, ys = [], []
    for a in edge_values(ty):
        for b in others:
            xs.append(a)
            ys.append(b)
    r2 = random_values(domain or "any", ty, rng, 400)
    r3 = random_values(domain or "any", ty, rng, 400)
    if name == "pow":
        r3 = [to_type(rng.uniform(-40, 40), ty) for _ in r3]
    xs += r2
    ys += r3
    if arity == 2:
        return [xs, ys]
    zs = [to_type(rng.uniform(-10, 10), ty) for _ in xs]
    return [xs, ys, zs]


def kernel_source(name, arity, ty, result):
    params = ", ".join("a%d: ptr<%s>" % (i, ty) for i in range(arity))
    args = ", ".join("a%d[i]" % i for i in range(arity))
    return (
        "kernel k_%s_%s(n: i32, %s, out: ptr<%s>) {\n"
        "  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;\n"
        "  if i < n { out[i] = %s(%s); }\n"
        "}\n" % (name, ty, params, result, name, args)
    )


class Runner:
    """Compiles every function's kernels in one module and runs them."""

    def __init__(self):
        self.specs = []
        for name, (arity, _, _) in ROUNDED.items():
            self.specs.append((name, arity, None))
        for name, (arity, _) in EXACT.items():
            self.specs.append((name, arity, None))
        for name in INT_RESULT:
            self.specs.append((name, 1, "i32"))
        for name in BOOL_RESULT:
            self.specs.append((name, 1, "bool"))
        src = "".join(kernel_source(n, a, ty, r or ty) for n, a, r in self.specs for ty in TYPES)
        src += "".join(
            "kernel k_ldexp_%s(n: i32, a0: ptr<%s>, a1: ptr<i32>, out: ptr<%s>) {\n"
            "  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;\n"
            "  if i < n { out[i] = ldexp(a0[i], a1[i]); }\n"
            "}\n" % (ty, ty, ty) for ty in TYPES)
        self.mod = gridjit.compile(src, target="host", name="test_math.kir")

    def run_ldexp(self, ty):
        xs, ns = [], []
        for x in edge_values(ty) + random_values("any", ty, random.Random("ldexp"), 100):
            for n in LDEXP_EXPONENTS:
                xs.append(x)
                ns.append(n)
        out = np.zeros(len(xs), dtype=TYPES[ty])
        self.mod["k_ldexp_" + ty][(len(xs) + 127) // 128, 128](
            len(xs), np.array(xs, dtype=TYPES[ty]), np.array(ns, dtype=np.int32), out)
        return list(zip(xs, ns)), out.tolist()

    def run(self, name, arity, ty, result=None):
        domain = ROUNDED[name][2] if name in ROUNDED else None
        ins = sweep(name, arity, domain, ty)
        n = len(ins[0])
        arrays = [np.array(v, dtype=TYPES[ty]) for v in ins]
        dtype = {"i32": np.int32, "bool": np.bool_}.get(result, TYPES[ty])
        out = np.zeros(n, dtype=dtype)
        getattr(self.mod, "k_%s_%s" % (name, ty))[(n + 127) // 128, 128](n, *arrays, out)
        return [[float(a[i]) for a in arrays] for i in range(n)], out.tolist()


def documented_bounds():
    """{name: {"f32": bound, "f64": bound}} from LangRef's accuracy table:
    the host columns."""
    rows = {}
    header = None
    for line in LANGREF.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| function | CUDA f32"):
            header = cells
            continue
        if header and line.startswith("|") and not line.startswith("|---"):
            names = re.findall(r"`(\w+)`", cells[0])
            col = {h: cells[header.index(h)] for h in ("host f32", "host f64", "CUDA f32", "CUDA f64")}
            for n in names:
                rows[n] = {"f32": int(col["host f32"]), "f64": int(col["host f64"]),
                           "cuda": (int(col["CUDA f32"]), int(col["CUDA f64"]))}
        elif header and not line.startswith("|"):
            header = None if rows else header
    return rows


def exact_fma(x, y, z, ty):
    if not all(math.isfinite(v) for v in (x, y, z)):
        return x * y + z  # inf and NaN propagate as in one rounding
    r = Fraction(x) * Fraction(y) + Fraction(z)
    if r == 0:
        return x * y + z  # the sign of an exact zero
    return to_type(mpmath.mpf(r.numerator) / r.denominator, ty)


def _gamma_special(x, log):
    if math.isnan(x):
        return x
    if x == math.inf:
        return x
    if x == 0:
        return math.inf if log else math.copysign(math.inf, x)
    if x == -math.inf or (x < 0 and x == math.floor(x)):  # a pole
        return math.inf if log else math.nan
    return None


def _erfinv_special(y):
    if math.isnan(y) or abs(y) > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    return y if y == 0 else None


# C99's special cases (Annex F), where the arguments include a zero, an
# infinity or a NaN, or where mpmath has no real value: NumPy's and
# Python's functions follow C there, and give an exact value.
SPECIAL = {
    "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "cbrt": np.cbrt,
    "rcbrt": lambda x: 1 / np.cbrt(x), "exp": np.exp, "exp2": np.exp2,
    "exp10": lambda x: np.power(10.0, x), "expm1": np.expm1, "log": np.log,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "erf": math.erf, "erfc": math.erfc, "erfinv": _erfinv_special,
    "lgamma": lambda x: _gamma_special(x, True),
    "tgamma": lambda x: _gamma_special(x, False),
    "pow": np.power, "atan2": np.arctan2, "hypot": np.hypot,
}


def reference(name, args, ty):
    """The correctly rounded result of \p name on \p args in \p ty, or
    None where there is none to compare with."""
    if not all(math.isfinite(a) and a != 0 for a in args):
        with np.errstate(all="ignore"):
            r = SPECIAL[name](*[np.float64(a) for a in args])
        if r is not None:
            return to_type(float(r), ty)
    if name in ("cbrt", "rcbrt") and args[0] < 0:  # the real root
        return -reference(name, [-args[0]], ty)
    if name in ("lgamma", "tgamma"):
        r = _gamma_special(args[0], name == "lgamma")
        if r is not None:
            return r
    with mpmath.workdps(60):
        try:
            return to_type(ROUNDED[name][1](*[mpmath.mpf(a) for a in args]), ty)
        except (ValueError, ZeroDivisionError, OverflowError):
            return None


def max_errors(runner, name, ty):
    """The largest ulp error of \\p name on \\p ty over the sweep, and the
    first failures (inputs, got, expected) where a result is not even the
    same kind of number (NaN, inf) as the reference."""
    arity = ROUNDED[name][0]
    ins, outs = runner.run(name, arity, ty)
    worst, bad = 0, []
    for args, got in zip(ins, outs):
        want = reference(name, args, ty)
        if want is None:
            continue
        u = ulps(got, want, ty)
        if u is None:
            bad.append((args, got, want))
        else:
            worst = max(worst, u)
    return worst, bad


class MathTest(unittest.TestCase):
    runner = None

    @classmethod
    def setUpClass(cls):
        cls.runner = Runner()
        cls.bounds = documented_bounds()

    def test_table_names_every_math_builtin(self):
        # Every builtin of Builtins.def that takes floats (the atomics and
        # shuffles aside) is in the table and in this test.
        rows = re.findall(r'^GRIDJIT_BUILTIN_FUNC\(\w+,\s*"(\w+)",\s*\w+,\s*(Float|FloatOrSignedInt|IntOrFloat),',
                          (LANGREF.parents[1] / "include" / "gridjit" / "IR" / "Builtins.def").read_text(), re.M)
        self.assertGreater(len(rows), 50)
        math_builtins = {name for name, _ in rows}
        self.assertEqual(set(self.bounds), math_builtins)
        self.assertEqual(set(ROUNDED) | set(EXACT) | set(INT_RESULT) | set(BOOL_RESULT) | {"ldexp"}, math_builtins)

    def test_gpu_suite_tolerances_cover_both_errors(self):
        # utils/gpu_suite.py compares the host's results with the GPU's
        # within docs/CUDA.md's tolerances: each must cover the GPU's error
        # (CUDA's bound) and the host's (its measured bound) together.
        sys.path.insert(0, str(LANGREF.parents[1] / "utils"))
        import gpu_suite

        tolerances = gpu_suite.read_tolerances(str(LANGREF.parent / "CUDA.md"))
        for name, b in self.bounds.items():
            with self.subTest(name=name):
                self.assertIn(name, tolerances)
                self.assertGreaterEqual(tolerances[name][0], b["cuda"][0] + b["f32"])
                self.assertGreaterEqual(tolerances[name][1], b["cuda"][1] + b["f64"])

    def test_rounded_within_documented_bounds(self):
        for name in ROUNDED:
            for ty in TYPES:
                with self.subTest(name=name, ty=ty):
                    worst, bad = max_errors(self.runner, name, ty)
                    self.assertEqual(bad[:5], [], "%s on %s: NaN/inf where the reference is not" % (name, ty))
                    self.assertLessEqual(worst, self.bounds[name][ty],
                                         "%s on %s: %d ulp, documented %d" % (name, ty, worst, self.bounds[name][ty]))

    def test_exact_functions(self):
        for name, (arity, ref) in EXACT.items():
            for ty in TYPES:
                with self.subTest(name=name, ty=ty):
                    ins, outs = self.runner.run(name, arity, ty)
                    for args, got in zip(ins, outs):
                        if name == "fma":
                            want = exact_fma(*args, ty)
                        else:
                            want = to_type(float(ref(*args)), ty)
                        # min and max of +0 and -0 may give either (LLVM's
                        # minnum/maxnum, PTX's min/max).
                        any_zero = name in ("min", "max") and args[0] == 0 and args[1] == 0
                        same = (math.isnan(got) and math.isnan(want)) or (
                            got == want and (any_zero or math.copysign(1, got) == math.copysign(1, want)))
                        self.assertTrue(same, "%s%r on %s: got %r, expected %r" % (name, tuple(args), ty, got, want))
                    self.assertEqual(self.bounds[name][ty], 0)

    def test_ldexp(self):
        for ty in TYPES:
            with self.subTest(ty=ty):
                ins, outs = self.runner.run_ldexp(ty)
                for (x, n), got in zip(ins, outs):
                    want = to_type(_ldexp(x, n), ty)
                    same = (math.isnan(got) and math.isnan(want)) or (
                        got == want and math.copysign(1, got) == math.copysign(1, want))
                    self.assertTrue(same, "ldexp(%r, %d) on %s: got %r, expected %r" % (x, n, ty, got, want))
                self.assertEqual(self.bounds["ldexp"][ty], 0)

    def test_int_and_bool_results(self):
        for table, result in ((INT_RESULT, "i32"), (BOOL_RESULT, "bool")):
            for name, ref in table.items():
                for ty in TYPES:
                    with self.subTest(name=name, ty=ty):
                        ins, outs = self.runner.run(name, 1, ty, result)
                        want = [ref(a[0]) for a in ins]
                        self.assertEqual(outs, want)


def measure():
    """Prints each rounded function's largest error over the sweep."""
    r = Runner()
    for name in ROUNDED:
        cells = []
        for ty in TYPES:
            worst, bad = max_errors(r, name, ty)
            cells.append("%d%s" % (worst, " (+%d non-finite mismatches: %r)" % (len(bad), bad[:3]) if bad else ""))
        print("| `%s` | %s | %s |" % (name, cells[0], cells[1]))


if __name__ == "__main__":
    if sys.argv[1:] == ["--measure"]:
        measure()
    else:
        unittest.main()
