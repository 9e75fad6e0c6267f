"""np.histogram with equal-width bins as one compiled pass: NumPy's exact counts and sums.

NumPy's uniform-bin path (numpy/lib/_histograms_impl.py) walks the data in blocks of
65536 and, per block, makes about fifteen array passes: two range masks, a cast, the
bin-index arithmetic, three fancy-index fix-ups and `np.bincount`.  Here the edges, the
range checks and their errors stay NumPy's own (`_get_bin_edges`, called as NumPy calls
it), and only the per-element work is a Numba loop that repeats NumPy's arithmetic in
NumPy's dtypes, element by element:

    keep  = first <= a <= last                    # compared in result_type(a, first)
    f     = (a' - first) / denom * bins           # a' = a cast to the edges' dtype
    i     = int(f); i -= i == bins                # then the same +-1 fix-ups on the edges
    count[i] += 1    or    block[i] += w          # weights summed in float64 per block

Weighted sums keep NumPy's blocking: each 65536-element block is summed in float64 in
element order (as `np.bincount` does), cast to the weights' dtype and added to the
result, so float32 and float64 sums match NumPy's bit for bit.  NaN is outside every range
(`keep` is false), as in NumPy; with no `range`, NumPy's own check raises first.

A count and a weighted histogram of the same data and bins (merged into one
`xlanb.histograms` call by passes/histogram_merge.py) share one pass: each value is binned
once and updates both.

Only what the fast path reproduces exactly takes it: int bins, a real float or integer
`a`, float32/float64 or no weights, no `density` or density computed from the counts as
NumPy does.  Everything else (edges given as an array, complex, bool or float16 data,
integer or complex weights) runs np.histogram itself.

Measured, single thread, 400,000 f64 values in 1000 bins (npbench azimint_hist): about 4.3
against NumPy's 6.3 ms unweighted, 5.2 against 7.0 weighted (the per-element loop is
about 7 ns: a division, the edge fix-ups and a scattered increment; it does not vectorize).
npbench azimint_hist (a count and a weighted histogram, merged into one pass), single
thread, benchmarks/bench_parity.py, load 3.6-4.2: 0.98x NumPy before, 1.93-1.99x after.
"""
from __future__ import annotations

import inspect
from typing import Callable

import numba
import numpy as np

try:                                      # NumPy's own edge rules and errors (numpy < 2.5)
    from numpy.lib._histograms_impl import (_get_bin_edges, _ravel_and_check_weights,
                                            _unsigned_subtract)
except ImportError:                       # pragma: no cover - another NumPy layout
    _get_bin_edges = None

BLOCK = 65536                             # NumPy's block: where weighted sums round
_DATA_KINDS = "fiu"
_WEIGHT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


# The bin index is written out in each loop: as a helper function, even with Numba's
# inline="always", the loop ran 2x slower.  NumPy's steps: `a` cast to the edges' dtype,
# shifted in `sub_type`, scaled in the quotient's dtype, then fixed up against the edges.

def _count(a, low, high, edge_type, sub_type, first, denom, bins, edges, counts):
    """counts[i] += 1 for every value of `a` in [low, high] (compared in low's dtype)."""
    last = edges.size - 2
    for k in range(a.size):
        v = a[k]
        if v >= low and v <= high:
            x = edge_type(v)
            i = int((sub_type(x) - first) / denom * bins)
            if i == last + 1:
                i -= 1
            if x < edges[i]:
                i -= 1
            if i != last and x >= edges[i + 1]:
                i += 1
            counts[i] += 1


def _weigh(a, w, low, high, edge_type, sub_type, first, denom, bins, edges, sums, sum_type,
           block):
    """sums += each BLOCK's per-bin float64 sums of w, cast to `sum_type`, for the values
    of `a` in [low, high] (NumPy's order: `n += np.bincount(i, w, n).astype(n.dtype)`)."""
    last = edges.size - 2
    for start in range(0, a.size, BLOCK):
        block[:] = 0.0
        for k in range(start, min(start + BLOCK, a.size)):
            v = a[k]
            if v >= low and v <= high:
                x = edge_type(v)
                i = int((sub_type(x) - first) / denom * bins)
                if i == last + 1:
                    i -= 1
                if x < edges[i]:
                    i -= 1
                if i != last and x >= edges[i + 1]:
                    i += 1
                block[i] += np.float64(w[k])
        for i in range(sums.size):
            sums[i] = sums[i] + sum_type(block[i])


def _count_and_weigh(a, w, low, high, edge_type, sub_type, first, denom, bins, edges,
                     counts, sums, sum_type, block):
    """`_count` and `_weigh` in one pass: each value binned once (passes/histogram_merge.py:
    np.histogram(a, n) and np.histogram(a, n, weights=w) in one program)."""
    last = edges.size - 2
    for start in range(0, a.size, BLOCK):
        block[:] = 0.0
        for k in range(start, min(start + BLOCK, a.size)):
            v = a[k]
            if v >= low and v <= high:
                x = edge_type(v)
                i = int((sub_type(x) - first) / denom * bins)
                if i == last + 1:
                    i -= 1
                if x < edges[i]:
                    i -= 1
                if i != last and x >= edges[i + 1]:
                    i += 1
                counts[i] += 1
                block[i] += np.float64(w[k])
        for i in range(sums.size):
            sums[i] = sums[i] + sum_type(block[i])


_KERNELS = {f.__name__: f for f in (_count, _weigh, _count_and_weigh)}
_COMPILED: dict[tuple, Callable] = {}        # (kernel, argument types) -> dispatcher


