"""Library functions: what a `library-call` node runs (NumPy, and LAPACK through NumPy).

A sort, a solver, a factorization or an FFT has no fusible IR here (nor a float16 or complex
max/min scan; other scans are `scan` ops); it runs as one NumPy call on whole arrays,
between the program's fused kernels:

    %2 = library-call(%0, %1), arg=('np.linalg.solve', ()) : f64[4,2]
    %5 = library-call(%4), arg=('np.linalg.eigh', (('UPLO', 'L'),)) : u8[]
    %6 = library-result(%5), arg=0 : f64[4]
    %7 = library-result(%5), arg=1 : f64[4,4]

A node's arg is `(name, params)`: `name` a key of `FUNCTIONS`, spelled as in NumPy, and
`params` its static keyword arguments as sorted `(key, value)` pairs of plain data (the
printer writes them, the parser reads them back).  The node's inputs are the function's
array arguments in order; `keyword_arrays=(k1, ...)` in params names the last ones, passed
by keyword (`weights=`, `sorter=`).  A function with one result types the node itself; one
with several makes a `u8[]` token whose `library-result` nodes pick them out.

Each entry is NumPy's own function, so a compiled program gives NumPy's exact result, ties
in sorts and the order of eigenvectors included, and a shape/dtype rule that the builder
and the verifier use.  Dtypes come from NumPy itself: the function run on tiny arrays of
the same dtypes (`numpy_dtypes`), never a table that could disagree with NumPy.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

Types = list[tuple[tuple[int, ...], np.dtype]]


@dataclass(frozen=True)
class LibraryFunction:
    name: str
    results: Callable[..., Types]          # (inputs, **params) -> [(shape, dtype), ...]
    flops: Callable[..., float]            # (inputs, **params) -> estimated flops
    writes_out: bool = False               # takes `out=`: writes into the program's buffer
    binder: Callable[[dict], Callable] | None = None   # a call of its own (random draws)

    @functools.cached_property
    def function(self) -> Callable:
        """The NumPy callable: np.linalg.solve for "np.linalg.solve", np.add.accumulate for
        "np.ufunc.accumulate" with ufunc="add" (resolved per call in `run`)."""
        obj: Any = np
        for part in self.name.split(".")[1:]:
            obj = getattr(obj, part, None)
        return obj

    def bind(self, params: dict) -> Callable[..., Any]:
        """NumPy's call with these params: `(*arrays, [out=]) -> NumPy's result`, with
        the keyword arrays (`keyword_arrays`) split off once, not per call."""
        if self.binder is not None:
            return self.binder(dict(params))
        params = dict(params)
        keyword = tuple(params.pop("keyword_arrays", ()))
        function = self.function
        if self.name in ("np.ufunc.accumulate", "np.ufunc.reduceat"):
            function = getattr(getattr(np, params.pop("ufunc")), self.name.rsplit(".", 1)[1])
        elif self.name == "np.ufunc.__call__":
            function = getattr(np, params.pop("ufunc"))
        if not keyword:                  # a partial: no Python frame per call
            return functools.partial(function, **params)
        split = -len(keyword)

        def call(*arrays, **out):
            return function(*arrays[:split], **params, **dict(zip(keyword, arrays[split:])),
                            **out)
        return call


FUNCTIONS: dict[str, LibraryFunction] = {}


def register(names: str | Sequence[str], results, flops=None, out: bool = False):
    """`out`: NumPy's function takes `out=` for its one result (scans, quantiles, FFTs,
    ufuncs): the program passes the value's own buffer, no copy."""
    for name in [names] if isinstance(names, str) else names:
        FUNCTIONS[name] = LibraryFunction(name, results, flops or _linear_flops, out)


def params_of(arg) -> dict:
    """The params dict of a library-call node's arg `(name, params)`."""
    return dict(arg[1])


@dataclass(frozen=True)
class _Type:
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)


def result_types(name: str, inputs, params: dict) -> Types:
    """The (shape, dtype) of each result of `name` on inputs of these types."""
    if name not in FUNCTIONS:
        raise KeyError(f"unknown library function {name!r}")
    key = tuple((tuple(i.shape), np.dtype(i.dtype).str) for i in inputs)
    return list(_result_types(name, key, tuple(sorted(params.items()))))


@functools.lru_cache(maxsize=4096)
def _result_types(name: str, key: tuple, params: tuple) -> tuple:
    inputs = [_Type(shape, np.dtype(dtype)) for shape, dtype in key]
    return tuple((tuple(int(d) for d in shape), np.dtype(dtype))
                 for shape, dtype in FUNCTIONS[name].results(inputs, **dict(params)))


def runner(name: str, params: dict, call: Callable | None = None
           ) -> Callable[..., tuple[np.ndarray, ...]]:
    """`(*arrays) -> results`: a tuple of fresh C-ordered arrays, one per result (LAPACK
    and FFTs along an inner axis may return other orders, compiled kernels read C order,
    and a result must never be a view of an input).  What compiled programs call.
    `call`: an implementation to run instead of NumPy's function (same results)."""
    call = call or FUNCTIONS[name].bind(params)

    def run_call(*arrays):
        out = call(*arrays)
        if type(out) is np.ndarray:                 # most: one result, ~0.5 us less
            return (_fresh(out, arrays),)
        out = out if isinstance(out, tuple) else (out,)
        return tuple(_fresh(np.asarray(o), arrays) for o in out)
    run_call.__name__ = f"library_{name.rsplit('.', 1)[-1]}"
    return run_call


def _fresh(value: np.ndarray, arrays) -> np.ndarray:
    if value.base is None and value.flags.c_contiguous:   # its own new memory ...
        for a in arrays:
            if value is a:                                  # ... unless an input's own
                break
        else:
            return value
    if not value.flags.c_contiguous or any(
            isinstance(a, np.ndarray) and np.may_share_memory(value, a) for a in arrays):
        return np.array(value, order="C", copy=True)
    return value


def run(name: str, params: dict, arrays: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """The call itself, once (the interpreter's entry): a tuple of fresh arrays."""
    with np.errstate(all="ignore"):
        return runner(name, params)(*arrays)


def flops(name: str, inputs, params: dict) -> float:
    return float(FUNCTIONS[name].flops(inputs, **params))


# -- rule helpers ------------------------------------------------------------------------------

def _tiny(node) -> np.ndarray:
    """A stand-in of `node`'s dtype and rank: ones, one element per dimension."""
    return np.ones((1,) * len(node.shape), node.dtype)


def numpy_dtypes(fn: Callable, inputs, *extra, **params) -> list[np.dtype]:
    """The dtypes NumPy's `fn` returns for arrays of these inputs' dtypes (run on one
    element per dimension: NumPy's own promotion rules, whatever they are)."""
    with np.errstate(all="ignore"):
        out = fn(*[_tiny(i) for i in inputs], *extra, **params)
    out = out if isinstance(out, tuple) else (out,)
    return [np.asarray(o).dtype for o in out]


def _axis(axis, ndim: int) -> int:
    return axis + ndim if axis < 0 else axis


def _reduced(shape, axis, keepdims: bool) -> tuple[int, ...]:
    if axis is None:
        return (1,) * len(shape) if keepdims else ()
    axes = {_axis(a, len(shape)) for a in (axis if isinstance(axis, tuple) else (axis,))}
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _linear_flops(inputs, **params) -> float:
    return float(sum(math.prod(i.shape) for i in inputs))


def _sort_flops(inputs, **params) -> float:
    n = math.prod(inputs[0].shape)
    return 5.0 * n * max(math.log2(max(n, 2)), 1.0)


def _cubic_flops(inputs, **params) -> float:
    a = inputs[0]
    n = a.shape[-1] if a.ndim else 1
    return 10.0 * math.prod(a.shape[:-2]) * n ** 3 if a.ndim >= 2 else 1.0


def _fft_flops(inputs, **params) -> float:
    n = math.prod(inputs[0].shape)
    return 5.0 * n * max(math.log2(max(n, 2)), 1.0)


# -- sorting and selection ---------------------------------------------------------------------

def _sorted_shape(a, axis):
    return (math.prod(a.shape),) if axis is None else a.shape


register("np.sort", lambda ins, axis=-1, kind=None, stable=None:
         [(_sorted_shape(ins[0], axis), ins[0].dtype)], _sort_flops)
register("np.argsort", lambda ins, axis=-1, kind=None, stable=None:
         [(_sorted_shape(ins[0], axis), np.intp)], _sort_flops)
register("np.partition", lambda ins, kth, axis=-1, kind="introselect":
         [(_sorted_shape(ins[0], axis), ins[0].dtype)])
register("np.argpartition", lambda ins, kth, axis=-1, kind="introselect":
         [(_sorted_shape(ins[0], axis), np.intp)])
register("np.searchsorted", lambda ins, side="left", keyword_arrays=():
         [(ins[1].shape, np.intp)],
         lambda ins, **p: ins[1].size * max(math.log2(max(ins[0].size, 2)), 1.0))


# -- statistics --------------------------------------------------------------------------------

def _median_types(fn):
    def results(ins, axis=None, keepdims=False):
        dtype, = numpy_dtypes(fn, ins[:1])
        return [(_reduced(ins[0].shape, axis, keepdims), dtype)]
    return results


def _quantile_types(fn):
    """q is an input array, or a param when the caller wrote a Python scalar (which
    NumPy promotes weakly: the percentile of float32 data at 30 is float32)."""
    def results(ins, axis=None, method="linear", keepdims=False, q=None):
        a = ins[0]
        if q is not None:
            dtype, = numpy_dtypes(lambda x: fn(x, q, method=method), [a])
            q_shape = ()
        else:
            q_shape = ins[1].shape
            dtype, = numpy_dtypes(lambda x, _: fn(x, np.full(q_shape, 0.5, ins[1].dtype),
                                                  method=method), ins)
        return [(q_shape + _reduced(a.shape, axis, keepdims), dtype)]
    return results


for _name in ("median", "nanmedian"):
    register(f"np.{_name}", _median_types(getattr(np, _name)), _sort_flops, out=True)
for _name in ("quantile", "percentile", "nanquantile", "nanpercentile"):
    register(f"np.{_name}", _quantile_types(getattr(np, _name)), _sort_flops, out=True)


def _histogram_types(ins, bins=10, range=None, density=None, keyword_arrays=()):
    a = ins[0]
    arrays = dict(zip(keyword_arrays, ins[len(ins) - len(keyword_arrays):]))
    count = bins if "bins" not in arrays else arrays["bins"].shape[0] - 1
    tiny = {k: (np.array([0.0, 1.0], v.dtype) if k == "bins" else _tiny(v))
            for k, v in arrays.items()}
    hist, edges = np.histogram(_tiny(a), **({"bins": 1, "range": (0.0, 2.0)} | tiny),
                               density=density)
    return [((count,), hist.dtype), ((count + 1,), edges.dtype)]


register("np.histogram", _histogram_types)
register("np.histogram_bin_edges", lambda ins, **params: _histogram_types(ins, **params)[1:])


def _histograms_types(ins, weighted=(), **params):
    """`xlanb.histograms`: (hist, edges) of each of several np.histogram calls on one `a`
    (passes/histogram_merge.py); `weighted[k]`: whether call k takes the next weights."""
    weights, types = iter(ins[1:]), []
    for w in weighted:
        arrays = [ins[0], next(weights)] if w else [ins[0]]
        types += _histogram_types(arrays, **params, keyword_arrays=("weights",) if w else ())
    return types


def _histograms(params: dict) -> Callable:
    """NumPy's semantics of `xlanb.histograms`: one np.histogram per call, in order."""
    params = dict(params)
    weighted = params.pop("weighted")

    def call(a, *weights):
        weights, results = iter(weights), []
        for w in weighted:
            results += np.histogram(a, **params, weights=next(weights) if w else None)
        return tuple(results)
    return call


FUNCTIONS["xlanb.histograms"] = LibraryFunction(
    "xlanb.histograms", _histograms_types, _linear_flops,
    binder=_histograms)
register("np.digitize", lambda ins, right=False: [(ins[0].shape, np.intp)])


# -- fits ----------------------------------------------------------------------------------------

def _polyfit_types(ins, deg, rcond=None, keyword_arrays=()):
    """Coefficients, highest power first: (deg + 1,) or (deg + 1, K) for K columns of y."""
    x, y = ins[0], ins[1]
    probe = np.polyfit(np.arange(deg + 2, dtype=x.dtype), np.ones((deg + 2,) + y.shape[1:],
                                                                  y.dtype), deg)
    return [((deg + 1,) + tuple(y.shape[1:]), probe.dtype)]


register("np.polyfit", _polyfit_types)


# -- checks ------------------------------------------------------------------------------------

register("np.asarray_chkfinite", lambda ins, dtype=None: [
    (ins[0].shape, numpy_dtypes(lambda v: np.asarray_chkfinite(v, dtype=dtype), ins)[0])])


def _check_finite(params: dict) -> Callable:
    """`xlanb.check_finite`: np.asarray_chkfinite's ValueError for an inf or NaN, and a
    u8 token: the check of a value the function goes on using as it is (NumPy returns
    the argument itself there, so writes through the result reach it)."""
    def call(x):
        np.asarray_chkfinite(x)
        return np.zeros((), np.uint8)
    return call


FUNCTIONS["xlanb.check_finite"] = LibraryFunction(
    "xlanb.check_finite", lambda ins: [((), np.dtype(np.uint8))], _linear_flops,
    binder=_check_finite)


def _check_selected(params: dict) -> Callable:
    """`xlanb.check_selected`: the ValueError NumPy's `x[mask].max()` (or `.min()`) raises
    when the mask selects nothing, and a u8 token (the reduction itself runs with
    `where=mask`: xlanb/tracing/lowering/masked.py)."""
    message = (f"zero-size array to reduction operation {params['reduction']} which has "
               "no identity")

    def call(mask):
        if not mask.any():
            raise ValueError(message)
        return np.zeros((), np.uint8)
    return call


FUNCTIONS["xlanb.check_selected"] = LibraryFunction(
    "xlanb.check_selected", lambda ins, reduction: [((), np.dtype(np.uint8))],
    _linear_flops, binder=_check_selected)


def _check_choice(params: dict) -> Callable:
    """`xlanb.check_choice`: the ValueError NumPy's np.choose (mode='raise') raises for an
    index outside [0, choices), and a u8 token."""
    count = params["choices"]

    def call(index):
        if index.size and (index.min() < 0 or index.max() >= count):
            raise ValueError("invalid entry in choice array")
        return np.zeros((), np.uint8)
    return call


FUNCTIONS["xlanb.check_choice"] = LibraryFunction(
    "xlanb.check_choice", lambda ins, choices: [((), np.dtype(np.uint8))], _linear_flops,
    binder=_check_choice)


_ERRORS = {"IndexError": IndexError, "ValueError": ValueError}


def _check_range(params: dict) -> Callable:
    """`xlanb.check_range`: NumPy's error (`error`, `message` with the first offending
    value as {value}; `upper_message`, if given, for a value above `upper`) where a traced
    integer array has values outside [lower, upper] (None: unbounded), and a u8 token.
    Index bounds, negative integer exponents, coordinates out of their dims, bincount
    values.  Both bounds from one compiled pass over a large array, else
    NumPy's min and max (codegen/min_max.py: no kernel to compile for small ones); the
    note names the user's line (`where`)."""
    from ..codegen.min_max import min_max
    lower, upper = params["lower"], params["upper"]
    error, message, where = _ERRORS[params["error"]], params["message"], params["where"]
    above = params.get("upper_message") or message      # a value past `upper`'s own

    def leaves_bounds(values) -> bool:
        if values.size == 1:        # an index read in a loop: no reductions (~3 us)
            value = values.item()
            return lower is not None and value < lower or upper is not None and value > upper
        if lower is not None and upper is not None:
            low, high = min_max(values)
            return low < lower or high > upper
        return values.min() < lower if upper is None else values.max() > upper

    def call(values):
        if values.size and leaves_bounds(values):
            offending = np.zeros(values.shape, bool) if lower is None else values < lower
            if upper is not None:
                offending |= values > upper
            value = values[offending][0]
            text = above if upper is not None and value > upper else message
            failure = error(text.format(value=int(value)))
            failure.add_note(f"xlanb: at {where}; no argument was written")
            raise failure
        return np.zeros((), np.uint8)
    return call


FUNCTIONS["xlanb.check_range"] = LibraryFunction(
    "xlanb.check_range", lambda ins, **params: [((), np.dtype(np.uint8))], _linear_flops,
    binder=_check_range)


def _check_weights(params: dict) -> Callable:
    """`xlanb.check_weights`: the ZeroDivisionError NumPy's np.average raises for weights
    that sum to zero (along any averaged slice), and a u8 token."""
    def call(total):
        if np.any(total == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        return np.zeros((), np.uint8)
    return call


FUNCTIONS["xlanb.check_weights"] = LibraryFunction(
    "xlanb.check_weights", lambda ins: [((), np.dtype(np.uint8))], _linear_flops,
    binder=_check_weights)


# -- float16 at the boundary of compiled code (passes/half.py) ------------------------------

def _astype(params: dict) -> Callable:
    dtype = np.dtype(params["dtype"])
    return lambda x: np.asarray(x).astype(dtype)     # a 0-d argument may come as a scalar


FUNCTIONS["np.ndarray.astype"] = LibraryFunction(
    "np.ndarray.astype", lambda ins, dtype: [(ins[0].shape, np.dtype(dtype))],
    lambda ins, **params: 0.0, binder=_astype)


# -- scans -------------------------------------------------------------------------------------

def _scan_types(fn):
    def results(ins, axis=None, dtype=None):
        out, = numpy_dtypes(fn, ins, dtype=dtype)
        return [(_sorted_shape(ins[0], axis), out)]
    return results


for _name in ("cumsum", "cumprod", "nancumsum", "nancumprod"):
    register(f"np.{_name}", _scan_types(getattr(np, _name)), out=True)


def _cumulative_types(fn):
    def results(ins, axis=None, dtype=None, include_initial=False):
        x = ins[0]
        out, = numpy_dtypes(lambda v: fn(v, axis=None if x.ndim <= 1 else 0, dtype=dtype),
                            ins)
        shape = list(x.shape)
        if include_initial:
            shape[_axis(axis if axis is not None else 0, x.ndim)] += 1
        return [(tuple(shape), out)]
    return results


for _name in ("cumulative_sum", "cumulative_prod"):
    if hasattr(np, _name):
        register(f"np.{_name}", _cumulative_types(getattr(np, _name)), out=True)


def _accumulate_types(ins, ufunc, axis=0, dtype=None):
    out, = numpy_dtypes(lambda v: getattr(np, ufunc).accumulate(v, dtype=dtype), ins)
    return [(ins[0].shape, out)]


register("np.ufunc.accumulate", _accumulate_types, out=True)


def _reduceat_types(ins, ufunc, axis=0, dtype=None):
    x, indices = ins
    out, = numpy_dtypes(lambda v, i: getattr(np, ufunc).reduceat(v, i * 0, axis=axis,
                                                                   dtype=dtype), ins)
    shape = list(x.shape)
    shape[_axis(axis, x.ndim)] = indices.shape[0]
    return [(tuple(shape), out)]


register("np.ufunc.reduceat", _reduceat_types, out=True)


# -- linear algebra ----------------------------------------------------------------------------

def _linalg(fn):
    """dtypes of a LAPACK-backed function: run on 1x1 identities (never singular)."""
    def dtypes(*nodes, **params):
        with np.errstate(all="ignore"):
            out = fn(*[_tiny(n) for n in nodes], **params)
        out = out if isinstance(out, tuple) else (out,)
        return [np.asarray(o).dtype for o in out]
    return dtypes


def _batch(*shapes) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*shapes))


def _solve(ins):
    a, b = ins
    dtype, = _linalg(np.linalg.solve)(a, b)
    if b.ndim == 1:
        return [(_batch(a.shape[:-2]) + b.shape[-1:], dtype)]
    return [(_batch(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], dtype)]


def _qr(ins, mode="reduced"):
    a = ins[0]
    m, n = a.shape[-2:]
    k = min(m, n)
    dtypes = _linalg(np.linalg.qr)(a)
    if mode == "r":
        return [(a.shape[:-2] + (k, n), dtypes[1])]
    rows = m if mode == "complete" else k
    return [(a.shape[:-2] + (m, rows), dtypes[0]), (a.shape[:-2] + (rows, n), dtypes[1])]


def _svd(ins, full_matrices=True, compute_uv=True, hermitian=False):
    a = ins[0]
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    dtypes = _linalg(np.linalg.svd)(a)
    if not compute_uv:
        return [(batch + (k,), dtypes[1])]
    u_cols, v_rows = (m, n) if full_matrices else (k, k)
    return [(batch + (m, u_cols), dtypes[0]), (batch + (k,), dtypes[1]),
            (batch + (v_rows, n), dtypes[2])]


def _same(fn):
    return lambda ins, **params: [(ins[0].shape, _linalg(fn)(ins[0])[0])]


def _batch_scalar(fn):
    return lambda ins, **params: [(ins[0].shape[:-2], dt) for dt in _linalg(fn)(ins[0])]


register("np.linalg.solve", lambda ins: _solve(ins), _cubic_flops)
register("np.linalg.inv", _same(np.linalg.inv), _cubic_flops)
register("np.linalg.cholesky", lambda ins, upper=False:
         [(ins[0].shape, _linalg(np.linalg.cholesky)(ins[0])[0])], _cubic_flops)
register("np.linalg.det", _batch_scalar(np.linalg.det), _cubic_flops)
register("np.linalg.slogdet", _batch_scalar(np.linalg.slogdet), _cubic_flops)
register("np.linalg.qr", _qr, _cubic_flops)
register("np.linalg.eigh", lambda ins, UPLO="L":
         [(ins[0].shape[:-1], dt) if i == 0 else (ins[0].shape, dt)
          for i, dt in enumerate(_linalg(np.linalg.eigh)(ins[0]))], _cubic_flops)
register("np.linalg.eigvalsh", lambda ins, UPLO="L":
         [(ins[0].shape[:-1], _linalg(np.linalg.eigvalsh)(ins[0])[0])], _cubic_flops)
register("np.linalg.svd", _svd, _cubic_flops)
register("np.linalg.svdvals", lambda ins: _svd(ins, compute_uv=False), _cubic_flops)
def _pinv(ins, rcond=None, hermitian=False):
    a = ins[0]
    shape = a.shape[:-2] + a.shape[-2:][::-1]
    if 0 in a.shape[-2:]:                 # NumPy returns an empty array of a's own dtype
        return [(shape, a.dtype)]
    return [(shape, _linalg(np.linalg.pinv)(a)[0])]


register("np.linalg.pinv", _pinv, _cubic_flops)


def _lstsq_types(ins, rcond=None, where="?"):
    """x, residuals, rank, singular values of a full-rank matrix (`_lstsq`): residuals
    per column of b where a has more rows than columns, else none."""
    a, b = ins
    m, n = a.shape
    columns = b.shape[1:]
    with np.errstate(all="ignore"):              # dtypes from a full-rank 2x1 system
        out = np.linalg.lstsq(np.array([[1], [0]], a.dtype),
                              np.ones((2,) + (1,) * len(columns), b.dtype))
    residuals = ((columns[0] if columns else 1),) if m > n else (0,)
    shapes = [(n,) + columns, residuals, (), (min(m, n),)]
    return [(shape, np.asarray(o).dtype) for shape, o in zip(shapes, out)]


def _lstsq(params: dict) -> Callable:
    """`np.linalg.lstsq`, for a matrix of full column rank where it has more rows than
    columns: of lower rank NumPy returns no residuals, a length the compiled program did
    not plan for, so this raises (naming the user's line) instead of returning them."""
    rcond, where = params.get("rcond"), params["where"]

    def call(a, b):
        x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=rcond)
        m, n = a.shape
        if m > n and rank < n:
            failure = ValueError(
                f"np.linalg.lstsq under jit: the matrix has rank {rank} below its {n} "
                "columns, so NumPy returns no residuals, where the compiled program "
                "returns them for a matrix of full rank; use `np.linalg.pinv(a) @ b` for "
                "the solution, or run it with `xlanb.jit(f, must_compile=False)`")
            failure.add_note(f"xlanb: at {where}")
            raise failure
        return x, residuals, np.asarray(rank), s
    return call


FUNCTIONS["np.linalg.lstsq"] = LibraryFunction(
    "np.linalg.lstsq", _lstsq_types,
    lambda ins, **params: 2.0 * ins[0].shape[0] * ins[0].shape[1] ** 2, binder=_lstsq)
register("np.linalg.matrix_rank", lambda ins, tol=None, hermitian=False:
         [(ins[0].shape[:-2], np.asarray(np.linalg.matrix_rank(np.eye(2))).dtype)],
         _cubic_flops)
register("np.linalg.cond", lambda ins, p=None:
         [(ins[0].shape[:-2], _linalg(np.linalg.cond)(ins[0], p=p)[0])], _cubic_flops)


# -- FFT ---------------------------------------------------------------------------------------

_FFT_DTYPE = {}


def _fft_dtype(name: str, dtype: np.dtype) -> np.dtype:
    key = (name, dtype)
    if key not in _FFT_DTYPE:
        fn = getattr(np.fft, name)
        tiny = np.ones((2, 2), dtype)
        _FFT_DTYPE[key] = np.asarray(fn(tiny)).dtype
    return _FFT_DTYPE[key]


def _fft1(name: str):
    half_in, half_out = name in ("irfft", "hfft"), name in ("rfft", "ihfft")

    def results(ins, n=None, axis=-1, norm=None):
        a = ins[0]
        shape = list(a.shape)
        ax = _axis(axis, a.ndim)
        length = n if n is not None else (2 * (shape[ax] - 1) if half_in else shape[ax])
        shape[ax] = length // 2 + 1 if half_out else length
        return [(tuple(shape), _fft_dtype(name, a.dtype))]
    return results


def _fftn(name: str):
    half_in, half_out = name.startswith("irfft"), name.startswith("rfft")

    def results(ins, s=None, axes=None, norm=None):
        a = ins[0]
        if axes is None:
            axes = tuple(range(a.ndim))[-len(s):] if s is not None else \
                tuple(range(a.ndim))[-2:] if name.endswith("2") else tuple(range(a.ndim))
        axes = [_axis(x, a.ndim) for x in axes]
        shape = list(a.shape)
        for i, ax in enumerate(axes):
            last = i == len(axes) - 1
            if s is not None:
                length = s[i]
            elif last and half_in:
                length = 2 * (shape[ax] - 1)
            else:
                length = shape[ax]
            shape[ax] = length // 2 + 1 if (last and half_out) else length
        return [(tuple(shape), _fft_dtype(name, a.dtype))]
    return results


for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    register(f"np.fft.{_name}", _fft1(_name), _fft_flops, out=True)
for _name in ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"):
    register(f"np.fft.{_name}", _fftn(_name), _fft_flops, out=True)


# -- other NumPy calls -------------------------------------------------------------------------

def _ufunc_types(ins, ufunc, signature=None):
    """A ufunc's own loop (`signature`: its dtypes, inputs then outputs)."""
    fn = getattr(np, ufunc)
    shape = tuple(np.broadcast_shapes(*(i.shape for i in ins)))
    with np.errstate(all="ignore"):
        out = fn(*[_tiny(i) for i in ins], signature=signature)
    out = out if isinstance(out, tuple) else (out,)
    return [(shape, o.dtype) for o in out]


register("np.ufunc.__call__", _ufunc_types, out=True)


def _convolve_types(fn):
    def results(ins, mode="full"):
        n, m = ins[0].shape[0], ins[1].shape[0]
        length = {"full": n + m - 1, "same": max(n, m), "valid": max(n, m) - min(n, m) + 1}
        dtype, = numpy_dtypes(fn, ins)
        return [((length[mode],), dtype)]
    return results


def _matmul_types(ins):
    """np.matmul of two arrays of two or more dims, batch dims broadcast (size-1 ones
    stretched: passes/dot_broadcast.py hands NumPy the operands before their broadcast)."""
    a, b = ins
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    return [(batch + (a.shape[-2], b.shape[-1]), numpy_dtypes(np.matmul, ins)[0])]


register("np.matmul", _matmul_types,
         lambda ins, **p: 2.0 * math.prod(_matmul_types(ins)[0][0]) * ins[0].shape[-1],
         out=True)


for _name in ("convolve", "correlate"):
    register(f"np.{_name}", _convolve_types(getattr(np, _name)),
             lambda ins, **p: 2.0 * ins[0].size * ins[1].size)
register("np.interp", lambda ins, left=None, right=None, period=None:
         [(ins[0].shape, numpy_dtypes(np.interp, ins)[0])], _sort_flops)
register("np.isin", lambda ins, assume_unique=False, invert=False:
         [(ins[0].shape, np.bool_)], _sort_flops)


# -- nan-statistics ------------------------------------------------------------------------

def _nan_spread_types(fn):
    def results(ins, axis=None, dtype=None, ddof=0, keepdims=False):
        out, = numpy_dtypes(lambda x: fn(x, dtype=dtype, ddof=0), ins)
        return [(_reduced(ins[0].shape, axis, keepdims), out)]
    return results


for _name in ("nanvar", "nanstd"):
    register(f"np.{_name}", _nan_spread_types(getattr(np, _name)), out=True)
for _name in ("nanargmax", "nanargmin"):
    register(f"np.{_name}", lambda ins, axis=None, keepdims=False:
             [(_reduced(ins[0].shape, axis, keepdims), np.intp)])


# -- more sorts and elementwise series ------------------------------------------------------

register("np.lexsort", lambda ins, axis=-1: [(ins[0].shape[1:], np.intp)], _sort_flops)
register("np.sort_complex", lambda ins: [(ins[0].shape,
                                          numpy_dtypes(np.sort_complex, ins)[0])], _sort_flops)
register("np.i0", lambda ins: [(ins[0].shape, numpy_dtypes(np.i0, ins)[0])],
         lambda ins, **p: 60.0 * math.prod(ins[0].shape))


# -- complex max/min/argmax/argmin (NumPy's lexicographic order) -----------------------------

for _name in ("max", "min"):          # where= is a keyword array; initial= a number
    register(f"np.{_name}", lambda ins, axis=None, keepdims=False, initial=None,
             keyword_arrays=(): [(_reduced(ins[0].shape, axis, keepdims), ins[0].dtype)])
for _name in ("argmax", "argmin"):
    register(f"np.{_name}", lambda ins, axis=None, keepdims=False:
             [(_reduced(ins[0].shape, axis, keepdims), np.intp)])


# -- draws from NumPy's random state (random_calls.py: effects, chained in trace order) ------

from . import random_calls as _random_calls  # noqa: E402

FUNCTIONS[_random_calls.NAME] = LibraryFunction(_random_calls.NAME, _random_calls.results,
                                                _linear_flops, binder=_random_calls.bind)
