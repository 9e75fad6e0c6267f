"""User-facing errors: the right class, naming the NumPy function or operator, this file and
the line of the offending call, with advice on what to do."""
from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

import xlanb
from xlanb.errors import (CompileError, ConcretizationError, DataDependentShapeError,
                          DTypeError, ShapeMismatchError, TracerLeakError,
                          UnsupportedNumPyFunctionError)
from xlanb.tracing import trace

X = np.arange(12.0).reshape(3, 4)
FILE = os.path.basename(__file__)


def raises(cls, fn, *args, names: str, line: int, contains=()) -> CompileError:
    with pytest.raises(cls) as info:
        trace(fn, args or (X,))
    error = info.value
    message = str(error)
    assert names in message and error.op_name == names
    assert f"{FILE}:{line}" in message and error.location.endswith(f"{FILE}:{line}")
    for text in contains:
        assert text in message, f"{text!r} not in {message!r}"
    return error


# -- data-dependent shapes -------------------------------------------------------------------
def test_unique():
    def f(x):
        return np.unique(x)
    raises(DataDependentShapeError, f, names="np.unique", line=f.__code__.co_firstlineno + 1,
           contains=["shape is not inferable at compile time", "np.where(",
                     "must_compile=False"])


@pytest.mark.parametrize("func", [np.nonzero, np.argwhere, np.flatnonzero],
                         ids=lambda f: f.__name__)
def test_nonzero_family(func):
    def f(x):
        return func(x > 3)
    raises(DataDependentShapeError, f, names=f"np.{func.__name__}",
           line=inspect.currentframe().f_lineno - 2)


def test_where_with_one_argument():
    def f(x):
        return np.where(x > 3)
    raises(DataDependentShapeError, f, names="np.where(cond) (one argument)",
           line=f.__code__.co_firstlineno + 1)


def test_boolean_mask_getitem():
    def f(x):
        return np.sort(x[x > 0])           # x[x > 0].sum() compiles (a masked sum)
    raises(DataDependentShapeError, f, names="np.sort of x[mask] (boolean mask)",
           line=f.__code__.co_firstlineno + 1, contains=["not inferable at compile time"])


# -- concretization ----------------------------------------------------------------------------
def test_if_on_traced_value():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    raises(ConcretizationError, f, names="bool()", line=f.__code__.co_firstlineno + 1,
           contains=["np.where(cond, a, b)", "static_argnums", "must_compile=False"])


@pytest.mark.parametrize("convert,name", [(int, "int()"), (float, "float()"),
                                          (lambda v: range(v), "operator.index()"),
                                          (np.asarray, "np.asarray()"),
                                          (lambda v: v.tolist(), "x.tolist()")])
def test_conversions(convert, name):
    def f(x):
        return convert(x[0, 0].astype(np.int64))
    # the innermost user frame: the lambda itself when `convert` is one
    code = getattr(convert, "__code__", f.__code__)
    line = code.co_firstlineno + (code is f.__code__)
    raises(ConcretizationError, f, names=name, line=line)


def test_traced_slice_bound():
    def f(x):
        n = x.shape[0] - x[0, 0].astype(int)
        return x[:n]
    raises(ConcretizationError, f, names="operator.index()",
           line=f.__code__.co_firstlineno + 2)


def test_truth_value_of_array_is_numpy_error():
    def f(x):
        return x if x > 0 else -x
    with pytest.raises(ValueError, match="ambiguous"):
        trace(f, (X,))


# -- shapes and dtypes ---------------------------------------------------------------------------
def test_broadcast_mismatch_names_both_shapes():
    def f(x, y):
        return x + y
    error = raises(ShapeMismatchError, f, X, np.ones(5), names="operator +",
                   line=f.__code__.co_firstlineno + 1,
                   contains=["operands could not be broadcast together: (3,4) and (5,)"])
    assert isinstance(error, CompileError)


def test_ufunc_call_mismatch():
    def f(x, y):
        return np.maximum(x, y)
    raises(ShapeMismatchError, f, X, np.ones((2, 4)), names="np.maximum",
           line=f.__code__.co_firstlineno + 1, contains=["(3,4) and (2,4)"])


def test_matmul_mismatch():
    def f(x):
        return x @ x
    raises(ShapeMismatchError, f, names="operator @", line=f.__code__.co_firstlineno + 1,
           contains=["(3, 4) and (3, 4)"])


def test_reshape_and_concatenate_mismatch():
    def f(x):
        return x.reshape(5, -1)
    raises(ShapeMismatchError, f, names="x.reshape()", line=f.__code__.co_firstlineno + 1,
           contains=["cannot reshape array of size 12 into shape (5, -1)"])

    def g(x):
        return np.concatenate([x, x.T])
    raises(ShapeMismatchError, g, names="np.concatenate", line=g.__code__.co_firstlineno + 1)


def test_invert_float_is_dtype_error():
    def f(x):
        return ~x
    raises(DTypeError, f, names="operator ~", line=f.__code__.co_firstlineno + 1,
           contains=["float64", "astype"])


def test_inplace_int_by_float():
    def f(x):
        y = x.astype(np.int32)
        y += 1.5
        return y
    raises(DTypeError, f, names="operator +=", line=f.__code__.co_firstlineno + 2,
           contains=["same_kind"])


# -- unsupported ---------------------------------------------------------------------------------
def test_unsupported_function():
    def f(x):
        return np.apply_along_axis(np.sum, 0, x)
    raises(UnsupportedNumPyFunctionError, f, names="np.apply_along_axis",
           line=f.__code__.co_firstlineno + 1, contains=["must_compile=False"])


