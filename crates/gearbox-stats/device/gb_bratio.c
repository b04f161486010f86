// gb_bratio.c: the incomplete beta function ratio I_x(a,b) (R's bratio,
// ACM TOMS 708 with R's log_p extensions): *w = I_x(a,b), *w1 = 1 - I_x(a,b)
// (logs when log_p), *ierr = 0 or TOMS's error code; y = 1 - x.
// @depends gb_bratio_log1_exp gb_fpser gb_apser gb_bpser gb_bup gb_bgrat gb_bfrac gb_basym
GB_FN void gb_bratio(double a, double b, double x, double y, double *w, double *w1,
                          int *ierr, int log_p)
{
    int do_swap;
    int n, ierr1 = 0;
    double z, a0, b0, x0, y0, lambda;

    /* eps: the smallest x with 1 + x > 1; replaced by 1e-15 below
     * for almost all purposes */
    double eps = 2. * (0.5 * GB_DBL_EPSILON);

    *w = GB_PD__0;
    *w1 = GB_PD__0;

    // safeguard, preventing infinite loops further down
    if (isnan(x) || isnan(y) || isnan(a) || isnan(b)) { *ierr = 9; return; }
    if (a < 0. || b < 0.) { *ierr = 1; return; }
    if (a == 0. && b == 0.) { *ierr = 2; return; }
    if (x < 0. || x > 1.) { *ierr = 3; return; }
    if (y < 0. || y > 1.) { *ierr = 4; return; }

    /* check that  'y == 1 - x' : */
    z = x + y - 0.5 - 0.5;
    if (fabs(z) > eps * 3.) { *ierr = 5; return; }

    *ierr = 0;
    if (x == 0.) {
        if (a == 0.) { *ierr = 6; return; }
        *w = GB_PD__0; *w1 = GB_PD__1; return;
    }
    if (y == 0.) {
        if (b == 0.) { *ierr = 7; return; }
        *w = GB_PD__1; *w1 = GB_PD__0; return;
    }
    if (a == 0.) { *w = GB_PD__1; *w1 = GB_PD__0; return; }
    if (b == 0.) { *w = GB_PD__0; *w1 = GB_PD__1; return; }

    eps = (eps > 1e-15) ? eps : 1e-15;
    int a_lt_b = (a < b);
    if ((a_lt_b ? b : a) < eps * .001) { /* a and b < 0.001 * eps */
        // result independent of x: *w = a/(a+b), w1 = b/(a+b)
        if (log_p) {
            if (a_lt_b) {
                *w  = log1p(-a/(a+b)); // notably if a << b
                *w1 = log  ( a/(a+b));
            } else { // b <= a
                *w  = log  ( b/(a+b));
                *w1 = log1p(-b/(a+b));
            }
        } else {
            *w  = b / (a + b);
            *w1 = a / (a + b);
        }
        return;
    }

#define GB_SET_0_noswap a0 = a; x0 = x; b0 = b; y0 = y;
#define GB_SET_0_swap   a0 = b; x0 = y; b0 = a; y0 = x;
/* where the algorithms lead; ends as in TOMS's L_end* labels */
#define GB_L_W_BPSER  1
#define GB_L_W1_BPSER 2
#define GB_L_BFRAC    3
#define GB_L_140      4
#define GB_L_BASYM    5
#define GB_L_DONE     0
#define GB_E_END      0
#define GB_E_FROM_W   1
#define GB_E_FROM_W1  2
#define GB_E_FROM_W1_LOG 3
    int step = GB_L_DONE, fin = GB_E_END;
    lambda = 0.;

    if ((a < b ? a : b) <= 1.) { /*------------------------ a <= 1  or  b <= 1 ---- */
        do_swap = (x > 0.5);
        if (do_swap) {
            GB_SET_0_swap;
        } else {
            GB_SET_0_noswap;
        }
        /* now have  x0 <= 1/2 <= y0  (still  x0+y0 == 1) */
        double eps_a0 = eps * a0, eps_b0 = eps * b0;
        if (b0 < (eps < eps_a0 ? eps : eps_a0)) { /* L80: */
            *w = gb_fpser(a0, b0, x0, eps, log_p);
            *w1 = log_p ? gb_bratio_log1_exp(*w) : 0.5 - *w + 0.5;
        }
        else if (a0 < (eps < eps_b0 ? eps : eps_b0) && b0 * x0 <= 1.) { /* L90: */
            *w1 = gb_apser(a0, b0, x0, eps);
            fin = GB_E_FROM_W1;
        }
        else {
            /* 0: not bgrat; 1: bgrat after bup; 2: bgrat with w1 = 0 */
            int to_bgrat = 0;
            if ((a0 > b0 ? a0 : b0) > 1.) { /* L20:  min(a,b) <= 1 < max(a,b)  */
                if (b0 <= 1.) step = GB_L_W_BPSER;
                else if (x0 >= 0.29) /* was 0.3, PR#13786 */ step = GB_L_W1_BPSER;
                else if (x0 < 0.1 && pow(x0*b0, a0) <= 0.7) step = GB_L_W_BPSER;
                else if (b0 > 15.) to_bgrat = 2;
                else to_bgrat = 1;
            } else { /*  a, b <= 1 */
                if (a0 >= (0.2 < b0 ? 0.2 : b0)) step = GB_L_W_BPSER;
                else if (pow(x0, a0) <= 0.9) step = GB_L_W_BPSER;
                else if (x0 >= 0.3) step = GB_L_W1_BPSER;
                else to_bgrat = 1;
            }
            if (to_bgrat) {
                int did_bup = 0;
                n = 20;
                if (to_bgrat == 2) {
                    *w1 = 0.;
                } else {
                    *w1 = gb_bup(b0, a0, y0, x0, n, eps, 0);
                    did_bup = 1;
                    b0 += n;
                }
                /* L131: */
                gb_bgrat(b0, a0, y0, x0, w1, 15*eps, &ierr1, 0);
                if (*w1 == 0 || (0 < *w1 && *w1 < GB_DBL_MIN)) { // w1=0 or very close:
                    // "almost surely" from underflow, try more: [2013-03-04]
                    if (did_bup) { // re-do that part on log scale:
                        *w1 = gb_bup(b0 - n, a0, y0, x0, n, eps, 1);
                    }
                    else *w1 = GB_NEGINF; // = 0 on log-scale
                    gb_bgrat(b0, a0, y0, x0, w1, 15*eps, &ierr1, 1);
                    if (ierr1) *ierr = 10 + ierr1;
                    fin = GB_E_FROM_W1_LOG;
                } else {
                    if (ierr1) *ierr = 10 + ierr1;
                    fin = GB_E_FROM_W1;
                }
            }
        }
    }
    else { /* L30: -------------------- both  a, b > 1  {a0 > 1  &  b0 > 1} ---*/

        /* lambda := a y - b x  =  (a + b)y  =  a - (a+b)x    {using x + y == 1},
         * ------ using the numerically best version : */
        lambda = isfinite(a + b)
            ? ((a > b) ? (a + b) * y - b : a - (a + b) * x)
            : a*y - b*x;
        do_swap = (lambda < 0.);
        if (do_swap) {
            lambda = -lambda;
            GB_SET_0_swap;
        } else {
            GB_SET_0_noswap;
        }

        if (b0 < 40.) {
            if (b0 * x0 <= 0.7 || (log_p && lambda > 650.)) step = GB_L_W_BPSER;
            else step = GB_L_140;
        }
        else if (a0 > b0) { /* ----  a0 > b0 >= 40  ---- */
            if (b0 <= 100. || lambda > b0 * 0.03) step = GB_L_BFRAC;
            else step = GB_L_BASYM;
        }
        else if (a0 <= 100.) step = GB_L_BFRAC;
        else if (lambda > a0 * 0.03) step = GB_L_BFRAC;
        else step = GB_L_BASYM;
    }

    if (step == GB_L_140) {
        /* b0 := fractional_part( b0 )  in (0, 1]  */
        n = (int) b0;
        b0 -= n;
        if (b0 == 0.) {
            --n; b0 = 1.;
        }
        *w = gb_bup(b0, a0, y0, x0, n, eps, 0);
        if (*w < GB_DBL_MIN && log_p) { /* do not believe it; try bpser() : */
            /*revert: */ b0 += n;
            step = GB_L_W_BPSER;
        } else {
            if (x0 <= 0.7) {
                *w += gb_bpser(a0, b0, x0, eps, /* log_p = */ 0);
            } else {
                /* L150: */
                if (a0 <= 15.) {
                    n = 20;
                    *w += gb_bup(a0, b0, x0, y0, n, eps, 0);
                    a0 += n;
                }
                gb_bgrat(a0, b0, x0, y0, w, 15*eps, &ierr1, 0);
                if (ierr1) *ierr = 10 + ierr1;
            }
            fin = GB_E_FROM_W;
            step = GB_L_DONE;
        }
    }

    switch (step) {
    case GB_L_W_BPSER: // was L100
        *w = gb_bpser(a0, b0, x0, eps, log_p);
        *w1 = log_p ? gb_bratio_log1_exp(*w) : 0.5 - *w + 0.5;
        break;
    case GB_L_W1_BPSER: // was L110
        *w1 = gb_bpser(b0, a0, y0, eps, log_p);
        *w  = log_p ? gb_bratio_log1_exp(*w1) : 0.5 - *w1 + 0.5;
        break;
    case GB_L_BFRAC:
        *w = gb_bfrac(a0, b0, x0, y0, lambda, eps * 15., log_p);
        *w1 = log_p ? gb_bratio_log1_exp(*w) : 0.5 - *w + 0.5;
        break;
    case GB_L_BASYM: /* L180: */
        *w = gb_basym(a0, b0, lambda, eps * 100., log_p);
        *w1 = log_p ? gb_bratio_log1_exp(*w) : 0.5 - *w + 0.5;
        break;
    default:
        break;
    }

    switch (fin) {
    case GB_E_FROM_W:
        if (log_p) {
            *w1 = log1p(-*w);
            *w  = log(*w);
        } else {
            *w1 = 0.5 - *w + 0.5;
        }
        break;
    case GB_E_FROM_W1:
        if (log_p) {
            *w  = log1p(-*w1);
            *w1 = log(*w1);
        } else {
            *w = 0.5 - *w1 + 0.5;
        }
        break;
    case GB_E_FROM_W1_LOG:
        // *w1 = log(w1) already; w = 1 - w1  ==> log(w) = log(1 - w1) = log(1 - exp(*w1))
        if (log_p) {
            *w = gb_bratio_log1_exp(*w1);
        } else {
            *w  = /* 1 - exp(*w1) */ -expm1(*w1);
            *w1 = exp(*w1);
        }
        break;
    default:
        break;
    }

    if (do_swap) { /* swap */
        double t = *w; *w = *w1; *w1 = t;
    }
#undef GB_SET_0_noswap
#undef GB_SET_0_swap
#undef GB_L_W_BPSER
#undef GB_L_W1_BPSER
#undef GB_L_BFRAC
#undef GB_L_140
#undef GB_L_BASYM
#undef GB_L_DONE
#undef GB_E_END
#undef GB_E_FROM_W
#undef GB_E_FROM_W1
#undef GB_E_FROM_W1_LOG
}
