"""Integer and graph algorithms: shortest paths with np.minimum and np.add.outer, relaxation
with boolean arrays, closures, modular arithmetic, bit operations, integer overflow and
division semantics, loops over integer state."""
import numpy as np

from xlanb.errors import ConcretizationError, UnsupportedNumPyFunctionError

from . import program


def _weights(r, n=8, dtype=np.int64):
    w = r.integers(1, 10, (n, n)).astype(dtype)
    w[r.random((n, n)) < 0.4] = 1000
    np.fill_diagonal(w, 0)
    return w


@program(lambda r: (_weights(r),))
def floyd_warshall_out(D):
    for k in range(D.shape[0]):
        np.minimum(D, D[:, k, None] + D[None, k, :], out=D)


@program(lambda r: (_weights(r), np.full((8, 8), -1, dtype=np.int64)))
def floyd_warshall_predecessor(D, P):
    n = D.shape[0]
    for k in range(n):
        through = D[:, k][:, None] + D[k, :][None, :]
        better = through < D
        D[better] = through[better]
        P[better] = k


@program(lambda r: (_weights(r).astype(np.float64),))
def floyd_warshall_add_outer(dist):
    for k in range(len(dist)):
        dist = np.minimum(dist, np.add.outer(dist[:, k], dist[k, :]))
    return dist


@program(lambda r: (_weights(r).astype(np.float64), 0))
def bellman_ford_boolean_relax(W, source):
    n = W.shape[0]
    dist = np.full(n, np.inf)
    dist[source] = 0.0
    for _ in range(n - 1):
        cand = (dist[:, None] + W).min(axis=0)
        changed = cand < dist
        dist[changed] = cand[changed]
    return dist


@program(lambda r: (r.random((7, 7)) < 0.3, 0))
def bfs_levels_boolean(adj, start):
    n = adj.shape[0]
    level = np.full(n, -1, dtype=np.int64)
    frontier = np.zeros(n, dtype=bool)
    frontier[start] = True
    visited = frontier.copy()
    level[start] = 0
    for d in range(1, n):
        nxt = (frontier.astype(np.int64) @ adj.astype(np.int64) > 0) & ~visited
        level[nxt] = d
        visited |= nxt
        frontier = nxt
    return level, visited


@program(lambda r: (r.random((6, 6)) < 0.25,))
def transitive_closure_inplace(R):
    for k in range(R.shape[0]):
        R |= R[:, k, None] & R[None, k, :]


@program(lambda r: (r.integers(2, 50, 8), r.integers(0, 20, 8), 97))
def modular_power(base, exp, m):
    result = np.ones_like(base)
    b = base % m
    e = exp.copy()
    for _ in range(5):
        odd = (e & 1) == 1
        result = np.where(odd, (result * b) % m, result)
        b = (b * b) % m
        e >>= 1
    return result


@program(lambda r: (12, 12345))
def lcg_sequence(n, seed):
    out = np.empty(n, dtype=np.int64)
    s = seed
    for i in range(n):
        s = (1103515245 * s + 12345) % 2 ** 31
        out[i] = s
    return out


@program(lambda r: (r.integers(0, 2 ** 16, 10),))
def popcount_loop(x):
    count = np.zeros_like(x)
    for b in range(16):
        count += (x >> b) & 1
    return count


@program(lambda r: (r.integers(0, 1024, 10),))
def gray_code_roundtrip(n):
    g = n ^ (n >> 1)
    back = g.copy()
    shift = g >> 1
    for _ in range(10):
        back ^= shift
        shift >>= 1
    return g, back


@program(lambda r: (r.integers(1, 2 ** 31, 8),))
def xorshift32_masked(state):
    mask = 0xFFFFFFFF
    for _ in range(3):
        state ^= (state << 13) & mask
        state ^= state >> 17
        state ^= (state << 5) & mask
    return state


@program(lambda r: (r.integers(1, 200, 8), r.integers(1, 200, 8)))
def gcd_vectorized(a, b):
    a, b = a.copy(), b.copy()
    for _ in range(12):
        nz = b > 0
        safe = np.where(nz, b, 1)
        a, b = np.where(nz, b, a), np.where(nz, a % safe, 0)
    return a


