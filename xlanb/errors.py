"""Every user-facing error xlanb raises, one class per user mistake.

Each message says what happened, on which NumPy function or operator, at the user's
file:line, and what to do about it, e.g.

    `np.unique` at train.py:41: the output shape depends on the input values, so it is not
    inferable at compile time. Use `np.where(mask, x, 0)` or `xlanb.jit(f, must_compile=False)`.

The classes carry `op_name` (the NumPy spelling: `np.unique`, `operator +`, `x[...]`) and
`location` ("train.py:41", or None when unknown) so callers such as auto-clustering and the
compile report can show them without parsing the text.

Each class is also the built-in exception that NumPy (or JAX, where NumPy has no such error)
raises for the same mistake, so code written for NumPy catches ours: ShapeMismatchError is
a ValueError, DTypeError a TypeError, UnsupportedNumPyFunctionError a NotImplementedError,
ConcretizationError and DataDependentShapeError TypeErrors (as JAX's
ConcretizationTypeError), TracerLeakError a TypeError (as JAX's UnexpectedTracerError).
`except xlanb.CompileError` still catches them all.
"""
from __future__ import annotations

FALLBACK_HINT = "or let xlanb run this part with NumPy: `xlanb.jit(f, must_compile=False)`"


class CompileError(Exception):
    """Base class: a function could not be compiled as written.

    `detail` is the sentence about what went wrong, `hint` what to do about it.
    """

    def __init__(self, detail: str, *, op_name: str | None = None,
                 location: str | None = None, hint: str | None = None):
        self.detail = detail
        self.op_name = op_name
        self.location = location
        self.hint = hint
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.op_name:
            where = f"`{self.op_name}`"
        if self.location:
            where = f"{where} at {self.location}" if where else f"at {self.location}"
        text = f"{where}: {self.detail}" if where else self.detail
        text = text.rstrip(".") + "."
        if self.hint:
            text += " " + self.hint.rstrip(".") + "."
        return text


class UnsupportedNumPyFunctionError(CompileError, NotImplementedError):
    """A NumPy function, method or ufunc option that xlanb cannot trace.

    Also a NotImplementedError: the function exists, xlanb does not implement it (yet).

    Failing::

        @xlanb.jit
        def f(x):
            return np.cumsum(x)          # `np.cumsum` at f.py:3 is not supported when compiling

    Fix: rewrite it with supported functions, or compile the rest and run this call with
    NumPy: ``xlanb.jit(f, must_compile=False)``.
    """


class DataDependentShapeError(CompileError, TypeError):
    """The output's shape depends on the input's values (np.unique, np.nonzero, x[x > 0]).

    Also a TypeError, as JAX's ConcretizationTypeError for the same calls under `jax.jit`:
    a traced array has a shape and dtype but no values to size the result with.

    Failing::

        @xlanb.jit
        def f(x):
            return x[x > 0].sum()        # boolean mask: the shape is not inferable

    Fix: keep the shape static with a mask, ``np.where(x > 0, x, 0).sum()``, or
    ``xlanb.jit(f, must_compile=False)`` to run that step with NumPy.
    """


class ConcretizationError(CompileError, TypeError):
    """A traced value was needed as a concrete Python value (if, bool(), int(), np.asarray).

    Also a TypeError, as JAX's ConcretizationTypeError: the traced value is of the wrong
    kind (abstract) for the operation.

    While tracing, arrays are placeholders with a shape and dtype but no values, so Python
    control flow cannot branch on them.

    Failing::

        @xlanb.jit
        def f(x):
            if x.sum() > 0:              # `bool()` at f.py:3 on a traced value
                return x
            return -x

    Fix: ``return np.where(x.sum() > 0, x, -x)``; or mark the argument static with
    ``xlanb.jit(f, static_argnums=(0,))`` when it is a small setting, not data; or
    ``xlanb.jit(f, must_compile=False)`` to split the function at this point.
    """


class ShapeMismatchError(CompileError, ValueError):
    """Operands whose shapes do not fit together (broadcasting, matmul, concatenate).

    Also a ValueError, which NumPy raises for the same operands.

    Failing::

        @xlanb.jit
        def f(x, y):                     # x: (3, 4), y: (5,)
            return x + y                 # operands could not be broadcast together

    Fix: make the shapes agree, e.g. ``y[:4]`` or ``x[:, :, None]``; NumPy would raise the
    same error when the function runs eagerly.
    """


