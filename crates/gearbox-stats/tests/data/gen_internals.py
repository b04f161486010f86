"""High-precision values (mpmath, 300 digits) of the nmath internals that R
does not expose, for tests/nmath_internals.rs: stirlerr, bd0 (also as
ebd0's yh + yl), lgammacor and logcf. Prints Rust array rows.

    python3 crates/gearbox-stats/tests/data/gen_internals.py
"""
from mpmath import mp, mpf, loggamma, log, pi, sqrt, nsum, inf

mp.dps = 300


def show(name, args, value):
    a = ", ".join(repr(float(x)) for x in args)
    print(f"    ({a}, {mp.nstr(value, 20)}), // {name}")


print("// stirlerr(n)")
for n in [0.3, 1.7, 7.7, 14.2, 15.5, 20.25, 36.6, 99.0, 1000.5, 123456.0, 1e10]:
    n = mpf(n)
    show("stirlerr", [n], loggamma(n + 1) - (n + mpf(1) / 2) * log(n) + n - log(sqrt(2 * pi)))

print("// bd0(x, np)")
for x, np in [(10, 11), (100.5, 99), (1e6, 1e6 + 3), (3, 30), (30, 3), (1e-3, 2), (1e12, 2e12),
              (7, 7.0001)]:
    x, np = mpf(x), mpf(np)
    show("bd0", [x, np], x * log(x / np) + np - x)

print("// lgammacor(x)")
for x in [10, 12.5, 33.3, 1e3, 1e7, 1e9, 1e100]:
    x = mpf(x)
    show("lgammacor", [x], loggamma(x) - (log(sqrt(2 * pi)) + (x - mpf(1) / 2) * log(x) - x))

print("// logcf(x, i, d)")
for x, i, d in [(0.1, 3, 2), (0.17, 3, 2), (-0.25, 42, 1), (0.25, 42, 1), (0.5, 1, 1), (-0.9, 2, 0.5)]:
    x, i, d = mpf(x), mpf(i), mpf(d)
    show("logcf", [x, i, d], nsum(lambda k: x**k / (i + k * d), [0, inf]))
