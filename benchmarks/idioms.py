"""Idioms a survey of programs written without stagepy in mind kept in CPython until stop 49:
the tutorial's prime search with `for ... else`, string dynamic programming (edit distance over
a NumPy table, LCS over lists) and a GC count with a hash over ord(), modular exponentiation
with pow(a, b, m), and math.erf; and since stop 50, lists built in the loops (a matrix product
built row by row, `pairs.append([i, j])`), Knuth-Morris-Pratt over strs, and math.gcd; and since
stop 51, lists of floats that get NumPy floats (column means `mean[j] += X[i, j]`, Dijkstra over
a NumPy weight matrix), and a sum of squares started from the int 0 over a matrix; and since
stop 52, lists the loops make and read (LCS over two rolling rows, a knapsack copying its row,
a relaxation making a row per step); and since stop 54, loops over slices of lists (Kadane's
`for x in a[1:]`, `zip(L, L[1:])`), `reversed(S)`, `enumerate(zip(A, B))`, lists of tuples
unpacked (`for x, y in pts`), and a sum over a list of a million ints (reading the list); and
since stop 55, lists the loops grow and shrink while they read them (primes by trial division
over the primes found, a stack of positions, a recurrence `L.append(L[-1] + L[-2])`, edit
distance rows grown by `cur.append(...)`), a histogram over `img.ravel()`, and a breadth-first
search over an adjacency list (`for v in adj[u]`); and since stop 56, lists of lists whose rows
differ in length (the same search over vertices of degree 0 to 8, norms of jagged rows); and since
stop 57, lists holding ints and floats together (Dijkstra with int weights over `dist = [inf] * n;
dist[s] = 0`, Floyd-Warshall over a matrix of int weights and inf), an argmin that starts from
`best = None`, and draws from the random module (Monte Carlo pi, a random walk with dice, one
with random.choice()); and since stop 58, normal and exponential draws (geometric Brownian
motion with random.gauss(), an M/M/1 queue with random.expovariate()), np.random's functions
(an Ising model's Metropolis steps, a walk with np.random.normal steps), a histogram over
bisect.bisect() and nearest neighbours by math.hypot; and since stop 59, a ray caster whose pixels
shade from the row of the closest sphere (`s = spheres[k]`, k computed), and an int matrix product
whose sums all pass 64 bits (each call of its inner loop hands over to CPython); and since stop 60,
objects in lists whose attributes the loops assign (particles bouncing in a box, pairwise
gravity over objects, nearest neighbours through a helper reading two objects); and since stop 61,
methods called on them (the particles moved by `p.update(dt)`, which calls two more methods, and
pyperformance float's `p.normalize()` over slotted points). Each under CPython, stagepy
(one thread and every thread) and numba (njit), in one process; every result compared with
CPython's.

    OPENBLAS_NUM_THREADS=1 python benchmarks/idioms.py [--repeat N] [--scale S] [--only NAME...]
"""
import math
import random

import numpy as np

from kernels import three_way_session, three_ways  # kernels.py's timing

