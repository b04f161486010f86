// gb_pd_lower_series.c: sum_{n>=0} y (y-1) ... (y-n) / lambda^(n+1) (R's
// pd_lower_series in pgamma.c).
// @depends gb_pd_lower_cf
GB_FN double gb_pd_lower_series(double lambda, double y)
{
    double term = 1, sum = 0;

    while (y >= 1 && term > sum * GB_DBL_EPSILON) {
        term *= y / lambda;
        sum += term;
        y--;
    }
    /* sum =  \sum_{n=0}^ oo  y*(y-1)*...*(y - n) / lambda^(n+1)
     *	   ~  y/lambda + o(y/lambda) */

    if (y != floor(y)) {
        /*
         * The series does not converge as the terms start getting
         * bigger (besides flipping sign) for y < -lambda.
         */
        double f;
        f = gb_pd_lower_cf(y, lambda + 1 - y);
        sum += term * f;
    }

    return sum;
}