class DTypeError(CompileError, TypeError):
    """A dtype NumPy has no loop or cast for (`-` on bool, `~` on float, `+=` int by float).

    Also a TypeError, which NumPy raises for the same dtypes (its UFuncTypeError).

    Failing::

        @xlanb.jit
        def f(x):                        # x: float32
            return ~x                    # `operator ~` has no loop for float32

    Fix: convert explicitly, e.g. ``~(x > 0)`` or ``x.astype(np.int32)``.
    """


class ComplexGradientError(DTypeError, TypeError):
    """`grad` with respect to a complex argument, or of a complex loss.

    Gradients flow through complex steps (a real loss of real inputs), but a complex
    input or loss has more than one convention for its gradient, so xlanb asks you to
    pick the real parameters.

    Failing::

        xlanb.grad(lambda z: np.abs(z * z).sum())(z)        # z: complex128

    Fix: differentiate with respect to the real and imaginary parts as float arrays::

        g_re, g_im = xlanb.grad(lambda re, im: np.abs((re + 1j * im) ** 2).sum(),
                                argnums=(0, 1))(z.real, z.imag)
    """


class TracerLeakError(CompileError, TypeError):
    """A traced value was used after its function finished tracing (stored in a global).

    Also a TypeError, as JAX's UnexpectedTracerError.

    Fix: return the value from the function instead of keeping it elsewhere.
    """


# Raised by the runtime, re-exported here with the other user-facing errors.
from xlanb_runtime.codegen.cuda import CudaUnavailableError  # noqa: E402,F401


class ReadOnlyArrayError(CompileError, ValueError):
    """A write to a read-only array (an argument with ``writeable=False``), as NumPy refuses.

    Failing::

        x = np.arange(4.0); x.flags.writeable = False
        f(x)                             # def f(x): x[0] = 1

    Fix: pass a writeable array, or write to a copy (``x = x.copy()``) inside the function.
    """


class AliasingError(CompileError, ValueError):
    """Arguments share memory in a way xlanb cannot reproduce (different dtypes over the
    same bytes, or views of a buffer that is not a NumPy array).

    Failing::

        f(x, x.view(np.int32))           # def f(a, b): a[0] = 1.0; return b

    Fix: pass copies (``f(x, x.view(np.int32).copy())``), or run the function with NumPy.
    """


class UnsupportedDTypeError(DTypeError, TypeError):
    """An argument whose dtype xlanb does not compile: strings, Python objects, structured
    records, datetimes and timedeltas without a unit, long double, or a byte order other
    than the machine's; or an operation on datetime64/timedelta64 arrays that xlanb does
    not lower (`np.median(td)`).  xlanb compiles bool, the integers, float16/32/64,
    complex64/128 and datetime64/timedelta64 with a unit (as int64 counts).

    Failing::

        f(np.arange(4, dtype=">f8"))          # big-endian float64

    Fix: convert at the call (``x.astype(np.float64)``: native byte order, or float64
    for long double), or run such calls with NumPy: ``xlanb.jit(f, must_compile=False)``.
    """


class ArraySubclassError(CompileError, TypeError):
    """An argument is an ndarray subclass (np.matrix, a masked array, your own), whose
    operators and functions do something else than ndarray's: a trace of plain ndarrays
    would silently drop that (np.matrix's ``*`` is a matrix product).  np.memmap is
    accepted (it only maps a file).

    Failing::

        f(np.matrix([[1.0, 2.0], [3.0, 4.0]]))      # def f(a): return a * a

    Fix: pass ``np.asarray(m)`` if ndarray semantics are meant; under
    ``must_compile=False`` such a call runs with NumPy.
    """


class InternalCompilerError(CompileError, RuntimeError):
    """xlanb itself failed on a program it should have compiled or refused by name.

    It is a bug in xlanb: the message names the operation and your line.  Meanwhile,
    ``xlanb.jit(f, must_compile=False)`` runs the failing part with NumPy.
    """
