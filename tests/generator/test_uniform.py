"""arc4random_uniform and randbelow are unbiased.

The bounds are chosen so the classic mistakes are glaring:
  * r % n with n = 3 * 2**30 sends half of all mass to the lowest third;
  * floor(r * n / 2**32) without rejection (multiply-shift) with the same n
    gives every value that is 0 mod 3 twice the mass of the others.
Chi-square statistics are compared with generous critical values (p ~ 1e-6
or smaller), so an unbiased generator essentially never fails, while either
bias above gives a statistic in the tens of thousands.  No scipy needed.
"""
import math

import arc4py

# Chi-square critical values far in the upper tail (p < 1e-6).
CRIT = {1: 23.9, 2: 27.6, 3: 30.7}


def chi_square(counts, probs=None):
    n = sum(counts)
    k = len(counts)
    probs = probs or [1.0 / k] * k
    return sum((c - n * p) ** 2 / (n * p) for c, p in zip(counts, probs))


def share_bound(p, n, sigmas=6.0):
    """How far a share of n draws may stray from p: ``sigmas`` standard
    deviations of a binomial proportion."""
    return sigmas * math.sqrt(p * (1 - p) / n)


def thirds(values, n):
    counts = [0, 0, 0]
    for v in values:
        counts[v * 3 // n] += 1
    return counts


def residues(values, m=3):
    counts = [0] * m
    for v in values:
        counts[v % m] += 1
    return counts


N_SAMPLES = 300_000


def test_uniform_3_times_2_30_thirds_and_residues():
    n = 3 * 2**30
    u = arc4py.arc4random_uniform
    values = [u(n) for _ in range(N_SAMPLES)]
    assert min(values) >= 0 and max(values) < n

    by_third = thirds(values, n)
    stat = chi_square(by_third)
    assert stat < CRIT[2], f"modulo bias? thirds {by_third}, chi2 {stat:.1f}"
    low = by_third[0] / N_SAMPLES
    assert abs(low - 1 / 3) < share_bound(1 / 3, N_SAMPLES), (
        f"lowest third has {low:.4%} of the mass")

    by_residue = residues(values, 3)
    stat = chi_square(by_residue)
    assert stat < CRIT[2], (
        f"multiply-shift bias? residues mod 3 {by_residue}, chi2 {stat:.1f}")
    zero = by_residue[0] / N_SAMPLES
    assert abs(zero - 1 / 3) < share_bound(1 / 3, N_SAMPLES)


def test_uniform_other_awkward_bounds():
    """Bounds just above a power of two have the largest rejection zones."""
    for n, m in ((2**31 + 1, 2), (2**32 - 1, 3), (5 * 2**29, 5)):
        values = [arc4py.arc4random_uniform(n) for _ in range(60_000)]
        assert 0 <= min(values) and max(values) < n
        for counts in (thirds(values, n), residues(values, m)):
            df = len(counts) - 1
            stat = chi_square(counts)
            assert stat < CRIT.get(df, 36.0), (n, counts, stat)


def test_uniform_3():
    values = [arc4py.arc4random_uniform(3) for _ in range(N_SAMPLES)]
    counts = [values.count(i) for i in range(3)]
    assert sum(counts) == N_SAMPLES, "values outside {0, 1, 2}"
    assert chi_square(counts) < CRIT[2], counts


def test_uniform_2_32_covers_the_full_range():
    values = [arc4py.arc4random_uniform(2**32) for _ in range(100_000)]
    assert all(0 <= v < 2**32 for v in values)
    # The top two bits are uniform too (the "bound 0 means 2**32" path).
    top = [0] * 4
    for v in values:
        top[v >> 30] += 1
    assert chi_square(top) < CRIT[3], top
    assert max(values) >= 2**32 - 2**24


def test_uniform_1_is_always_zero():
    assert {arc4py.arc4random_uniform(1) for _ in range(10_000)} == {0}


def test_uniform_2_is_fair():
    values = [arc4py.arc4random_uniform(2) for _ in range(100_000)]
    counts = [values.count(0), values.count(1)]
    assert sum(counts) == 100_000
    assert chi_square(counts) < CRIT[1], counts


def test_randbelow_large_n():
    # 3 * 2**60: k = 62 random bits; a naive reduction mod n doubles the
    # lowest third.  10**30: 100 random bits; a naive reduction doubles
    # the lowest ~27 %.
    for n in (3 * 2**60, 10**30):
        values = [arc4py.randbelow(n) for _ in range(120_000)]
        assert all(0 <= v < n for v in values)
        counts = thirds(values, n)
        stat = chi_square(counts)
        assert stat < CRIT[2], f"n={n}: thirds {counts}, chi2 {stat:.1f}"
        low = counts[0] / len(values)
        assert abs(low - 1 / 3) < share_bound(1 / 3, len(values))
        # And the very top of the range is reached.
        assert max(values) > n - n // 1000


def test_randbelow_small_n_uses_full_range():
    for n in (1, 2, 3, 7, 2**32, 2**32 + 1, 2**64 + 13):
        values = [arc4py.randbelow(n) for _ in range(3000)]
        assert all(0 <= v < n for v in values)
        if n <= 7:
            assert set(values) == set(range(n))