SOURCE = """
import bisect
import math
import random
import numpy as np

def primes_for_else(N):
    c = 0
    for n in range(2, N):
        for x in range(2, int(n ** 0.5) + 1):
            if n % x == 0:
                break
        else:
            c += n
        c -= 1
    return c

def edit_distance(s, t):
    n, m = len(s), len(t)
    D = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(n + 1):
        D[i, 0] = i
    for j in range(m + 1):
        D[0, j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = 0 if s[i - 1] == t[j - 1] else 1
            D[i, j] = min(D[i - 1, j] + 1, D[i, j - 1] + 1, D[i - 1, j - 1] + cost)
    return int(D[n, m])

def lcs(a, b):
    L = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                L[i][j] = L[i - 1][j - 1] + 1
            else:
                L[i][j] = max(L[i - 1][j], L[i][j - 1])
    return L[len(a)][len(b)]

def gc_hash(seq):
    gc = 0
    h = 0
    for i in range(len(seq)):
        if seq[i] == 'G' or seq[i] == 'C':
            gc += 1
        h = (h * 31 + ord(seq[i])) % 1000000007
    return gc, h

def powmod_sum(n, e, m):
    s = 0
    for i in range(n):
        s = (s + pow(i, e, m)) % m
    return s

def erf_table(x, out):
    for i in range(x.shape[0]):
        out[i] = math.erf(x[i]) + math.erfc(x[i] * 0.5)
    return out

def matmul_rows(A, B):
    n = len(A); m = len(B[0]); p = len(B)
    C = []
    for i in range(n):
        row = []
        for j in range(m):
            s = 0.0
            for k in range(p):
                s += A[i][k] * B[k][j]
            row.append(s)
        C.append(row)
    return C

def kmp_count(t, p):
    fail = [0] * len(p)
    k = 0
    for i in range(1, len(p)):
        while k > 0 and p[k] != p[i]:
            k = fail[k - 1]
        if p[k] == p[i]:
            k += 1
        fail[i] = k
    found = 0
    k = 0
    for i in range(len(t)):
        while k > 0 and p[k] != t[i]:
            k = fail[k - 1]
        if p[k] == t[i]:
            k += 1
        if k == len(p):
            found += 1
            k = fail[k - 1]
    return found

def coprime_pairs(n):
    c = 0
    for a in range(1, n):
        for b in range(a + 1, n):
            if math.gcd(a, b) == 1:
                c += 1
    return c

def column_means(X):
    n, d = X.shape
    mean = [0.0] * d
    for i in range(n):
        for j in range(d):
            mean[j] += X[i, j]
    for j in range(d):
        mean[j] /= n
    return mean

def dijkstra(W):
    n = W.shape[0]
    dist = [float("inf")] * n
    seen = [False] * n
    dist[0] = 0.0
    for _ in range(n):
        u = -1
        for v in range(n):
            if not seen[v] and (u < 0 or dist[v] < dist[u]):
                u = v
        seen[u] = True
        for v in range(n):
            if W[u, v] > 0 and dist[u] + W[u, v] < dist[v]:
                dist[v] = dist[u] + W[u, v]
    return dist

def sum_squares_int_start(A):
    s = 0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s += A[i, j] * A[i, j]
    return s

def lcs_rows(a, b):
    n, m = len(a), len(b)
    prev = [0] * (m + 1)
    for i in range(1, n + 1):
        cur = [0] * (m + 1)
        for j in range(1, m + 1):
            if a[i - 1] == b[j - 1]:
                cur[j] = prev[j - 1] + 1
            else:
                cur[j] = max(prev[j], cur[j - 1])
        prev = cur
    return prev[m]

def knapsack(w, v, W):
    best = [0] * (W + 1)
    for i in range(len(w)):
        new = best[:]
        for c in range(w[i], W + 1):
            if best[c - w[i]] + v[i] > new[c]:
                new[c] = best[c - w[i]] + v[i]
        best = new
    return best[W]

def relax_rows(n, steps):
    u = [0.0] * n
    u[0] = 1.0
    for s in range(steps):
        v = [0.0] * n
        v[0] = 1.0
        for i in range(1, n - 1):
            v[i] = 0.5 * (u[i - 1] + u[i + 1])
        u = v
    return u

def close_pairs(x, y, r):
    pairs = []
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            dx = x[i] - x[j]
            dy = y[i] - y[j]
            if dx * dx + dy * dy < r * r:
                pairs.append([i, j])
    return pairs

def max_run(a):
    best = cur = a[0]
    for x in a[1:]:
        cur = max(x, cur + x)
        best = max(best, cur)
    return best

def neighbour_gaps(L):
    t = 0.0
    for x, y in zip(L, L[1:]):
        t += abs(y - x)
    return t

def centroid(pts):
    cx = cy = 0.0
    for x, y in pts:
        cx += x
        cy += y
    return cx / len(pts), cy / len(pts)

def weighted_pairs(A, B):
    t = 0.0
    for i, (a, b) in enumerate(zip(A, B)):
        t += (i % 7) * (a - b)
    return t

def horner(coeffs, xs, out):
    for k in range(len(xs)):
        acc = 0.0
        for c in reversed(coeffs):
            acc = acc * xs[k] + c
        out[k] = acc
    return out

def sum_ints(L):
    t = 0
    for x in L:
        t += x
    return t

def primes_trial(N):
    ps = []
    for n in range(2, N):
        ok = True
        for p in ps:
            if p * p > n:
                break
            if n % p == 0:
                ok = False
                break
        if ok:
            ps.append(n)
    return ps

def stock_spans(prices):
    st = []
    spans = [0] * len(prices)
    for i in range(len(prices)):
        x = prices[i]
        while st and prices[st[-1]] <= x:
            st.pop()
        spans[i] = i + 1 if not st else i - st[-1]
        st.append(i)
    return spans

def lucas_mod(n, m):
    L = [2, 1]
    for i in range(2, n):
        L.append((L[-1] + L[-2]) % m)
    return L

def hist_ravel(img, hist):
    for v in img.ravel():
        hist[int(v)] += 1
    return hist

def bfs_queue(adj, src):
    dist = [-1] * len(adj)
    dist[src] = 0
    queue = [src]
    head = 0
    while head < len(queue):
        u = queue[head]
        head += 1
        for v in adj[u]:
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist

def dijkstra_ints(adj, w, src):
    n = len(adj)
    dist = [float("inf")] * n
    dist[src] = 0
    done = [False] * n
    for _ in range(n):
        u = -1
        for v in range(n):
            if not done[v] and (u == -1 or dist[v] < dist[u]):
                u = v
        if dist[u] == float("inf"):
            break
        done[u] = True
        for k in range(len(adj[u])):
            v = adj[u][k]
            if dist[u] + w[u][k] < dist[v]:
                dist[v] = dist[u] + w[u][k]
    return dist

def argmin_none(xs):
    best = None
    at = -1
    for i in range(len(xs)):
        if best is None or xs[i] < best:
            best = xs[i]
            at = i
    return at, best

def monte_carlo_pi(n):
    random.seed(1)
    hits = 0
    for i in range(n):
        x = random.random()
        y = random.random()
        if x * x + y * y < 1.0:
            hits += 1
    return 4.0 * hits / n, random.random()

def dice_walk(n):
    random.seed(2)
    pos = 0.0
    counts = [0] * 13
    for i in range(n):
        k = random.randint(1, 6) + random.randint(1, 6)
        counts[k] += 1
        pos += random.uniform(-1.0, 1.0) * k
    return pos, counts, random.random()

def choice_walk(n):
    random.seed(3)
    steps = [-1, 1]
    x = 0
    far = 0
    for i in range(n):
        x += random.choice(steps)
        if abs(x) > far:
            far = abs(x)
    return x, far, random.random()

def gbm_paths(n_paths, n_steps):
    # Geometric Brownian motion, one path after another (a stock price simulation).
    random.seed(4)
    mu, sigma, dt = 0.05, 0.2, 1.0 / 252
    total = 0.0
    for p in range(n_paths):
        s = 100.0
        for t in range(n_steps):
            s *= 1.0 + mu * dt + sigma * random.gauss(0.0, 1.0) * dt ** 0.5
        total += s
    return total / n_paths, random.gauss()

def queue_waits(n):
    # An M/M/1 queue's waiting times from exponential arrivals and services (Lindley).
    random.seed(5)
    w = 0.0
    total = 0.0
    for i in range(n):
        w = max(0.0, w + random.expovariate(1.0) - random.expovariate(1.25))
        total += w
    return total / n, random.random()

def bisect_binning(xs, edges):
    # A histogram over sorted, uneven bin edges.
    counts = [0] * (len(edges) + 1)
    for x in xs:
        counts[bisect.bisect(edges, x)] += 1
    return counts

def ising_metropolis(L, steps, beta):
    # Single-spin Metropolis steps on an L x L Ising lattice, np.random's global generator.
    np.random.seed(6)
    s = np.ones((L, L), dtype=np.int64)
    for t in range(steps):
        i = np.random.randint(L)
        j = np.random.randint(L)
        nb = s[(i + 1) % L, j] + s[(i - 1) % L, j] + s[i, (j + 1) % L] + s[i, (j - 1) % L]
        dE = 2 * s[i, j] * nb
        if dE <= 0 or np.random.rand() < np.exp(-beta * dE):
            s[i, j] = -s[i, j]
    return s, np.random.rand()

def noisy_walk(n):
    # A walk with Gaussian steps from np.random.normal, tracking its running maximum.
    np.random.seed(7)
    x = 0.0
    far = 0.0
    for i in range(n):
        x += np.random.normal(0.0, 0.1)
        if abs(x) > far:
            far = abs(x)
    return x, far, np.random.randn()

def nearest_hypot(pts):
    # Each point's nearest neighbour's distance, with math.hypot.
    near = [0.0] * len(pts)
    for i in range(len(pts)):
        best = float("inf")
        xi, yi = pts[i]
        for j in range(len(pts)):
            if i != j:
                d = math.hypot(pts[j][0] - xi, pts[j][1] - yi)
                if d < best:
                    best = d
        near[i] = best
    return near

def closest_sphere(ox, oy, dx, dy, spheres):
    best = -1
    best_t = 1e30
    for k in range(len(spheres)):
        s = spheres[k]
        lx = ox - s[0]
        ly = oy - s[1]
        b = dx * lx + dy * ly
        c = lx * lx + ly * ly - s[2] * s[2]
        disc = b * b - c
        if disc > 0.0:
            t = -b - math.sqrt(disc)
            if 1e-6 < t < best_t:
                best_t = t
                best = k
    return best, best_t

def trace_rows(img, spheres):
    # A 2-d ray caster: per pixel, the closest sphere (a helper's loop), its row picked by
    # that computed index (`s = spheres[k]`), shading from its items.
    h, w = img.shape
    for j in range(h):
        for i in range(w):
            dx = (i - w / 2) / w
            dy = 1.0
            n = math.sqrt(dx * dx + dy * dy)
            k, t = closest_sphere(0.0, -1.0, dx / n, dy / n, spheres)
            if k < 0:
                img[j, i] = 0.1 * (j % 7)
            else:
                s = spheres[k]
                img[j, i] = s[3] * t / (1.0 + s[2]) + j * 1e-3
    return img

def matmul_big_ints(A, B):
    # Entries past 64 bits: every call of the k loop hands its sum to CPython part way.
    n = len(A)
    C = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            s = 0
            for k in range(n):
                s += A[i][k] * B[k][j]
            C[i][j] = s
    return C

def floyd_warshall(d):
    n = len(d)
    for k in range(n):
        for i in range(n):
            for j in range(n):
                if d[i][k] + d[k][j] < d[i][j]:
                    d[i][j] = d[i][k] + d[k][j]
    return d

def jagged_norms(A, out):
    for i in range(len(A)):
        s = 0.0
        for j in range(len(A[i])):
            s += A[i][j] * A[i][j]
        out[i] = math.sqrt(s)
    return out

def particles_bounce(ps, dt, steps):
    # Objects in a list, their attributes read and assigned (`for p in ps: p.x += ...`).
    for t in range(steps):
        for p in ps:
            p.x += p.vx * dt
            p.y += p.vy * dt
            if p.x < 0.0 or p.x > 1.0:
                p.vx = -p.vx
            if p.y < 0.0 or p.y > 1.0:
                p.vy = -p.vy
    return [(p.x, p.y, p.vx, p.vy) for p in ps]

def gravity_objects(bs, dt, steps):
    # Pairwise forces over objects: `a.vx += ...` reads `b.x` (the a loop on threads).
    for t in range(steps):
        for a in bs:
            for b in bs:
                dx = b.x - a.x
                dy = b.y - a.y
                d2 = dx * dx + dy * dy + 0.01
                inv = b.m / (d2 * math.sqrt(d2))
                a.vx += dx * inv * dt
                a.vy += dy * inv * dt
        for b in bs:
            b.x += b.vx * dt
            b.y += b.vy * dt
    return [(b.x, b.y, b.vx, b.vy) for b in bs]

def city_dist(a, b):
    return math.sqrt((a.x - b.x) ** 2 + (a.y - b.y) ** 2)

def nearest_cities(cs):
    # Objects passed to a helper that reads their attributes (`dist(p, q)`), one counted.
    out = 0.0
    for p in cs:
        best = 1e300
        for q in cs:
            d = city_dist(p, q)
            if 0.0 < d < best:
                best = d
        p.m += 1.0
        out += best
    return out, [p.m for p in cs]

def edit_rows_append(a, b):
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i]
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost))
        prev = cur
    return prev[-1]

def particles_methods(ps, dt, steps):
    # Methods on the objects (`p.update(dt)`, which calls `self.move(dt)`, `self.bounce()`:
    # a class of the benchmark module's, whose methods read no globals of their own).
    for t in range(steps):
        for p in ps:
            p.update(dt)
    return [(p.x, p.y, p.vx, p.vy) for p in ps]

def uf_find(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x

def uf_union(parent, size, a, b):
    ra = uf_find(parent, a)
    rb = uf_find(parent, b)
    if ra == rb:
        return 0
    if size[ra] < size[rb]:
        ra, rb = rb, ra
    parent[rb] = ra
    size[ra] += size[rb]
    return 1

def union_find(edges, n):
    # Union-find with path halving: `merges += uf_union(...)` changes both lists (a logged
    # statement) and adds to a count.
    parent = list(range(n))
    size = [1] * n
    merges = 0
    for a, b in edges:
        merges += uf_union(parent, size, a, b)
    return merges, max(size)

def world_step(w, dt, steps):
    # An object-oriented simulation's time loop: `w.step(dt)` moves every particle through
    # its method (a logged statement: the particles are read once for all the steps).
    for t in range(steps):
        w.step(dt)
    return w.t, [(p.x, p.y, p.vx, p.vy) for p in w.ps]

def epidemic(agents, steps, r2):
    # An agent model: bool flags beside an int counter and float positions (a table whose
    # columns are of different kinds: Type::columns).
    for t in range(steps):
        for a in agents:
            if a.infected:
                a.days += 1
                if a.days > 6:
                    a.infected = False
                    a.recovered = True
        for a in agents:
            if not a.infected and not a.recovered:
                for b in agents:
                    if b.infected:
                        dx = a.x - b.x
                        dy = a.y - b.y
                        if dx * dx + dy * dy < r2:
                            a.infected = True
                            break
    return [(a.infected, a.recovered, a.days) for a in agents]

def points_normalize(points):
    # pyperformance float's normalize step (its class reads `math`, which this module imports).
    for p in points:
        p.normalize()
    return [(p.x, p.y, p.z) for p in points]
"""


