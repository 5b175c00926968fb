#!/usr/bin/env python3
"""Writes large but valid KIR modules to stdout, for the tests of deep and
large inputs (test/Sema/deep-chains.test, test/Sema/many-kernels.test,
test/Host/deep-chains.test, test/NVPTX/deep-chains.test).

  gen-kir.py const-chain N [--forward]  N consts, each the one before + 1;
                                        kernel k stores the last (N)
  gen-kir.py fn-chain N                 N device functions, each calling the
                                        one before; kernel k stores f(0) = N
  gen-kir.py grid-chain N               N functions down to one grid_sync()
  gen-kir.py sync-chain N               N functions, each calling the one
                                        before, then sync_threads()
  gen-kir.py array-chain N              N functions, each with a local array
                                        of 60000 bytes live across its call
                                        of the one before; kernel k(n, o)
                                        stores f(0, 1.0) = N in o[block]
  gen-kir.py kernels N                  N one-line kernels
  gen-kir.py deep-tree N                the deepest tree the parser takes:
                                        an `else if` chain of 255 links,
                                        252 nested `if`s in its last one,
                                        then an expression of N additions
                                        (255 at most)

Chains are written deepest first (the last link first), the order in which
a recursive pass over them recurses the whole chain at once; --forward
writes them in dependency order. With --cycle, the first link (c0, f0)
refers to the last instead: one cycle through all N (const-chain and
fn-chain only).
"""

import argparse

CHAINS = {
    "const-chain": ("const c0: i32 = {first};", "const c{i}: i32 = c{p} + 1;",
                    "kernel k(o: ptr<i32>) {{ o[0] = c{last}; }}"),
    "fn-chain": ("fn f0(x: i32) -> i32 {{ return {first}; }}",
                 "fn f{i}(x: i32) -> i32 {{ return f{p}(x) + 1; }}",
                 "kernel k(o: ptr<i32>) {{ o[0] = f{last}(0); }}"),
    "grid-chain": ("fn f0() {{ grid_sync(); }}", "fn f{i}() {{ f{p}(); }}",
                   "kernel k(o: ptr<i32>) {{ f{last}(); o[block_idx.x] = 1; }}"),
    "sync-chain": ("fn f0() {{ sync_threads(); }}", "fn f{i}() {{ f{p}(); sync_threads(); }}",
                   "kernel k(o: ptr<i32>) {{ f{last}(); o[thread_idx.x] = 1; }}"),
    "array-chain": ("fn f0(n: i32, x: f64) -> f64 {{ var a: [f64; 7500]; a[n] = x; return a[n] + a[1]; }}",
                    "fn f{i}(n: i32, x: f64) -> f64 {{ var a: [f64; 7500]; a[n] = x; "
                    "a[1] = f{p}(n, a[n]); return a[n] + a[1]; }}",
                    "kernel k(n: i32, o: ptr<f64>) {{ o[block_idx.x] = f{last}(n, 1.0); }}"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=sorted(CHAINS) + ["kernels", "deep-tree"])
    ap.add_argument("n", type=int)
    ap.add_argument("--forward", action="store_true")
    ap.add_argument("--cycle", action="store_true")
    a = ap.parse_args()
    if a.cycle and a.kind not in ("const-chain", "fn-chain"):
        ap.error("--cycle is for const-chain and fn-chain")
    if a.kind == "kernels":
        lines = [f"kernel k{i}(o: ptr<i32>) {{ o[0] = {i}; }}" for i in range(a.n)]
    elif a.kind == "deep-tree":
        body = "o[0] = x" + " + x" * a.n + ";"
        for i in range(252):
            body = f"if x < {i} {{ {body} }}"
        chain = "".join(f" else if x < {i} {{ }}" for i in range(254))
        lines = [f"kernel k(o: ptr<i32>, x: i32) {{ if x < 0 {{ }}{chain} else {{ {body} }} }}"]
    else:
        first, link, kernel = CHAINS[a.kind]
        last = a.n - 1
        if a.kind == "const-chain":
            start = f"c{last} + 1" if a.cycle else "1"
        else:
            start = f"f{last}(x) + 1" if a.cycle else "x + 1"
        lines = [first.format(first=start)] + [link.format(i=i, p=i - 1) for i in range(1, a.n)]
        if not a.forward:
            lines.reverse()
        lines.append(kernel.format(last=a.n - 1))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
