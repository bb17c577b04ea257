"""How far a search may enumerate: the allowed pipeline and tensor degrees without arrays as long as
``d_l`` or ``d_a``, and the budgets that keep a search within its time and memory.

The paper's rules bound every candidate array by the critical batch, not by the model's depth:

* ``n_l <= b_c``: a pipeline of ``n_l`` stages needs ``n_mu >= n_l`` micro-batches and
  ``n_b n_mu b_mu <= b_c``, so no configuration has more stages than samples in a batch;
* ``n_b n_l n_a <= b_c max(n_a)``: ``n_b n_l <= n_b n_mu <= b_c``, so the GPU count (an int64 in the
  evaluator) is bounded by the critical batch times the largest tensor degree;
* the allowed degrees are the divisors of ``d_l`` and ``d_a`` (``divisible_layers``,
  ``divisible_heads``): listed from the factorisation, never by testing every integer up to ``d_l``.

A model beyond what can be searched within :data:`MAX_CANDIDATES` configurations (and
:data:`MAX_PROBES` evaluations to find the micro-batch sizes, :data:`MAX_DEGREES` degrees of one
dimension) gets a :class:`~lgacc.errors.UserInputError` naming the count and the rule, never an array
the machine cannot hold.  Every model of the paper (X2 to X2000, the shipped models) is far below.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from lgacc.errors import UserInputError

__all__ = ["MAX_CANDIDATES", "MAX_PROBES", "MAX_DEGREES", "PRODUCT_LIMIT", "divisors", "layer_degrees", "head_degrees",
           "next_degree", "lattice_counts", "too_large"]

#: Configurations one search may hold and evaluate (about 50 bytes each held; a few seconds to evaluate them
#: all when no configuration is feasible and every one must be seen).
MAX_CANDIDATES = 6_000_000
#: Evaluations spent finding each group's smallest bottleneck-free micro-batch.
MAX_PROBES = 3_000_000
#: Values of one parallel degree (``n_l`` or ``n_a``) listed at most.
MAX_DEGREES = 1_000_000
#: GPU counts and batches stay below this (the evaluator's int64 products, :mod:`lgacc.model.evaluator.inputs`).
PRODUCT_LIMIT = 2**62
#: Below this, divisors are found by testing every integer (one vectorised pass); above, by factorisation.
_TRIAL_LIMIT = 1 << 20


def too_large(subject: str, count: float, limit: int, rule: str) -> UserInputError:
    """The one line for a search beyond its budget: what, how many, the bound and the rule it comes from."""
    return UserInputError(f"{subject}: the search would need {count:.3g} {rule}, more than the {limit:.3g} it "
                          f"covers within its time and memory bounds; give --max-gpus or a smaller model")


#: Trial division covers the factors up to this; what remains of a number below 2**63 is then 1, a prime,
#: a prime squared or the product of two primes (three factors above it would exceed 2**63).
_SMALL_FACTORS = 1 << 21


@lru_cache(maxsize=64)
def _factor(n: int) -> dict[int, int]:
    """Prime factorisation of ``1 <= n < 2**63``: trial division up to :data:`_SMALL_FACTORS` (one numpy
    pass), then Miller-Rabin and Pollard's rho on the rest (at most two primes; sympy is not imported)."""
    found: dict[int, int] = {}
    limit = min(_SMALL_FACTORS, _isqrt(n))
    if limit >= 2:
        trial = np.arange(2, limit + 1, dtype=np.int64)
        for d in trial[n % trial == 0].tolist():  # increasing: a composite no longer divides what is left
            while n % d == 0:
                found[d] = found.get(d, 0) + 1
                n //= d
    if n == 1:
        return found
    if n < _SMALL_FACTORS * _SMALL_FACTORS or _is_prime(n):
        rest = [n]
    else:
        root = _isqrt(n)
        p = root if root * root == n else _rho(n)
        rest = [p, n // p]
    for prime in rest:
        found[prime] = found.get(prime, 0) + 1
    return found


def _isqrt(n: int) -> int:
    import math

    return math.isqrt(n)


def _is_prime(n: int) -> bool:
    """Miller-Rabin with the first twelve primes as bases: exact below 3.3e24."""
    if n < 2:
        return False
    bases = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
    if n in bases:
        return True
    if any(n % b == 0 for b in bases):
        return False
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in bases:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _rho(n: int) -> int:
    """A nontrivial factor of the composite odd ``n`` (Pollard's rho, Brent's cycle finding)."""
    import math

    for c in range(1, 100):
        y, m, g, r, q = 2, 128, 1, 1, 1
        x = ys = y
        while g == 1:
            x = y
            for _ in range(r):
                y = (y * y + c) % n
            k = 0
            while k < r and g == 1:
                ys = y
                for _ in range(min(m, r - k)):
                    y = (y * y + c) % n
                    q = q * abs(x - y) % n
                g = math.gcd(q, n)
                k += m
            r *= 2
        if g == n:
            g = 1
            while g == 1:
                ys = (ys * ys + c) % n
                g = math.gcd(abs(x - ys), n)
        if g != n:
            return g
    raise ArithmeticError(f"no factor of {n} found")  # not reached for a composite below 2**63


def divisors(n: int, upper: int | None = None) -> np.ndarray:
    """The divisors of ``n`` up to ``upper`` (default ``n``), increasing, as int64.

    >>> divisors(12).tolist()
    [1, 2, 3, 4, 6, 12]
    >>> divisors(2**62, 10).tolist()
    [1, 2, 4, 8]
    """
    n = int(n)
    upper = n if upper is None else min(n, int(upper))
    if upper < 1:
        return np.zeros(0, np.int64)
    if n <= _TRIAL_LIMIT or upper <= _TRIAL_LIMIT:
        values = np.arange(1, upper + 1, dtype=np.int64)
        return values[n % values == 0]
    found = [1]
    for prime, exponent in _factor(n).items():
        found = [d * prime**k for d in found for k in range(exponent + 1) if d * prime**k <= upper]
    return np.array(sorted(found), dtype=np.int64)


def _listed(subject: str, values: int, what: str) -> None:
    if values > MAX_DEGREES:
        raise too_large(subject, values, MAX_DEGREES, what)


def layer_degrees(model, assumptions, upper: int) -> np.ndarray:
    """The pipeline degrees ``1 <= n_l <= min(d_l, upper)`` that ``assumptions.allows_layers`` allows."""
    top = min(int(model.d_l), int(upper))
    if assumptions.divisible_layers:
        return divisors(model.d_l, top)
    _listed(model.name, top, f"pipeline degrees (n_l = 1..{top}: divisible_layers=false, n_l <= d_l and n_l <= b_c)")
    return np.arange(1, top + 1, dtype=np.int64)


def head_degrees(model, assumptions, top: int) -> np.ndarray:
    """The tensor degrees ``n_a <= top`` that ``assumptions.allows_heads`` allows (at most ``d_a`` under
    ``heads_cap``); ``top`` is the search's largest degree (:func:`lgacc.search.candidates.tensor_top`)."""
    d_a = int(model.d_a)
    top = min(int(top), d_a) if assumptions.heads_cap else int(top)
    if assumptions.divisible_heads:
        found = divisors(d_a, top)
        if not assumptions.heads_cap and 2 * d_a <= top:
            # beyond d_a the heads split evenly when d_a divides n_a
            found = np.append(found, np.arange(2 * d_a, top + 1, d_a, dtype=np.int64))
        return found
    _listed(model.name, top, f"tensor degrees (n_a = 1..{top}: divisible_heads=false)")
    return np.arange(1, top + 1, dtype=np.int64)


def next_degree(values_up_to, value: int, largest: int) -> int | None:
    """The smallest allowed degree above ``value`` (at most ``largest``), where ``values_up_to(upper)``
    lists the allowed degrees up to ``upper``: looked for in windows that double, never the whole range."""
    window = max(2 * int(value), 2)
    while True:
        found = values_up_to(min(window, largest))
        above = found[found > value]
        if above.size:
            return int(above[0])
        if window >= largest:
            return None
        window *= 2


def _distinct_quotients(K: np.ndarray) -> np.ndarray:
    """How many distinct values ``K // n`` takes for ``n = 1..K``: ``2 s - [s = K // s]`` with ``s = isqrt(K)``."""
    s = isqrt(K)
    return 2 * s - (s == K // np.maximum(s, 1))


def isqrt(K: np.ndarray) -> np.ndarray:
    """``floor(sqrt(K))`` of non-negative int64, exact (float square root, then corrected by one)."""
    K = np.asarray(K, dtype=np.int64)
    s = np.sqrt(K.astype(float)).astype(np.int64)
    s -= s * s > K
    s += (s + 1) * (s + 1) <= K
    return s


def lattice_counts(B: int, n_l: np.ndarray, caps: np.ndarray, budgeted: bool = False) -> int:
    """How many ``(n_b, n_mu, b_mu)`` levels the groups ``(n_l, cap)`` hold: for each ``b_mu <= cap``, the
    distinct ``n_mu = B // (n_b b_mu) >= n_l`` (at most one level more per ``b_mu`` under a GPU budget,
    ``budgeted``).

    Each ``b_mu <= cap`` holds at least one level, so the total is at least ``sum(caps)``: past the budget
    that alone decides, without an array as long as the caps."""
    n_l, caps = np.asarray(n_l, np.int64), np.asarray(caps, np.int64)
    floor = int(caps.sum())
    if floor > MAX_CANDIDATES:
        return floor
    total = 0
    for level, cap in set(zip(n_l.tolist(), caps.tolist())):
        if cap < 1:
            continue
        K = B // np.arange(1, cap + 1, dtype=np.int64)
        s = isqrt(K)
        # every quotient below isqrt(K) is taken, so n_mu >= n_l removes n_l - 1 of them; past isqrt(K) the
        # levels with n_mu >= n_l are the n_b <= K // n_l
        per_size = np.where(level <= s, _distinct_quotients(K) - (level - 1), K // level)
        total += (int(per_size.sum()) + (int(cap) if budgeted else 0)) * int(np.sum((n_l == level) & (caps == cap)))
    return total


def product_limit(subject: str, batch_limit: int, largest_n_a: int, max_gpus: int | None) -> None:
    """The largest GPU count a search can reach, ``min(max_gpus, b_c max(n_a))``, stays an int64."""
    if batch_limit >= PRODUCT_LIMIT:
        raise UserInputError(f"{subject}: the critical batch b_c = {batch_limit:.3g} is beyond the supported range "
                             "(below 2**62 samples); lower critical_batch_scale")
    reach = batch_limit * largest_n_a if max_gpus is None else min(max_gpus, batch_limit * largest_n_a)
    if reach >= PRODUCT_LIMIT:
        raise UserInputError(f"{subject}: up to n_gpu = b_c max(n_a) = {batch_limit} x {largest_n_a} = {reach:.3g} "
                             "GPUs, beyond the supported range (below 2**62); give --max-gpus")