def run_kernel(name: str, *args) -> None:
    """Kernel `name` (one of the loops above) compiled for these arguments' types through
    the project's kernel cache (codegen/cache.py), as generated kernels are: a warm start
    loads it without Numba's first-compile set-up (cached_load.py), which a plain
    `numba.njit(cache=True)` function pays on its first call (0.6 s of npbench
    azimint_hist's first call)."""
    key = (name,) + tuple(numba.typeof(a) for a in args)
    kernel = _COMPILED.get(key)
    if kernel is None:
        from .cache import compile_function
        source = (f"# xlanb histogram kernel {name}\nimport numba\nimport numpy as np\n"
                  f"BLOCK = {BLOCK}\n\n\n"
                  f"@numba.njit(cache=True, nogil=True, error_model=\"numpy\")\n"
                  f"{inspect.getsource(_KERNELS[name])}")
        kernel = _COMPILED[key] = compile_function(source, name, key[1:])
    kernel(*args)


def _scalars(a: np.ndarray, edges: np.ndarray, uniform) -> tuple:
    """(low, high, edge cast, shift cast, first, denom, bins): the scalars of NumPy's
    expressions, each in the dtype NumPy's promotion gives it there."""
    first, last, bins = uniform
    compare = np.result_type(a, first, last)                # `tmp_a >= first_edge`
    # NumPy's index arithmetic on one value: its dtype at each step, whatever the rules
    shifted = _unsigned_subtract(a[:1].astype(edges.dtype), first)
    denom = _unsigned_subtract(last, first)
    quotient = (shifted / denom).dtype
    return (compare.type(first), compare.type(last), edges.dtype.type, shifted.dtype.type,
            shifted.dtype.type(first), quotient.type(denom), quotient.type(bins))


def is_fast(a: np.ndarray, bins, weights) -> bool:
    """Whether the compiled pass reproduces np.histogram(a, bins, weights=weights)."""
    return (_get_bin_edges is not None and isinstance(bins, (int, np.integer))
            and a.dtype.kind in _DATA_KINDS and a.dtype.itemsize >= 4
            and (weights is None or weights.dtype in _WEIGHT_DTYPES))


def histogram(a, bins=10, range=None, density=None, weights=None):
    """np.histogram(a, bins, range, density, weights): the compiled pass where `is_fast`,
    else NumPy's own function."""
    a = np.asarray(a)
    weights = None if weights is None else np.asarray(weights)
    if not is_fast(a, bins, weights):
        return np.histogram(a, bins, range, density, weights)
    a, weights = _ravel_and_check_weights(a, weights)
    edges, uniform = _get_bin_edges(a, bins, range, weights)
    scalars = _scalars(a, edges, uniform)
    if weights is None:
        n = np.zeros(uniform[2], np.intp)
        run_kernel("_count", a, *scalars, edges, n)
    else:
        n = np.zeros(uniform[2], weights.dtype)
        run_kernel("_weigh", a, weights, *scalars, edges, n, n.dtype.type,
                   np.zeros(n.size, np.float64))
    if density:
        widths = np.array(np.diff(edges), float)
        return n / widths / n.sum(), edges
    return n, edges


def histograms(a, weighted: tuple, weights: tuple, bins, range=None) -> tuple:
    """`xlanb.histograms`: (hist, edges) of np.histogram(a, bins, range, weights=w) for
    each call (`weighted[k]`: call k takes the next of `weights`), flattened.  One count
    and one weighted call over one pass where the compiled pass reproduces both."""
    a = np.asarray(a)
    if sorted(weighted) != [False, True] or not is_fast(a, bins, np.asarray(weights[0])):
        it, out = iter(weights), []
        for w in weighted:
            out += histogram(a, bins, range, weights=next(it) if w else None)
        return tuple(out)
    a, w = _ravel_and_check_weights(a, np.asarray(weights[0]))
    edges, uniform = _get_bin_edges(a, bins, range, None)
    counts = np.zeros(uniform[2], np.intp)
    sums = np.zeros(uniform[2], w.dtype)
    run_kernel("_count_and_weigh", a, w, *_scalars(a, edges, uniform), edges, counts, sums,
               sums.dtype.type, np.zeros(sums.size, np.float64))
    pairs = [(sums, edges), (counts, edges.copy())]       # each call its own edges array
    return tuple(pairs[0] + pairs[1]) if weighted[0] else tuple(pairs[1] + pairs[0])


def compiled_runner(name: str, params: dict, dtypes=None) -> Callable | None:
    """A faster implementation of library function `name` with these params for compiled
    programs, or None (the program calls NumPy's function).  With the inputs' `dtypes`,
    its kernel is compiled now, on two values of each (the kernel's types follow the
    dtypes, not the values): a program compiles it with its other kernels (in the
    background when tiered), not in its first run."""
    params = dict(params)
    if name == "xlanb.histograms":
        weighted = params.pop("weighted")

        def call(a, *weights):
            return histograms(a, weighted, weights, **params)
    elif name == "np.histogram":
        keyword = tuple(params.pop("keyword_arrays", ()))
        if "bins" in keyword:                    # edges given as an array: NumPy's search
            return None

        def call(a, *arrays):
            return histogram(a, **params, **dict(zip(keyword, arrays)))
    else:
        return None
    if dtypes is not None:
        with np.errstate(all="ignore"):
            call(*[np.arange(2).astype(d) for d in dtypes])
    return call
