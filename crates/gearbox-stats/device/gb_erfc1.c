// gb_erfc1.c: erfc(x) for ind == 0, exp(x*x)*erfc(x) otherwise (TOMS 708
// erfc1).
// @depends gb_exparg
GB_FN double gb_erfc1(int ind, double x)
{
    const double c = .564189583547756;
    const double a[5] = { 7.7105849500132e-5,-.00133733772997339,
                          .0323076579225834,.0479137145607681,.128379167095513 };
    const double b[3] = { .00301048631703895,.0538971687740286,
                          .375795757275549 };
    const double p[8] = { -1.36864857382717e-7,.564195517478974,
                          7.21175825088309,43.1622272220567,152.98928504694,
                          339.320816734344,451.918953711873,300.459261020162 };
    const double q[8] = { 1.,12.7827273196294,77.0001529352295,
                          277.585444743988,638.980264465631,931.35409485061,
                          790.950925327898,300.459260956983 };
    const double r[5] = { 2.10144126479064,26.2370141675169,
                          21.3688200555087,4.6580782871847,.282094791773523 };
    const double s[4] = { 94.153775055546,187.11481179959,
                          99.0191814623914,18.0124575948747 };

    double ret_val;
    double e, t, w, bot, top;

    double ax = fabs(x);
    //				|X| <= 0.5 */
    if (ax <= 0.5) {
        double t = x * x,
            top = (((a[0] * t + a[1]) * t + a[2]) * t + a[3]) * t + a[4] + 1.,
            bot = ((b[0] * t + b[1]) * t + b[2]) * t + 1.;
        ret_val = 0.5 - x * (top / bot) + 0.5;
        if (ind != 0) {
            ret_val = exp(t) * ret_val;
        }
        return ret_val;
    }
    // else (L10:):		0.5 < |X| <= 4
    if (ax <= 4.) {
        top = ((((((p[0] * ax + p[1]) * ax + p[2]) * ax + p[3]) * ax + p[4]) * ax
                + p[5]) * ax + p[6]) * ax + p[7];
        bot = ((((((q[0] * ax + q[1]) * ax + q[2]) * ax + q[3]) * ax + q[4]) * ax
                + q[5]) * ax + q[6]) * ax + q[7];
        ret_val = top / bot;

    }
    //			|X| > 4
    else {
        // L20:
        if (x <= -5.6) {
            // L50:  LIMIT VALUE FOR "LARGE" NEGATIVE X
            ret_val = 2.;
            if (ind != 0) {
                ret_val = exp(x * x) * 2.;
            }
            return ret_val;
        }
        if (ind == 0 && (x > 100. || x * x > -gb_exparg(1))) {
            // LIMIT VALUE FOR LARGE POSITIVE X   WHEN IND = 0
            // L60:
            return 0.;
        }

        // L30:
        t = 1. / (x * x);
        top = (((r[0] * t + r[1]) * t + r[2]) * t + r[3]) * t + r[4];
        bot = (((s[0] * t + s[1]) * t + s[2]) * t + s[3]) * t + 1.;
        ret_val = (c - t * top / bot) / ax;
    }

    // L40:                 FINAL ASSEMBLY
    if (ind != 0) {
        if (x < 0.)
            ret_val = exp(x * x) * 2. - ret_val;
    } else {
        // L41:  ind == 0 :
        w = x * x;
        t = w;
        e = w - t;
        ret_val = (0.5 - e + 0.5) * exp(-t) * ret_val;
        if (x < 0.)
            ret_val = 2. - ret_val;
    }
    return ret_val;
}
