"""`xlanb.grad` and `xlanb.value_and_grad`: reverse-mode gradients of plain NumPy code.

    def loss_fn(params, x, labels):
        logits = x @ params["w"] + params["b"]
        return xlanb.nn.cross_entropy(logits, labels)

    @xlanb.jit
    def train_step(params, x, labels):
        loss, grads = xlanb.value_and_grad(loss_fn)(params, x, labels)
        return {k: params[k] - 0.5 * grads[k] for k in params}, loss

Inside `jit` the function is traced into the caller's graph and the backward pass is built
right after it by the IR's VJP rules, so forward and backward fuse together.  Called
outside `jit` it traces, differentiates and runs op by op through the interpreter.
Semantics follow JAX: `argnums` picks the differentiated arguments (pytrees allowed),
`has_aux` lets the function return `(loss, aux)`; the loss must be a float scalar and
differentiated inputs must be floats.
"""
from __future__ import annotations

import functools
from typing import Callable, Sequence

import numpy as np

from xlanb_runtime.autodiff import vjp
from xlanb_runtime.ir import Node, Op
from xlanb_runtime.ir import builder

from .errors import ComplexGradientError
from .pytree import tree_flatten, tree_unflatten
from .tracing.source import user_location
from .tracing.tracer import Tracer, current_context


def _argnums_tuple(argnums) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _fresh_variable(context, leaf, where: str) -> Tracer:
    """A new node standing for `leaf`, so the gradient flows only through this use."""
    if isinstance(leaf, Tracer):
        node = leaf.node
    elif isinstance(leaf, (np.ndarray, np.generic, float, complex)):
        node = builder.constant(np.asarray(leaf))
    else:
        raise TypeError(f"{where}: cannot differentiate with respect to a "
                        f"{type(leaf).__name__}; pass float arrays")
    if node.dtype.kind == "c":
        raise _complex_error(where, f"an input has dtype {node.dtype}")
    if node.dtype.kind != "f":
        raise TypeError(f"{where}: grad requires floating-point inputs, but an input has "
                        f"dtype {node.dtype}. Differentiate only float arguments (pick them "
                        "with argnums) or convert with .astype(np.float32)")
    marker = Node(Op.RESHAPE, (node,), node.shape, node.dtype, None, user_location())
    return context.wrap(marker)


def _traced_value_and_grad(context, fun, argnums, has_aux, args, kwargs):
    where = f"value_and_grad({getattr(fun, '__name__', 'f')})"
    args = list(args)
    variables: list[Tracer] = []
    trees = []
    for i in argnums:
        if i >= len(args):
            raise TypeError(f"{where}: argnums={argnums} but only {len(args)} positional "
                            "arguments were given")
        leaves, tree = tree_flatten(args[i])
        fresh = [_fresh_variable(context, leaf, where) for leaf in leaves]
        variables.extend(fresh)
        trees.append((tree, len(fresh)))
        args[i] = tree_unflatten(tree, fresh)
    out = fun(*args, **kwargs)
    loss, aux = (out if has_aux else (out, None))
    if has_aux and not (isinstance(out, tuple) and len(out) == 2):
        raise TypeError(f"{where}: has_aux=True needs the function to return (loss, aux)")
    loss_node = _scalar_loss(context, loss, where)
    with builder.location(loss_node.loc):
        one = builder.constant(np.array(1, loss_node.dtype))
        grads = vjp([loss_node], [v.node for v in variables], [one])
    grad_tracers = [context.wrap(g) for g in grads]
    results, start = [], 0
    for tree, count in trees:
        results.append(tree_unflatten(tree, grad_tracers[start:start + count]))
        start += count
    return ((loss, aux) if has_aux else loss), tuple(results)


def _scalar_loss(context, loss, where: str) -> Node:
    if isinstance(loss, Tracer):
        node = loss.node
    else:
        node = builder.constant(np.asarray(loss, dtype=np.result_type(loss, np.float32)))
    if node.dtype.kind == "c":
        raise _complex_error(where, f"the function returns {node.dtype}")
    if node.shape != () or node.dtype.kind != "f":
        raise TypeError(f"{where}: the function must return a float scalar (the loss), got "
                        f"{node.dtype} with shape {node.shape}; reduce it with .sum() or "
                        ".mean() first")
    return node


def _complex_error(where: str, what: str) -> ComplexGradientError:
    return ComplexGradientError(
        f"{what}; gradients of complex inputs or losses are not supported (gradients "
        "flow through complex steps between real inputs and a real loss)",
        op_name=where, location=user_location(),
        hint="Differentiate with respect to the real and imaginary parts as float arrays, "
             "e.g. `f(re, im)` computing `z = re + 1j * im`, or return a real loss such as "
             "`np.abs(z).sum()`")


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    """A function returning `(fun(*args), gradient w.r.t. args[argnums])`, like JAX's."""
    numbers = _argnums_tuple(argnums)
    keep_int = isinstance(argnums, int)

    @functools.wraps(fun)
    def traced(*args, **kwargs):
        context = current_context()
        loss_aux, grads = _traced_value_and_grad(context, fun, numbers, has_aux, args, kwargs)
        return loss_aux, (grads[0] if keep_int else grads)

    eager = None

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        nonlocal eager
        if current_context() is not None:
            return traced(*args, **kwargs)
        if eager is None:
            from .api import JitFunction
            eager = JitFunction(traced)
        return eager.run_interpreted(args, kwargs)
    return wrapped


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    """The gradient of a float-scalar function, like `jax.grad`."""
    both = value_and_grad(fun, argnums, has_aux)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        value, grads = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapped


__all__ = ["grad", "value_and_grad"]
