"""`xlanb.distribute`: mirrored data-parallel replicas, in the style of `tf.distribute`.

    strategy = xlanb.distribute.MultiWorkerMirroredStrategy()     # one replica per MPI rank

    @xlanb.jit
    def step_fn(params, x, y):
        loss, grads = xlanb.value_and_grad(loss_fn)(params, x, y)
        grads = xlanb.distribute.get_replica_context().all_reduce("mean", grads)
        return sgd(params, grads), loss

    for x, y in batches:                      # the global batch, the same on every rank
        params, loss = strategy.run(step_fn, args=(params, *strategy.shard((x, y))))

Run it with `mpiexec -n 4 python train.py`.  `MirroredStrategy(num_replicas=k)` runs the
same code on k threads of one process (`run` then takes and returns `PerReplica` values).

Inside `xlanb.jit`, `all_reduce` is an `all-reduce` IR node: the compiler packs a step's
all-reduces into one buffer and the compiled program reduces it in place through the
communicator `run` installed (`xlanb_runtime.collectives.using`).  On concrete arrays it
reduces at once.  Outside any strategy there is one replica and `all_reduce` is the identity.

Failures never hang the job: replicas about to run different programs raise
`ReplicaMismatchError` on every replica; an exception on one MPI rank prints it with the
rank and aborts the job (MPI_Abort); on threads it is re-raised in the caller once the other
replicas have been released.
"""
from __future__ import annotations

import contextvars
import enum
import sys
import threading
import traceback
from typing import Any, Callable, Sequence

import numpy as np

from xlanb_runtime import collectives
from xlanb_runtime.collectives.errors import (CollectiveAbortedError, CollectiveTimeoutError,
                                              ReplicaMismatchError)
from xlanb_runtime.collectives.local import DEFAULT_TIMEOUT_S, LocalGroup
from xlanb_runtime.ir import Op
from xlanb_runtime.ir import builder as B

from .pytree import tree_flatten, tree_unflatten
from .tracing.lowering import translate_errors
from .tracing.lowering.promote import to_node, wrap
from .tracing.source import entry
from .tracing.tracer import Tracer, current_context

__all__ = ["CollectiveAbortedError", "CollectiveTimeoutError", "MirroredStrategy",
           "MultiWorkerMirroredStrategy", "PerReplica", "ReduceOp", "ReplicaContext",
           "ReplicaMismatchError", "get_replica_context"]


class ReduceOp(str, enum.Enum):
    """How values combine across replicas (a plain string "sum", "mean"... works too)."""
    SUM = "sum"
    MEAN = "mean"
    MAX = "max"
    MIN = "min"


def _kind(op: ReduceOp | str) -> str:
    try:
        return ReduceOp(op.lower() if isinstance(op, str) else op).value
    except ValueError:
        raise ValueError(f"unknown reduce op {op!r}; use ReduceOp.SUM, MEAN, MAX or MIN "
                         "(or the strings 'sum', 'mean', 'max', 'min')") from None


class PerReplica:
    """One value per replica (`values[i]` belongs to replica i), like TF's PerReplica.

    `MirroredStrategy.run` hands `values[i]` to replica i wherever a PerReplica appears in
    its arguments, and returns the replicas' results as the same structure with PerReplica
    leaves.
    """
    __slots__ = ("values",)

    def __init__(self, values: Sequence[Any]):
        self.values = tuple(values)

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        body = ",\n".join(f"  {i}: {v!r}" for i, v in enumerate(self.values))
        return f"PerReplica({{\n{body}\n}})"


def _is_per_replica(x: Any) -> bool:
    return isinstance(x, PerReplica)


# -- replica context --------------------------------------------------------------------------

class ReplicaContext:
    """What a replica knows about itself inside `strategy.run` (see get_replica_context).

    `replica_id_in_sync_group` is a Python int: inside `xlanb.jit` it becomes a constant, so
    a program computing with it differs from replica to replica (the program check before
    the first all-reduce then raises ReplicaMismatchError).  Pass per-replica values as
    arguments instead (`PerReplica`, `strategy.shard`).
    """

    def __init__(self, strategy: "Strategy | None", replica_id: int, num_replicas: int):
        self.strategy = strategy
        self.replica_id_in_sync_group = replica_id
        self.num_replicas_in_sync = num_replicas

    def all_reduce(self, op: ReduceOp | str, value: Any) -> Any:
        """`value` (a pytree of arrays) reduced across the replicas in sync, leaf by leaf.

        Under `xlanb.jit` every leaf becomes an `all-reduce` node of the compiled program;
        on concrete arrays the reduction happens now (every replica must call it).  MEAN of
        integers gives float64, like np.mean.
        """
        kind = _kind(op)
        leaves, treedef = tree_flatten(value)
        return tree_unflatten(treedef, [_all_reduce_leaf(kind, leaf, self.num_replicas_in_sync)
                                        for leaf in leaves])

    def __repr__(self) -> str:
        return (f"ReplicaContext(replica_id_in_sync_group={self.replica_id_in_sync_group}, "
                f"num_replicas_in_sync={self.num_replicas_in_sync})")


