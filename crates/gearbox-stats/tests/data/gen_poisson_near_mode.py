# Reference values for tests/glm_hoisted.rs: the poisson log density
# log dpois(k, lambda) = k log(lambda) - lambda - lgamma(k + 1) at 50 digits
# (mpmath) for counts near their mode (|k - lambda| < 0.1 (k + lambda)),
# printed with 17 significant digits; lambda is the double printed.
# Run: python3 gen_poisson_near_mode.py > poisson_near_mode.csv
import random

import mpmath as mp

mp.mp.dps = 50
random.seed(20261122)
print("k,lambda,value")
for _ in range(1500):
    k = float(int(10 ** random.uniform(0, 9)))
    spread = random.choice([1e-9, 1e-5, 1e-3, 0.05, 0.18])
    lam = k * (1 + random.uniform(-1, 1) * spread)
    lam = float("%.17g" % lam)
    kk, ll = mp.mpf(k), mp.mpf(lam)
    v = kk * mp.log(ll) - ll - mp.loggamma(kk + 1)
    print("%.17g,%.17g,%s" % (k, lam, mp.nstr(v, 17, min_fixed=-1, max_fixed=-1)))
