"""The xlanb command line: `python -m xlanb demo | run-module FILE | bench | support`."""
from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m xlanb", description="XLA for plain NumPy")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="run the seed examples: eager vs op-by-op vs compiled")
    run = sub.add_parser("run-module", help="re-run a dumped IR module, compiled vs "
                         "interpreted (a bug report's repro)")
    run.add_argument("file")
    run.add_argument("--inputs", help=".npz with one array per parameter (default: random)")
    run.add_argument("--repeats", type=int, default=5)
    bench = sub.add_parser("bench", help="run benchmarks/bench_core.py (from a checkout)")
    bench.add_argument("rest", nargs=argparse.REMAINDER)
    from .support import add_arguments as support_arguments
    support_arguments(sub.add_parser("support", help="the NumPy support table: what jit "
                                     "does with each NumPy function, ufunc and method"))
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import run_demo
        run_demo()
        return 0
    if args.command == "support":
        from .support import run as run_support
        return run_support(args)
    if args.command == "run-module":
        from .run_module import run_module
        return run_module(args.file, args.inputs, args.repeats)
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_core.py"
    if not script.exists():
        parser.error("benchmarks/ is not in this installation; run from a source checkout")
    sys.argv = [str(script)] + args.rest
    runpy.run_path(str(script), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