_DEFAULT_CONTEXT = ReplicaContext(None, 0, 1)
_replica_context: contextvars.ContextVar[ReplicaContext] = contextvars.ContextVar(
    "xlanb_replica_context", default=_DEFAULT_CONTEXT)


def get_replica_context() -> ReplicaContext:
    """This replica's context inside `strategy.run`; outside, a context of one replica
    (its `all_reduce` is the identity), as in TF."""
    return _replica_context.get()


def _all_reduce_leaf(kind: str, leaf: Any, replicas: int) -> Any:
    if isinstance(leaf, Tracer) or current_context() is not None:
        with entry("ReplicaContext.all_reduce"), translate_errors():
            node = to_node(leaf)
            if kind == "mean" and node.dtype.kind != "f":
                node = B.convert(node, np.float64)
            if kind == "mean" and replicas > 1:
                # a sum, then a scaling the compiler fuses into the consumers (the
                # optimizer update): no extra pass over the reduced buffer
                total = B.all_reduce(node, "sum")
                scale = B.broadcast(B.constant(np.array(1 / replicas, node.dtype)),
                                    node.shape)
                return wrap(B.binary(Op.MUL, total, scale))
            return wrap(B.all_reduce(node, kind))
    buffer = np.array(leaf, order="C", copy=True)
    if kind == "mean" and buffer.dtype.kind != "f":
        buffer = buffer.astype(np.float64)
    communicator = collectives.current_communicator()
    if communicator is not None:
        communicator.all_reduce(buffer, kind)
    return buffer


# -- strategies -------------------------------------------------------------------------------

class Strategy:
    """What MirroredStrategy and MultiWorkerMirroredStrategy share."""

    num_replicas_in_sync: int = 1

    def run(self, fn: Callable, args: Sequence[Any] = (), kwargs: dict | None = None) -> Any:
        raise NotImplementedError

    def shard(self, global_batch: Any) -> Any:
        raise NotImplementedError

    def reduce(self, op: ReduceOp | str, value: Any, axis: int | None = None) -> Any:
        raise NotImplementedError

    def experimental_local_results(self, value: Any) -> tuple:
        """The values of this process's replicas, as a tuple of pytrees (one per replica)."""
        raise NotImplementedError

    def _slice(self, global_batch: Any, index: int) -> Any:
        """Replica `index`'s contiguous slice of axis 0 of every array leaf."""
        leaves, treedef = tree_flatten(global_batch)
        k = self.num_replicas_in_sync
        out = []
        for leaf in leaves:
            if isinstance(leaf, np.ndarray) and leaf.ndim >= 1:
                n = leaf.shape[0]
                if n % k:
                    raise ValueError(
                        f"shard: a global batch of {n} rows does not split evenly over {k} "
                        f"replicas; use a batch size divisible by {k} (datasets.batches drops "
                        "remainders), so every replica runs the same shapes")
                size = n // k
                leaf = leaf[index * size:(index + 1) * size]
            out.append(leaf)
        return tree_unflatten(treedef, out)


def _local_reduce(kind: str, values: Sequence[np.ndarray], axis) -> np.ndarray:
    """Reduce same-shaped per-replica arrays (in replica order) and, with `axis`, along it."""
    reducer = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum}[kind]
    if axis is not None:
        counts = [np.prod([np.shape(v)[a] for a in np.atleast_1d(axis)]) for v in values]
        inner = {"sum": np.sum, "mean": np.sum, "max": np.max, "min": np.min}[kind]
        values = [inner(v, axis=axis) for v in values]
    result = np.array(values[0], copy=True)
    for other in values[1:]:
        result = reducer(result, other)
    if kind == "mean":
        result = result / (sum(counts) if axis is not None else len(values))
    return np.asarray(result)


