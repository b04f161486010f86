// gb_rlog1.c: x - ln(1 + x) (TOMS 708 rlog1).
// @depends
GB_FN double gb_rlog1(double x)
{
    const double a = .0566749439387324;
    const double b = .0456512608815524;
    const double p0 = .333333333333333;
    const double p1 = -.224696413112536;
    const double p2 = .00620886815375787;
    const double q1 = -1.27408923933623;
    const double q2 = .354508718369557;

    double h, r, t, w, w1;
    if (x < -0.39 || x > 0.57) { /* direct evaluation */
        w = x + 0.5 + 0.5;
        return x - log(w);
    }
    /* else */
    if (x < -0.18) { /* L10: */
        h = x + .3;
        h /= .7;
        w1 = a - h * .3;
    }
    else if (x > 0.18) { /* L20: */
        h = x * .75 - .25;
        w1 = b + h / 3.;
    }
    else { /* Argument Reduction */
        h = x;
        w1 = 0.;
    }

    /* L30: Series Expansion */
    r = h / (h + 2.);
    t = r * r;
    w = ((p2 * t + p1) * t + p0) / ((q2 * t + q1) * t + 1.);
    return t * 2. * (1. / (1. - r) - r * w) + w1;
}
