// gb_gammafn_small.c: R's gammafn for 0 < |x| <= 10, x not a negative
// integer (its Chebyshev branch: gamma(1 + y), 0 <= y < 1, from Fullerton's
// gamcs, then the recurrence). Split from gb_gammafn so that gb_stirlerr
// can use it without a dependency cycle. NaN for |x| > 10.
// @depends
GB_FN double gb_gammafn_small(double x)
{
    // Fullerton's gamcs; R evaluates the first ngam = 22 terms.
    const double gamcs[22] = {
        +.8571195590989331421920062399942e-2,
        +.4415381324841006757191315771652e-2,
        +.5685043681599363378632664588789e-1,
        -.4219835396418560501012500186624e-2,
        +.1326808181212460220584006796352e-2,
        -.1893024529798880432523947023886e-3,
        +.3606925327441245256578082217225e-4,
        -.6056761904460864218485548290365e-5,
        +.1055829546302283344731823509093e-5,
        -.1811967365542384048291855891166e-6,
        +.3117724964715322277790254593169e-7,
        -.5354219639019687140874081024347e-8,
        +.9193275519859588946887786825940e-9,
        -.1577941280288339761767423273953e-9,
        +.2707980622934954543266540433089e-10,
        -.4646818653825730144081661058933e-11,
        +.7973350192007419656460767175359e-12,
        -.1368078209830916025799499172309e-12,
        +.2347319486563800657233471771688e-13,
        -.4027432614949066932766570534699e-14,
        +.6910051747372100912138336975257e-15,
        -.1185584500221992907052387126192e-15,
    };
    const int ngam = 22;
    const double xsml = 2.2474362225598545e-308;

    if (!(fabs(x) <= 10)) return GB_NAN;

    int n = (int) x;
    if (x < 0) --n;
    double y = x - n; // n = floor(x), so y in [0, 1)
    --n;
    // chebyshev_eval(y * 2 - 1, gamcs, ngam)
    double t = y * 2 - 1;
    if (t < -1.1 || t > 1.1) return GB_NAN;
    double twox = t * 2, b0 = 0, b1 = 0, b2 = 0;
    for (int i = 1; i <= ngam; i++) {
        b2 = b1;
        b1 = b0;
        b0 = twox * b1 - b2 + gamcs[ngam - i];
    }
    double value = (b0 - b2) * 0.5 + .9375;
    if (n == 0)
        return value; // x = 1.dddd = 1 + y

    if (n < 0) {
        // -10 <= x < 1; so close to 0 that the result would overflow:
        if (y < xsml)
            return x > 0 ? GB_POSINF : GB_NEGINF;
        n = -n;
        for (int i = 0; i < n; i++)
            value /= (x + i);
        return value;
    }
    // 2 <= x <= 10
    for (int i = 1; i <= n; i++)
        value *= (y + i);
    return value;
}