class MirroredStrategy(Strategy):
    """`num_replicas` replicas on threads of this process, all-reducing with each other.

        strategy = MirroredStrategy(num_replicas=2)
        xs = strategy.shard(x)                            # PerReplica of 2 slices
        out = strategy.run(step_fn, args=(params, xs))    # PerReplica leaves
        total = strategy.reduce("sum", out, axis=None)

    Arguments: a `PerReplica` (anywhere in `args`/`kwargs`) gives replica i its `values[i]`;
    anything else is passed to every replica.  Collectives time out after `timeout` seconds
    (a stuck replica raises CollectiveTimeoutError instead of hanging).
    """

    def __init__(self, num_replicas: int = 2, timeout: float = DEFAULT_TIMEOUT_S):
        if num_replicas < 1:
            raise ValueError(f"num_replicas must be at least 1, got {num_replicas}")
        self.num_replicas_in_sync = num_replicas
        self._group = LocalGroup(num_replicas, timeout)

    @property
    def communicators(self):
        return self._group.communicators

    def run(self, fn: Callable, args: Sequence[Any] = (), kwargs: dict | None = None) -> Any:
        """Run `fn` on every replica (each in its own thread); results as PerReplica leaves."""
        k = self.num_replicas_in_sync
        calls = [self._select((tuple(args), dict(kwargs or {})), i) for i in range(k)]
        results: list[Any] = [None] * k
        errors: list[BaseException | None] = [None] * k
        group = self._group

        def replica(i: int) -> None:
            token = _replica_context.set(ReplicaContext(self, i, k))
            try:
                with collectives.using(group.communicators[i]):
                    results[i] = fn(*calls[i][0], **calls[i][1])
            except BaseException as exc:          # noqa: BLE001 - re-raised by the caller
                errors[i] = exc
                group.abort()                     # release replicas waiting for this one
            finally:
                _replica_context.reset(token)

        # Each replica runs in a copy of the caller's context (disable_jit etc. carry over).
        contexts = [contextvars.copy_context() for _ in range(k)]
        threads = [threading.Thread(target=contexts[i].run, args=(replica, i),
                                    name=f"xlanb-replica-{i}", daemon=True)
                   for i in range(1, k)]
        for thread in threads:
            thread.start()
        contexts[0].run(replica, 0)               # replica 0 runs on the caller's thread
        for thread in threads:
            thread.join()
        if any(e is not None for e in errors):
            group.reset()
            raise _first_error(errors)
        return _regroup(results)

    def _select(self, tree: Any, index: int) -> Any:
        leaves, treedef = tree_flatten(tree, is_leaf=_is_per_replica)
        out = []
        for leaf in leaves:
            if isinstance(leaf, PerReplica):
                if len(leaf.values) != self.num_replicas_in_sync:
                    raise ValueError(f"a PerReplica with {len(leaf.values)} values was passed "
                                     f"to a strategy with {self.num_replicas_in_sync} "
                                     "replicas")
                leaf = leaf.values[index]
            out.append(leaf)
        return tree_unflatten(treedef, out)

    def shard(self, global_batch: Any) -> Any:
        """`global_batch` with every array leaf a PerReplica of contiguous axis-0 slices."""
        slices = [self._slice(global_batch, i) for i in range(self.num_replicas_in_sync)]
        return _regroup(slices)

    def reduce(self, op: ReduceOp | str, value: Any, axis: int | None = None) -> Any:
        """Combine per-replica values (a pytree with PerReplica leaves) into one; with
        `axis`, also along that axis (MEAN over axis 0 of per-example losses is the global
        batch mean).  A leaf that is not PerReplica counts as the same on every replica."""
        kind = _kind(op)
        leaves, treedef = tree_flatten(value, is_leaf=_is_per_replica)
        k = self.num_replicas_in_sync
        out = [_local_reduce(kind, leaf.values if isinstance(leaf, PerReplica) else [leaf] * k,
                             axis) for leaf in leaves]
        return tree_unflatten(treedef, out)

    def experimental_local_results(self, value: Any) -> tuple:
        return tuple(self._select(value, i) for i in range(self.num_replicas_in_sync))


def _regroup(per_replica: list[Any]) -> Any:
    """Replica results with one structure -> that structure with PerReplica leaves;
    otherwise a PerReplica of the whole results."""
    flat = [tree_flatten(r) for r in per_replica]
    treedef = flat[0][1]
    if any(d != treedef for _, d in flat):
        return PerReplica(per_replica)
    columns = zip(*(leaves for leaves, _ in flat))
    return tree_unflatten(treedef, [PerReplica(c) for c in columns])


def _first_error(errors: list[BaseException | None]) -> BaseException:
    """The replica error to re-raise: the first that is not a consequence of another's."""
    for i, exc in enumerate(errors):
        if exc is not None and not isinstance(exc, CollectiveAbortedError):
            exc.add_note(f"(raised in replica {i} of {len(errors)} of a MirroredStrategy)")
            return exc
    return next(e for e in errors if e is not None)


