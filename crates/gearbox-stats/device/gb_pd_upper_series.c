// gb_pd_upper_series.c: sum_{n>=1} x^n / (y (y+1) ... (y+n-1)) (R's
// pd_upper_series in pgamma.c), a log with log_p.
// @depends
GB_FN double gb_pd_upper_series(double x, double y, int log_p)
{
    double term = x / y;
    double sum = term;

    do {
        y++;
        term *= x / y;
        sum += term;
    } while (term > sum * GB_DBL_EPSILON);

    /* sum =  \sum_{n=1}^ oo  x^n     / (y*(y+1)*...*(y+n-1))
     *	   ~  x/y +  o(x/y)   {which happens when alph -> Inf} */
    return log_p ? log(sum) : sum;
}