class Particle:
    def __init__(self, x, y, vx, vy, m=1.0):
        self.x, self.y, self.vx, self.vy, self.m = x, y, vx, vy, m


class Mover(Particle):
    def move(self, dt):
        self.x += self.vx * dt
        self.y += self.vy * dt

    def bounce(self):
        if self.x < 0.0 or self.x > 1.0:
            self.vx = -self.vx
        if self.y < 0.0 or self.y > 1.0:
            self.vy = -self.vy

    def update(self, dt):
        self.move(dt)
        self.bounce()


class World:
    def __init__(self, ps):
        self.ps = ps
        self.t = 0.0

    def step(self, dt):
        for p in self.ps:
            p.update(dt)
        self.t += dt


class Agent:
    def __init__(self, x, y, infected):
        self.x, self.y = x, y
        self.infected = infected
        self.recovered = False
        self.days = 0


class Point3:
    # pyperformance's bm_float: points with slots, normalized in place by a method.
    # (These classes are the benchmark module's; the timed functions are SOURCE's.)
    __slots__ = ("x", "y", "z")

    def __init__(self, i):
        self.x = x = math.sin(i)
        self.y = math.cos(i) * 3
        self.z = (x * x) / 2

    def normalize(self):
        x = self.x
        y = self.y
        z = self.z
        norm = math.sqrt(x * x + y * y + z * z)
        self.x /= norm
        self.y /= norm
        self.z /= norm