class MultiWorkerMirroredStrategy(Strategy):
    """One replica per MPI rank of `comm` (default COMM_WORLD); launch with `mpiexec`.

    `run(fn, args)` calls `fn` once, on this rank's arguments (`shard` gives this rank's
    slice of a global batch), with the MPI communicator installed for the compiled
    program's all-reduces.  An exception on a rank prints it with the rank and aborts the
    whole job; ReplicaMismatchError is raised on every rank instead (all of them see it).
    Under plain `python` (no mpiexec) there is one replica.
    """

    def __init__(self, comm: Any = None):
        from xlanb_runtime.collectives.mpi import MpiCommunicator
        self.communicator = MpiCommunicator(comm)
        self.num_replicas_in_sync = self.communicator.size
        if self.num_replicas_in_sync > 1:
            _install_abort_hook(self.communicator)

    @property
    def rank(self) -> int:
        return self.communicator.rank

    @property
    def is_chief(self) -> bool:
        """True on rank 0 (the one that logs results and writes checkpoints)."""
        return self.communicator.rank == 0

    def run(self, fn: Callable, args: Sequence[Any] = (), kwargs: dict | None = None) -> Any:
        args, kwargs = self._local((tuple(args), dict(kwargs or {})))
        communicator = self.communicator
        token = _replica_context.set(ReplicaContext(self, communicator.rank, communicator.size))
        try:
            with collectives.using(communicator):
                return fn(*args, **kwargs)
        except ReplicaMismatchError:
            raise                                  # every rank raises it: nobody waits
        except Exception as exc:
            if communicator.size == 1:
                raise
            _abort(communicator, exc, "in strategy.run")
        finally:
            _replica_context.reset(token)

    def _local(self, tree: Any) -> Any:
        """PerReplica leaves (of one value, or one per rank) -> this rank's value."""
        leaves, treedef = tree_flatten(tree, is_leaf=_is_per_replica)
        out = []
        for leaf in leaves:
            if isinstance(leaf, PerReplica):
                if len(leaf.values) == 1:
                    leaf = leaf.values[0]
                elif len(leaf.values) == self.num_replicas_in_sync:
                    leaf = leaf.values[self.rank]
                else:
                    raise ValueError(f"a PerReplica with {len(leaf.values)} values was passed "
                                     f"to a strategy with {self.num_replicas_in_sync} ranks")
            out.append(leaf)
        return tree_unflatten(treedef, out)

    def shard(self, global_batch: Any) -> Any:
        """This rank's contiguous slice of axis 0 of every array in `global_batch`."""
        return self._slice(global_batch, self.communicator.rank)

    def reduce(self, op: ReduceOp | str, value: Any, axis: int | None = None) -> Any:
        """This rank's value (a pytree) combined with every other rank's, now (a collective:
        every rank must call it); with `axis`, also along that axis."""
        kind = _kind(op)
        leaves, treedef = tree_flatten(self._local(value))
        return tree_unflatten(treedef, [self._reduce_leaf(kind, leaf, axis) for leaf in leaves])

    def _reduce_leaf(self, kind: str, leaf: Any, axis) -> np.ndarray:
        comm = self.communicator
        value = np.asarray(leaf)
        if axis is None:
            return _all_reduce_with(comm, kind, value)
        if kind != "mean":
            inner = {"sum": np.sum, "max": np.max, "min": np.min}[kind]
            return _all_reduce_with(comm, kind, inner(value, axis=axis))
        count = np.prod([value.shape[a] for a in np.atleast_1d(axis)])
        total = _all_reduce_with(comm, "sum", np.sum(value, axis=axis))
        counts = _all_reduce_with(comm, "sum", np.array(count, np.float64))
        return np.asarray(total / counts)

    def experimental_local_results(self, value: Any) -> tuple:
        return (self._local(value),)


def _all_reduce_with(communicator, kind: str, value: np.ndarray) -> np.ndarray:
    buffer = np.array(value, order="C", copy=True)
    if kind == "mean" and buffer.dtype.kind != "f":
        buffer = buffer.astype(np.float64)
    communicator.all_reduce(buffer, kind)
    return buffer


# -- ending the job when one rank fails -------------------------------------------------------

def _abort(communicator, exc: BaseException, where: str) -> None:
    text = "".join(traceback.format_exception(exc)).rstrip()
    communicator.abort(f"{type(exc).__name__} {where}; aborting all {communicator.size} "
                       f"ranks (MPI_Abort) so none waits forever:\n{text}")


_hook_installed = False


def _install_abort_hook(communicator) -> None:
    """An uncaught exception on one rank (outside strategy.run too) aborts the job; MPI
    would otherwise leave the other ranks blocked in their next collective."""
    global _hook_installed
    if _hook_installed:
        return
    _hook_installed = True
    previous = sys.excepthook

    def hook(kind, exc, tb):
        if isinstance(exc, ReplicaMismatchError) or not isinstance(exc, Exception):
            # ReplicaMismatchError: every rank has it and exits on its own.  KeyboardInterrupt
            # and friends: leave them to the launcher.
            sys.stderr.write(f"[xlanb rank {communicator.rank}/{communicator.size}] ")
            previous(kind, exc, tb)
            return
        _abort(communicator, exc.with_traceback(tb), "uncaught")

    sys.excepthook = hook
