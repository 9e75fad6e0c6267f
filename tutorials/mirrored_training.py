"""Mirrored data-parallel training of a digits MLP over MPI.

    mpiexec -n 2 python tutorials/mirrored_training.py --steps 300 --checkpoint /tmp/mlp.npz
    mpiexec -n 2 python tutorials/mirrored_training.py --steps 600 --checkpoint /tmp/mlp.npz \
        --resume                                      # continues from step 300
    python tutorials/mirrored_training.py             # one rank works too

Every rank builds the same global batch (same seed), keeps its own slice of it
(`strategy.shard`), and runs the same compiled step: forward, `value_and_grad`, an
all-reduce MEAN of the gradients (one MPI call per step once the compiler has packed them),
and the SGD update.  Averaging the gradients of equal slices gives the gradient of the
global batch, so the replicas stay identical and the result is the one a single process
would get with the whole batch.  Rank 0 prints the test accuracy and writes the checkpoint;
the step counter is stored in it, so `--resume` continues the same run.
"""
from __future__ import annotations

import argparse
import itertools

import numpy as np

import xlanb
from xlanb import checkpoint, datasets, distribute, optim
from xlanb.distribute import ReduceOp
from xlanb.models import mlp


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300, help="total steps (default 300)")
    parser.add_argument("--batch", type=int, default=64,
                        help="global batch size, split evenly over the ranks (default 64)")
    parser.add_argument("--hidden", default="64,32",
                        help="hidden layer sizes (default 64,32: 3 layers, 6 arrays)")
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--checkpoint", default=None, help="where rank 0 saves (.npz)")
    parser.add_argument("--save-every", type=int, default=0,
                        help="also save every N steps (default: only at the end)")
    parser.add_argument("--resume", action="store_true",
                        help="start from --checkpoint (its step, params and optimizer state)")
    return parser.parse_args(argv)


def make_train_step(optimizer: optim.Optimizer):
    @xlanb.jit
    def train_step(params, opt_state, x, y):
        loss, grads = xlanb.value_and_grad(mlp.loss)(params, x, y)
        context = distribute.get_replica_context()
        grads = context.all_reduce(ReduceOp.MEAN, grads)     # the global batch's gradient
        params, opt_state = optimizer.update(params, grads, opt_state)
        return params, opt_state, loss
    return train_step


def main(argv=None) -> dict:
    args = parse_args(argv)
    strategy = distribute.MultiWorkerMirroredStrategy()
    rank, size = strategy.rank, strategy.num_replicas_in_sync

    def log(message: str) -> None:
        print(f"[rank {rank}/{size}] {message}", flush=True)

    (x_train, y_train), (x_test, y_test) = datasets.load_digits(seed=args.seed)
    dtype = np.dtype(args.dtype)
    x_train, x_test = x_train.astype(dtype), x_test.astype(dtype)
    sizes = (x_train.shape[1], *(int(h) for h in args.hidden.split(",") if h), 10)
    optimizer = optim.sgd(args.lr, momentum=args.momentum)

    if args.resume:
        if not args.checkpoint:
            raise SystemExit("--resume needs --checkpoint PATH")
        state = checkpoint.restore(args.checkpoint)
        start, params, opt_state = state["step"], state["params"], state["opt_state"]
        log(f"resumed from {args.checkpoint} at step {start}")
    else:
        start = 0
        params = mlp.init(args.seed, sizes, dtype=dtype)
        opt_state = optimizer.init(params)

    def save(step: int) -> None:
        if args.checkpoint and checkpoint.save(args.checkpoint, {
                "step": step, "params": params, "opt_state": opt_state}):
            log(f"step {step}: checkpoint saved to {args.checkpoint}")

    train_step = make_train_step(optimizer)
    # The same global batches on every rank (one seed); a resumed run skips those done.
    stream = datasets.batches(x_train, y_train, args.batch, seed=args.seed)
    for step, (x, y) in enumerate(itertools.islice(stream, start, args.steps), start + 1):
        params, opt_state, loss = strategy.run(
            train_step, args=(params, opt_state, *strategy.shard((x, y))))
        if step % args.log_every == 0 or step == args.steps:
            log(f"step {step} loss {float(loss):.4f}")
        if args.save_every and step % args.save_every == 0 and step != args.steps:
            save(step)

    # The replicas must hold the same parameters: compare a checksum across ranks.
    checksum = sum(float(np.sum(leaf, dtype=np.float64))
                   for leaf in xlanb.pytree.tree_leaves(params))
    low = strategy.reduce(ReduceOp.MIN, np.float64(checksum))
    high = strategy.reduce(ReduceOp.MAX, np.float64(checksum))
    if strategy.is_chief:
        accuracy = mlp.accuracy(params, x_test, y_test)
        log(f"test accuracy {accuracy:.4f} after {args.steps} steps on {size} "
            f"replica(s) (global batch {args.batch}); replicas in sync: {low == high}")
    save(args.steps)
    return params


if __name__ == "__main__":
    main()
