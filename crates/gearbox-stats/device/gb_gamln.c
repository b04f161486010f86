// gb_gamln.c: ln(gamma(a)) for positive a (TOMS 708 gamln, A. H. Morris).
// @depends gb_gamln1
GB_FN double gb_gamln(double a)
{
    const double d = .418938533204673;/* d == 0.5*(LN(2*PI) - 1) */

    const double c0 = .0833333333333333;
    const double c1 = -.00277777777760991;
    const double c2 = 7.9365066682539e-4;
    const double c3 = -5.9520293135187e-4;
    const double c4 = 8.37308034031215e-4;
    const double c5 = -.00165322962780713;

    if (a <= 0.8)
        return gb_gamln1(a) - log(a); /* ln(G(a+1)) - ln(a) == ln(G(a+1)/a) = ln(G(a)) */
    else if (a <= 2.25)
        return gb_gamln1(a - 0.5 - 0.5);

    else if (a < 10.) {
        int i, n = (int)(a - 1.25);
        double t = a;
        double w = 1.;
        for (i = 1; i <= n; ++i) {
            t += -1.;
            w *= t;
        }
        return gb_gamln1(t - 1.) + log(w);
    }
    else { /* a >= 10 */
        double t = 1. / (a * a);
        double w = (((((c5 * t + c4) * t + c3) * t + c2) * t + c1) * t + c0) / a;
        return d + w + (a - 0.5) * (log(a) - 1.);
    }
}
