// gb_glm_probit_ratio.c: dnorm(eta) / pnorm(eta), the probit
// d log p / d eta, without cancellation (glm::family's probit_ratio): below
// -sqrt(32) as (1 / sqrt(2 pi)) / temp, where pnorm(eta) =
// exp(-eta^2 / 2) temp is Cody's tail form from gb_pnorm_both, with its
// coefficients, so exp(-eta^2 / 2) cancels exactly; elsewhere the plain
// quotient, whose denominator is at least pnorm(-sqrt(32)).
// @depends gb_dnorm gb_pnorm
GB_FN double gb_glm_probit_ratio(double eta)
{
    const double p[6] = {
        0.21589853405795699,
        0.1274011611602473639,
        0.022235277870649807,
        0.001421619193227893466,
        2.9112874951168792e-5,
        0.02307344176494017303
    };
    const double q[5] = {
        1.28426009614491121,
        0.468238212480865118,
        0.0659881378689285515,
        0.00378239633202758244,
        7.29751555083966205e-5
    };
    if (eta < -M_SQRT_32) {
        double y = -eta;
        double xsq = 1. / (y * y);
        double xnum = p[5] * xsq;
        double xden = xsq;
        for (int i = 0; i < 4; ++i) {
            xnum = (xnum + p[i]) * xsq;
            xden = (xden + q[i]) * xsq;
        }
        double temp = (M_1_SQRT_2PI - xsq * (xnum + p[4]) / (xden + q[4])) / y;
        return M_1_SQRT_2PI / temp;
    }
    return gb_dnorm(eta, 0., 1., 0) / gb_pnorm(eta, 0., 1., 1, 0);
}