def cases(scale):
    s = lambda n: max(8, int(n * scale))  # noqa: E731
    r = random.Random(0)
    dna = lambda n: "".join(r.choice("ACGT") for _ in range(n))  # noqa: E731
    a, b = dna(s(1500)), dna(s(1400))
    la, lb = dna(s(700)), dna(s(600))
    long = dna(s(2_000_000))
    x = np.linspace(-3.0, 3.0, s(1_000_000))
    n_pr = s(200000)
    rng = np.random.default_rng(0)
    nm = s(150)
    A, B = rng.random((nm, nm)).tolist(), rng.random((nm, nm)).tolist()
    px, py = rng.random(s(2500)), rng.random(s(2500))
    text = "".join(r.choice("ab") for _ in range(s(2_000_000)))
    X = rng.random((s(400_000), 8))
    Z = rng.integers(-1000, 1000, (s(400_000), 8)).astype(np.float64)  # whole: any order sums exactly
    nw = s(1500)
    W = np.where(rng.random((nw, nw)) < 0.2, rng.random((nw, nw)), 0.0)
    kw = [r.randint(1, 100) for _ in range(s(200))]
    kv = [r.randint(1, 1000) for _ in range(len(kw))]
    ints = [r.randint(-1000, 1000) for _ in range(s(1_000_000))]
    # Multiples of 1/64 below 2**10: sums in any order are exact, so parallel sums compare equal.
    floats = [r.randint(-65536, 65536) / 64 for _ in range(s(1_000_000))]
    pts = [(r.randint(0, 65536) / 64, r.randint(0, 65536) / 64) for _ in range(s(1_000_000))]
    coeffs = [r.random() for _ in range(12)]
    xs = rng.random(s(200_000))
    img = rng.integers(0, 17, (s(1000), 1000)).astype(np.float64)
    nv = s(200_000)
    adj = [[(i * 7 + k * 13) % nv for k in range(4)] for i in range(nv)]
    adj_r = [[r.randrange(nv) for _ in range(r.randrange(9))] for _ in range(nv)]
    jag = [[r.randint(-65536, 65536) / 64 for _ in range(r.randrange(11))] for _ in range(s(200_000))]
    nd = s(3000)
    gadj = [[r.randrange(nd) for _ in range(r.randrange(1, 9))] for _ in range(nd)]
    gw = [[r.randint(1, 100) for _ in a] for a in gadj]
    nf = s(160)
    inf = float("inf")
    fw = lambda: [[0 if i == j else (r.randint(1, 50) if r.random() < 0.1 else inf) for j in range(nf)]  # noqa: E731
                  for i in range(nf)]
    fw0 = fw()
    bx = [math.sin(i) * 0.6 + 0.5 for i in range(s(1_000_000))]
    hp = [(math.cos(i) * i, math.sin(i * 1.7) * i) for i in range(s(1500))]
    bigm = [[2 ** 62 - r.randrange(1000) for _ in range(s(100))] for _ in range(s(100))]
    balls = [[r.uniform(-3, 3), r.uniform(2, 9), r.uniform(0.2, 0.9), r.uniform(0, 1)] for _ in range(12)]
    pv = [(r.random(), r.random(), r.uniform(-1, 1), r.uniform(-1, 1), r.uniform(0.5, 1.5)) for _ in range(s(4000))]
    particles = lambda k: [Particle(*v) for v in pv[:k]]  # noqa: E731  (new objects per call: they change)
    nb = s(400)
    uf_edges = [(r.randrange(s(200000)), r.randrange(s(200000))) for _ in range(s(300000))]
    return {
        "particles_bounce": (lambda f: f(particles(len(pv)), 0.001, 200),
                             f"{len(pv)} objects x 200 steps, `for p in ps: p.x += p.vx * dt` (objects made per call)"),
        "particles_methods": (lambda f: f([Mover(*v) for v in pv], 0.001, 200),
                              f"{len(pv)} objects x 200 steps, `p.update(dt)` calling `self.move(dt)`, "
                              "`self.bounce()` (objects made per call)"),
        "union_find": (lambda f: f(uf_edges, s(200000)),
                       f"{len(uf_edges)} random edges over {s(200000)} nodes, `merges += uf_union(...)`"),
        "world_step": (lambda f: f(World([Mover(*v) for v in pv]), 0.001, 200),
                       f"{len(pv)} objects x 200 steps, `w.step(dt)` calling `p.update(dt)` on each "
                       "(objects made per call)"),
        "epidemic": (lambda f: f([Agent(v[0], v[1], k < 5) for k, v in enumerate(pv[:s(1500)])], 40, 0.0004),
                     f"{min(len(pv), s(1500))} agents x 40 steps, bool flags beside `days` and `x`, `y` "
                     "(objects made per call)"),
        "points_normalize": (lambda f: f([Point3(i) for i in range(s(200000))]),
                             f"{s(200000)} slotted objects, `p.normalize()` (pyperformance float's; made per call)"),
        "nearest_cities": (lambda f: f(particles(s(1000))),
                           f"{s(1000)} objects, all pairs through a helper `city_dist(p, q)` (objects made per call)"),
        "gravity_objects": (lambda f: f(particles(nb), 0.001, 5),
                            f"{nb} objects, all pairs x 5 steps, `a.vx += dx * b.m / ...` (objects made per call)"),
        "primes_for_else": (lambda f: f(n_pr), f"n < {n_pr}: `for x ...: if n % x == 0: break` / `else: c += n` / `c -= 1`"),
        "edit_distance": (lambda f: f(a, b), f"{len(a)} x {len(b)} DNA, NumPy table"),
        "lcs": (lambda f: f(la, lb), f"{len(la)} x {len(lb)} DNA, list of lists"),
        "gc_hash": (lambda f: f(long), f"{len(long)} characters, `== 'G'` and ord()"),
        "powmod_sum": (lambda f: f(s(300000), 65537, 2 ** 61 - 1), f"pow(i, 65537, 2**61 - 1), i < {s(300000)}"),
        "erf_table": (lambda f: f(x, np.zeros_like(x)), f"math.erf + math.erfc of {len(x)} floats"),
        "matmul_rows": (lambda f: f(A, B), f"{nm} x {nm} lists of floats, `row.append(s)` / `C.append(row)`"),
        "close_pairs": (lambda f: f(px, py, 0.02), f"{len(px)} points, `pairs.append([i, j])`"),
        "kmp_count": (lambda f: f(text, "abababb"), f"{len(text)} characters, pattern abababb"),
        "coprime_pairs": (lambda f: f(s(1500)), f"math.gcd(a, b) == 1, a < b < {s(1500)}"),
        "column_means": (lambda f: f(X), f"{X.shape[0]} x {X.shape[1]} array, `mean[j] += X[i, j]` into a list"),
        "dijkstra": (lambda f: f(W), f"{nw} vertices, NumPy weights, `dist` a list"),
        "sum_squares_int_start": (lambda f: f(Z), f"{Z.shape[0]} x {Z.shape[1]} array, `s = 0`, `s += A[i, j] * A[i, j]`"),
        "lcs_rows": (lambda f: f(a, b), f"{len(a)} x {len(b)} DNA, two rows: `cur = [0] * (m + 1)`, `prev = cur`"),
        "knapsack": (lambda f: f(kw, kv, s(20000)), f"{len(kw)} items, capacity {s(20000)}, `new = best[:]`"),
        "relax_rows": (lambda f: f(s(2000), s(2000)), f"{s(2000)} points x {s(2000)} steps, `v = [0.0] * n`, `u = v`"),
        "max_run": (lambda f: f(ints), f"{len(ints)} ints, `for x in a[1:]`, max()"),
        "neighbour_gaps": (lambda f: f(floats), f"{len(floats)} floats, `zip(L, L[1:])`"),
        "centroid": (lambda f: f(pts), f"{len(pts)} tuples, `for x, y in pts`"),
        "weighted_pairs": (lambda f: f(floats, floats[::-1]), f"{len(floats)} floats twice, `enumerate(zip(A, B))`"),
        "horner": (lambda f: f(coeffs, xs, np.zeros_like(xs)), f"{len(xs)} points, `for c in reversed(coeffs)` (12)"),
        "sum_ints": (lambda f: f(ints), f"{len(ints)} ints, `for x in L: t += x`"),
        "primes_trial": (lambda f: f(s(300000)), f"n < {s(300000)}, `for p in ps:` ... `ps.append(n)`"),
        "stock_spans": (lambda f: f(ints), f"{len(ints)} ints, a stack: `st[-1]`, `st.pop()`, `st.append(i)`"),
        "lucas_mod": (lambda f: f(s(1_000_000), 1_000_003), f"{s(1_000_000)} terms, `L.append((L[-1] + L[-2]) % m)`"),
        "edit_rows_append": (lambda f: f(a, b), f"{len(a)} x {len(b)} DNA, `cur = [i]`, `cur.append(...)`"),
        "bfs_queue": (lambda f: f(adj, 0), f"{len(adj)} vertices of degree 4 (a list of lists), `for v in adj[u]`, `queue.append(v)`"),
        "hist_ravel": (lambda f: f(img, np.zeros(17, dtype=np.int64)), f"{img.shape[0]} x {img.shape[1]} image, `for v in img.ravel()`"),
        "bfs_queue[ragged]": (lambda f: f(adj_r, 0), f"{len(adj_r)} vertices of degree 0 to 8 (a ragged list of lists)"),
        "jagged_norms": (lambda f: f(jag, [0.0] * len(jag)), f"{len(jag)} rows of 0 to 10 floats, `range(len(A[i]))`"),
        "dijkstra_ints": (lambda f: f(gadj, gw, 0), f"{nd} vertices, int weights, `dist = [inf] * n; dist[0] = 0`"),
        "floyd_warshall": (lambda f: f([row[:] for row in fw0]), f"{nf} x {nf} list of lists of int weights and inf"),
        "argmin_none": (lambda f: f(floats), f"{len(floats)} floats, `best = None`, `if best is None or x < best`"),
        "monte_carlo_pi": (lambda f: f(s(2_000_000)), f"{s(2_000_000)} points, random.random()"),
        "dice_walk": (lambda f: f(s(1_000_000)), f"{s(1_000_000)} steps, random.randint() and random.uniform()"),
        "choice_walk": (lambda f: f(s(1_000_000)), f"{s(1_000_000)} steps, `x += random.choice(steps)`"),
        "bisect_binning": (lambda f: f(bx, [(i / 100) ** 1.5 for i in range(101)]),
                           f"{s(1_000_000)} floats into 101 uneven edges, bisect.bisect"),
        "ising_metropolis": (lambda f: f(32, s(1_000_000), 0.44), f"{s(1_000_000)} steps on 32 x 32, np.random.randint/rand"),
        "noisy_walk": (lambda f: f(s(1_000_000)), f"{s(1_000_000)} steps, np.random.normal"),
        "nearest_hypot": (lambda f: f(hp), f"{len(hp)} points, all pairs, math.hypot"),
        "gbm_paths": (lambda f: f(s(2000), 252), f"{s(2000)} paths of 252 steps, random.gauss()"),
        "queue_waits": (lambda f: f(s(1_000_000)), f"{s(1_000_000)} customers, random.expovariate()"),
        "matmul_big_ints": (lambda f: f(bigm, bigm), f"{len(bigm)} x {len(bigm)} lists of ints near 2**62, sums past 64 bits"),
        "trace_rows": (lambda f: f(np.zeros((s(200), 300)), balls),
                       f"{s(200)} x 300 pixels, {len(balls)} spheres, `s = spheres[k]` of the closest"),
    }


