// gb_betaln.c: ln(Beta(a0, b0)) (TOMS 708 betaln).
// @depends gb_gamln gb_algdiv gb_gsumln gb_bcorr gb_alnrel
GB_FN double gb_betaln(double a0, double b0)
{
    const double e = .918938533204673;/* e == 0.5*LN(2*PI) */

    double
        a = (a0 < b0) ? a0 : b0,
        b = (a0 > b0) ? a0 : b0;

    if (a < 8.) {
        double w;
        int n;
        if (a < 1.) {
            /* A < 1 */
            if (b < 8.)
                return gb_gamln(a) + (gb_gamln(b) - gb_gamln(a+b));
            else
                return gb_gamln(a) + gb_algdiv(a, b);
        }
        /* else */
        /* 1 <= A < 8 */
        if (a < 2.) {
            if (b <= 2.) {
                return gb_gamln(a) + gb_gamln(b) - gb_gsumln(a, b);
            }
            /* else */

            if (b < 8.) {
                w = 0.;
                goto L40;
            }
            return gb_gamln(a) + gb_algdiv(a, b);
        }
        // else L30:    REDUCTION OF A WHEN B <= 1000

        if (b <= 1e3) {
            n = (int)(a - 1.);
            w = 1.;
            for (int i = 1; i <= n; ++i) {
                a += -1.;
                double h = a / b;
                w *= h / (h + 1.);
            }
            w = log(w);

            if (b >= 8.)
                return w + gb_gamln(a) + gb_algdiv(a, b);

            // else
            goto L40;
        }
        else {
            // L50:	reduction of A when  B > 1000
            n = (int)(a - 1.);
            w = 1.;
            for (int i = 1; i <= n; ++i) {
                a += -1.;
                w *= a / (a / b + 1.);
            }
            return log(w) - n * log(b) + (gb_gamln(a) + gb_algdiv(a, b));
        }
      L40:
        // 	1 < A <= B < 8 :  reduction of B
        n = (int)(b - 1.);
        double z = 1.;
        for (int i = 1; i <= n; ++i) {
            b += -1.;
            z *= b / (a + b);
        }
        return w + log(z) + (gb_gamln(a) + (gb_gamln(b) - gb_gsumln(a, b)));

    } else {
        /* L60:			A >= 8 */
        double
            w = gb_bcorr(a, b),
            h = a / b,
            u = -(a - 0.5) * log(h / (h + 1.)),
            v = b * gb_alnrel(h);
        if (u > v)
            return log(b) * -0.5 + e + w - v - u;
        else
            return log(b) * -0.5 + e + w - u - v;
    }
}