def test_unsupported_method_and_ufunc():
    def f(x):
        return x.byteswap()
    raises(UnsupportedNumPyFunctionError, f, names="x.byteswap()",
           line=f.__code__.co_firstlineno + 1)

    def g(x):                                   # a ufunc option compiled code does not take
        return np.exp(x, where=x > 0)
    raises(UnsupportedNumPyFunctionError, g, names="np.exp(where=...)",
           line=g.__code__.co_firstlineno + 1)

    def h(x):
        np.multiply.at(x, [0, 1], 2.0)
        return x
    raises(UnsupportedNumPyFunctionError, h, names="np.multiply.at",
           line=h.__code__.co_firstlineno + 1)


def test_ufunc_out_argument_that_is_not_traced():
    outside = np.empty(4, np.float32)           # a global: the call cannot write into it

    def f(x):
        np.exp(x, out=outside)
        return x
    raises(UnsupportedNumPyFunctionError, f, names="np.exp",
           line=f.__code__.co_firstlineno + 1, contains=["out=", "not traced"])


def test_setitem_with_traced_index_array():
    def f(x):
        y = x.copy()
        y[1:, x[:, 0].astype(int) % 3] = 1.0       # a partial slice beside an index array
        return y
    raises(UnsupportedNumPyFunctionError, f, names="x[index_array] = v (item assignment "
           "through an index array)", line=f.__code__.co_firstlineno + 2)


def test_leaked_tracer():
    leaked = []

    def f(x):
        leaked.append(x)
        return x
    trace(f, (X,))

    def g(x):
        return x + leaked[0]
    raises(TracerLeakError, g, names="operator +", line=g.__code__.co_firstlineno + 1)


def test_docstrings_show_example_and_fix():
    for cls in (UnsupportedNumPyFunctionError, DataDependentShapeError, ConcretizationError,
                ShapeMismatchError, DTypeError):
        assert "Failing" in cls.__doc__ and "Fix" in cls.__doc__, cls.__name__


def test_message_format():
    error = DataDependentShapeError("the output shape depends on the input values, so it is "
                                    "not inferable at compile time", op_name="np.unique",
                                    location="train.py:41",
                                    hint="Use `np.where(mask, x, 0)` or "
                                         "`xlanb.jit(f, must_compile=False)`")
    assert str(error) == ("`np.unique` at train.py:41: the output shape depends on the input "
                          "values, so it is not inferable at compile time. Use "
                          "`np.where(mask, x, 0)` or `xlanb.jit(f, must_compile=False)`.")


# -- Python's conventions: each error is also the built-in NumPy raises ------------------------
def _broadcast(x):
    return x + np.ones(5)                                   # (3, 4) + (5,)


def _invert_float(x):
    return ~x


def _branch(x):
    if x.sum() > 0:
        return x
    return -x


def _apply(x):
    return np.apply_along_axis(np.sum, 0, x)


# (function of X, the xlanb class, the built-in; does NumPy raise that built-in eagerly?)
CONVENTIONS = [
    (_broadcast, ShapeMismatchError, ValueError, True),
    (_invert_float, DTypeError, TypeError, True),
    (_branch, ConcretizationError, TypeError, False),
    (np.unique, DataDependentShapeError, TypeError, False),
    (_apply, UnsupportedNumPyFunctionError, NotImplementedError, False),
]


@pytest.mark.parametrize("fn,cls,builtin,numpy_raises", CONVENTIONS,
                         ids=[c[1].__name__ for c in CONVENTIONS])
def test_errors_are_also_the_builtin_numpy_raises(fn, cls, builtin, numpy_raises):
    assert issubclass(cls, CompileError) and issubclass(cls, builtin)
    if numpy_raises:
        with pytest.raises(builtin):
            fn(X)
    with pytest.raises(builtin) as info:                # code written for NumPy catches it
        xlanb.jit(fn)(X)
    assert type(info.value) is cls


def test_every_error_class_is_also_a_builtin():
    from xlanb import errors
    classes = [c for c in vars(errors).values() if isinstance(c, type)
               and issubclass(c, CompileError) and c is not CompileError]
    assert {UnsupportedNumPyFunctionError, DataDependentShapeError, ConcretizationError,
            ShapeMismatchError, DTypeError, TracerLeakError} <= set(classes)
    builtins = (ValueError, TypeError, NotImplementedError, RuntimeError)
    for cls in classes:
        assert issubclass(cls, builtins), f"{cls.__name__} is only a CompileError"


def test_an_index_error_out_of_code_generation_is_internal(monkeypatch, tmp_path):
    """An IndexError raised by xlanb while tracing may be NumPy's own answer to a user's bad
    index; out of the compiler (a bug in a pass or in code generation) it never is."""
    monkeypatch.setenv("XLANB_CACHE_DIR", str(tmp_path))   # no program record: codegen runs
    import warnings

    import xlanb_runtime
    import xlanb_runtime.compiler as compiler
    from xlanb.autocluster import FallbackWarning
    from xlanb.errors import InternalCompilerError
    # a bug inside code generation: a tuple indexed out of range in a runtime file
    source = compile("def generate(kernel, threads):\n    return ()[kernel.root.ndim]\n",
                     os.path.join(os.path.dirname(xlanb_runtime.__file__), "codegen", "cpu.py"),
                     "exec")
    namespace: dict = {}
    exec(source, namespace)
    monkeypatch.setattr(compiler, "generate", namespace["generate"])
    with pytest.raises(InternalCompilerError, match="IndexError"):
        xlanb.jit(lambda x: np.sum(x * 2, axis=1))(X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = xlanb.jit(lambda x: np.sum(x * 2, axis=1), must_compile=False)(X)
    np.testing.assert_array_equal(out, np.sum(X * 2, axis=1))
    assert any(w.category is FallbackWarning for w in caught)
