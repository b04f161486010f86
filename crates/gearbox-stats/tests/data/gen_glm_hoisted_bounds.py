# Reference values for tests/glm_hoisted.rs: lchoose(n, x) and
# lgamma(k + 1) at 50 digits (mpmath), printed with 17 significant digits.
# Run: python3 gen_glm_hoisted_bounds.py > glm_hoisted_bounds.csv
import mpmath as mp

mp.mp.dps = 50
print("kind,a,b,value")
pairs = [(2, 1), (3, 1), (10, 5), (10, 3), (20, 10), (50, 25), (60, 1), (100, 37),
         (100, 50), (121, 60), (130, 61), (200, 100), (1000, 3), (1000, 60),
         (1000, 61), (1000, 500), (12345, 77), (1e5, 2), (1e5, 5e4), (1e6, 1),
         (1e6, 30), (1e6, 61), (1e6, 3e5), (1e6, 999999), (1e7, 12), (1e7, 5e6),
         (1e9, 4e8), (1e12, 1), (1e12, 45), (1e12, 1e11), (4.5e15, 1e15),
         (67, 33), (64, 32), (70, 35), (300, 150), (40, 20), (25, 12), (33, 16)]
for n, x in pairs:
    v = mp.log(mp.binomial(mp.mpf(n), mp.mpf(x)))
    print("lchoose,%.17g,%.17g,%s" % (n, x, mp.nstr(v, 17, min_fixed=-1, max_fixed=-1)))
for k in [0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 15, 20, 21, 22, 23, 24, 30, 50, 99, 100, 170,
          171, 1000, 12345, 1e5, 4934719, 4934720, 1e7, 1e9, 1e12]:
    v = mp.loggamma(mp.mpf(k) + 1)
    print("lgamma1p,%.17g,0,%s" % (k, mp.nstr(v, 17, min_fixed=-1, max_fixed=-1)))