@program(lambda r: (r.integers(0, 20, 5), r.integers(0, 20, 6), 7))
def outer_tables_mod(a, b, p):
    return np.add.outer(a, b) % p, np.multiply.outer(a, b) % p, np.subtract.outer(a, b)


@program(lambda r: ((r.random((6, 6)) < 0.4).astype(np.int32),))
def degree_counts_int32(A):
    A = A | A.T
    deg = A.sum(axis=1)
    return deg, A, np.int32(2) * deg


@program(lambda r: (r.integers(-30000, 30000, 8).astype(np.int32), 100000))
def int32_wraparound(x, k):
    y = x * np.int32(k)
    z = x.astype(np.int64) * k
    return y, z


@program(lambda r: (r.integers(-20, 20, 9), r.choice(np.array([-7, -3, 2, 5]), 9)))
def floor_division_negative(a, b):
    return a // b, a % b, np.fmod(a, b), np.divmod(a, b), -a // 3


@program(lambda r: (r.integers(0, 5, 9),))
def prefix_sum_int_loop(x):
    for i in range(1, len(x)):
        x[i] += x[i - 1]
    return x[-1]


@program(lambda r: (r.integers(0, 4, 12), 4))
def histogram_by_loop(v, k):
    counts = np.zeros(k, dtype=np.int64)
    for i in range(v.shape[0]):
        counts[v[i]] += 1
    return counts


@program(lambda r: (r.integers(0, 5, 12), 5))
def histogram_add_at(v, k):
    counts = np.zeros(k, dtype=np.int64)
    np.add.at(counts, v, 1)
    return counts


@program(lambda r: (r.random(8) > 0.5, r.random(8) > 0.3))
def boolean_logic(a, b):
    return (np.logical_and(a, b), np.logical_or(a, ~b), np.logical_xor(a, b), a ^ b,
            np.any(a & b), np.all(a | b), np.count_nonzero(a))


@program(lambda r: (30,), jit_error=ConcretizationError)
def sieve_with_if(n):
    is_prime = np.ones(n, dtype=bool)
    is_prime[:2] = False
    for i in range(2, int(n ** 0.5) + 1):
        if is_prime[i]:
            is_prime[i * i::i] = False
    return is_prime


@program(lambda r: (np.arange(1, 11),))
def collatz_fixed_steps(n):
    steps = np.zeros_like(n)
    x = n.copy()
    for _ in range(20):
        active = x != 1
        x = np.where(active, np.where(x % 2 == 0, x // 2, 3 * x + 1), x)
        steps += active
    return steps, x


@program(lambda r: (r.integers(0, 6, 9), r.integers(0, 6, 9), 6),
         jit_error=UnsupportedNumPyFunctionError)
def adjacency_from_edges(src, dst, n):
    A = np.zeros((n, n), dtype=np.int64)
    A[src, dst] = np.arange(1, len(src) + 1)
    return A


@program(lambda r: (r.integers(0, 6, 9), r.integers(0, 6, 9), 6))
def adjacency_mark_edges(src, dst, n):
    A = np.zeros((n, n), dtype=bool)
    A[src, dst] = True
    A[dst, src] = True
    return A, A.sum()


@program(lambda r: (r.integers(-50, 50, (4, 5)),))
def argmin_argmax_int(x):
    return x.argmax(axis=1), np.argmin(x, axis=0), x.max(), np.abs(x).sum(axis=0)


@program(lambda r: (r.integers(0, 3, (5, 5)).astype(np.int64),))
def connected_components_labels(adj):
    n = adj.shape[0]
    A = (adj + adj.T) > 0
    labels = np.arange(n)
    for _ in range(n):
        neighbour_min = np.where(A, labels[None, :], n).min(axis=1)
        labels = np.minimum(labels, neighbour_min)
    return labels


@program(lambda r: (r.integers(0, 256, 10).astype(np.uint8),))
def uint8_bit_tricks(x):
    low = x & 0x0F
    high = x >> 4
    swapped = (low << 4) | high
    return swapped, np.invert(x), x.astype(np.int64).sum()