def same(a, b):
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    if isinstance(a, list):  # element types too (float or np.float64)
        return isinstance(b, list) and len(a) == len(b) and all(type(x) is type(y) and same(x, y) for x, y in zip(a, b))
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def main():
    import stagepy
    args, plain, fast, jitted = three_way_session(SOURCE, "<benchmark idioms>")
    print("| kernel | size | CPython (s) | stagepy 1t (s) | stagepy (s) | numba (s) | same result |")
    print("|---|---|---|---|---|---|---|")
    for name, (call, size) in cases(args.scale).items():
        if args.only and name not in args.only:
            continue
        fn = name.split("[")[0]  # `kernel[input]`: a kernel on another input
        want, got, t_py, t_1, t_n, t_nb = three_ways(call, plain[fn], fast[fn], jitted[fn] if jitted else None,
                                                     args.repeat)
        nb = f"{t_nb:.4f}" if isinstance(t_nb, float) else t_nb or "-"
        print(f"| {name} | {size} | {t_py:.3f} | {t_1:.4f} | {t_n:.4f} | {nb} | {same(want, got)} |")
    recs = [r for r in stagepy.report() if r["file"] == "<benchmark idioms>"]
    for r in recs:
        runs = {l["variable"]: l["parallel_runs"] for l in r["loops"] if l["parallel_runs"]}
        print(f"  {r['function']}:{r['line']} {r['status']} native calls {r['native_calls']}, parallel runs {runs}"
              + (f" reason: {r['reason']}" if r["reason"] else ""))


if __name__ == "__main__":
    main()
