
// clang-format sorts includes unless SortIncludes: Never. However, the ordering
// does matter here. So, we need to disable clang-format for safety.

// clang-format off
#include <stdint.h>
#include <Rinternals.h>
#include <R_ext/Parse.h>
// clang-format on

#include "rust/api.h"

static uintptr_t TAGGED_POINTER_MASK = (uintptr_t)1;

SEXP handle_result(SEXP res_) {
    uintptr_t res = (uintptr_t)res_;

    // An error is indicated by tag.
    if ((res & TAGGED_POINTER_MASK) == 1) {
        // Remove tag
        SEXP res_aligned = (SEXP)(res & ~TAGGED_POINTER_MASK);

        // Currently, there are two types of error cases:
        //
        //   1. Error from Rust code
        //   2. Error from R's C API, which is caught by R_UnwindProtect()
        //
        if (TYPEOF(res_aligned) == CHARSXP) {
            // In case 1, the result is an error message that can be passed to
            // Rf_errorcall() directly.
            Rf_errorcall(R_NilValue, "%s", CHAR(res_aligned));
        } else {
            // In case 2, the result is the token to restart the
            // cleanup process on R's side.
            R_ContinueUnwind(res_aligned);
        }
    }

    return (SEXP)res;
}

SEXP savvy_gb_calibrate_impl__impl(void) {
    SEXP res = savvy_gb_calibrate_impl__ffi();
    return handle_result(res);
}

SEXP savvy_gb_fallback_columns__impl(void) {
    SEXP res = savvy_gb_fallback_columns__ffi();
    return handle_result(res);
}

SEXP savvy_gb_fallback_reset__impl(void) {
    SEXP res = savvy_gb_fallback_reset__ffi();
    return handle_result(res);
}

SEXP savvy_gb_glm_grid_impl__impl(SEXP c_arg__family, SEXP c_arg__link, SEXP c_arg__dispersion, SEXP c_arg__b, SEXP c_arg__y, SEXP c_arg__x, SEXP c_arg__mu, SEXP c_arg__p, SEXP c_arg__alpha, SEXP c_arg__wt) {
    SEXP res = savvy_gb_glm_grid_impl__ffi(c_arg__family, c_arg__link, c_arg__dispersion, c_arg__b, c_arg__y, c_arg__x, c_arg__mu, c_arg__p, c_arg__alpha, c_arg__wt);
    return handle_result(res);
}

SEXP savvy_gb_grad_impl__impl(SEXP c_arg__f, SEXP c_arg__args, SEXP c_arg__with_value) {
    SEXP res = savvy_gb_grad_impl__ffi(c_arg__f, c_arg__args, c_arg__with_value);
    return handle_result(res);
}

SEXP savvy_gb_linear_init__impl(SEXP c_arg__input, SEXP c_arg__output, SEXP c_arg__bias, SEXP c_arg__seed) {
    SEXP res = savvy_gb_linear_init__ffi(c_arg__input, c_arg__output, c_arg__bias, c_arg__seed);
    return handle_result(res);
}

SEXP savvy_gb_many_lm_impl__impl(SEXP c_arg__x, SEXP c_arg__y, SEXP c_arg__intercept, SEXP c_arg__names) {
    SEXP res = savvy_gb_many_lm_impl__ffi(c_arg__x, c_arg__y, c_arg__intercept, c_arg__names);
    return handle_result(res);
}

SEXP savvy_gb_nmath_impl__impl(SEXP c_arg__name, SEXP c_arg__args, SEXP c_arg__flags) {
    SEXP res = savvy_gb_nmath_impl__ffi(c_arg__name, c_arg__args, c_arg__flags);
    return handle_result(res);
}

SEXP savvy_gb_panic_for_test__impl(void) {
    SEXP res = savvy_gb_panic_for_test__ffi();
    return handle_result(res);
}

SEXP savvy_gb_set_precision__impl(SEXP c_arg__mode) {
    SEXP res = savvy_gb_set_precision__ffi(c_arg__mode);
    return handle_result(res);
}

SEXP savvy_gb_set_runtime_options__impl(SEXP c_arg__auto_probe, SEXP c_arg__quiet) {
    SEXP res = savvy_gb_set_runtime_options__ffi(c_arg__auto_probe, c_arg__quiet);
    return handle_result(res);
}

SEXP savvy_gb_status_columns__impl(void) {
    SEXP res = savvy_gb_status_columns__ffi();
    return handle_result(res);
}

SEXP savvy_gb_use_gpu_impl__impl(SEXP c_arg__backend, SEXP c_arg__quiet) {
    SEXP res = savvy_gb_use_gpu_impl__ffi(c_arg__backend, c_arg__quiet);
    return handle_result(res);
}

SEXP savvy_GbArray_binary__impl(SEXP self__, SEXP c_arg__other, SEXP c_arg__op) {
    SEXP res = savvy_GbArray_binary__ffi(self__, c_arg__other, c_arg__op);
    return handle_result(res);
}

SEXP savvy_GbArray_binary_scalar__impl(SEXP self__, SEXP c_arg__value, SEXP c_arg__op, SEXP c_arg__value_first) {
    SEXP res = savvy_GbArray_binary_scalar__ffi(self__, c_arg__value, c_arg__op, c_arg__value_first);
    return handle_result(res);
}

SEXP savvy_GbArray_broadcast__impl(SEXP self__, SEXP c_arg__other, SEXP c_arg__op) {
    SEXP res = savvy_GbArray_broadcast__ffi(self__, c_arg__other, c_arg__op);
    return handle_result(res);
}

SEXP savvy_GbArray_chol__impl(SEXP self__) {
    SEXP res = savvy_GbArray_chol__ffi(self__);
    return handle_result(res);
}

SEXP savvy_GbArray_count_kept__impl(SEXP self__, SEXP c_arg__keep) {
    SEXP res = savvy_GbArray_count_kept__ffi(self__, c_arg__keep);
    return handle_result(res);
}

SEXP savvy_GbArray_cov__impl(SEXP self__, SEXP c_arg__use_) {
    SEXP res = savvy_GbArray_cov__ffi(self__, c_arg__use_);
    return handle_result(res);
}

SEXP savvy_GbArray_cov_with__impl(SEXP self__, SEXP c_arg__y, SEXP c_arg__use_) {
    SEXP res = savvy_GbArray_cov_with__ffi(self__, c_arg__y, c_arg__use_);
    return handle_result(res);
}

SEXP savvy_GbArray_crossprod__impl(SEXP self__, SEXP c_arg__other) {
    SEXP res = savvy_GbArray_crossprod__ffi(self__, c_arg__other);
    return handle_result(res);
}

SEXP savvy_GbArray_cumsum__impl(SEXP self__) {
    SEXP res = savvy_GbArray_cumsum__ffi(self__);
    return handle_result(res);
}

SEXP savvy_GbArray_device__impl(SEXP self__) {
    SEXP res = savvy_GbArray_device__ffi(self__);
    return handle_result(res);
}

SEXP savvy_GbArray_dim__impl(SEXP self__) {
    SEXP res = savvy_GbArray_dim__ffi(self__);
    return handle_result(res);
}

SEXP savvy_GbArray_eval__impl(SEXP self__) {
    SEXP res = savvy_GbArray_eval__ffi(self__);
    return handle_result(res);
}

SEXP savvy_GbArray_explain__impl(SEXP self__) {
    SEXP res = savvy_GbArray_explain__ffi(self__);
    return handle_result(res);
}

SEXP savvy_GbArray_explain_op__impl(SEXP self__, SEXP c_arg__op) {
    SEXP res = savvy_GbArray_explain_op__ffi(self__, c_arg__op);
    return handle_result(res);
}

SEXP savvy_GbArray_from_r__impl(SEXP c_arg__x, SEXP c_arg__dim, SEXP c_arg__mode) {
    SEXP res = savvy_GbArray_from_r__ffi(c_arg__x, c_arg__dim, c_arg__mode);
    return handle_result(res);
}

SEXP savvy_GbArray_inverse__impl(SEXP self__) {
    SEXP res = savvy_GbArray_inverse__ffi(self__);
    return handle_result(res);
}

SEXP savvy_GbArray_math__impl(SEXP self__, SEXP c_arg__name) {
    SEXP res = savvy_GbArray_math__ffi(self__, c_arg__name);
    return handle_result(res);
}

SEXP savvy_GbArray_matmul__impl(SEXP self__, SEXP c_arg__other) {
    SEXP res = savvy_GbArray_matmul__ffi(self__, c_arg__other);
    return handle_result(res);
}

SEXP savvy_GbArray_mode__impl(SEXP self__) {
    SEXP res = savvy_GbArray_mode__ffi(self__);
    return handle_result(res);
}

SEXP savvy_GbArray_reduce__impl(SEXP self__, SEXP c_arg__name, SEXP c_arg__axis) {
    SEXP res = savvy_GbArray_reduce__ffi(self__, c_arg__name, c_arg__axis);
    return handle_result(res);
}

SEXP savvy_GbArray_reduce_kept__impl(SEXP self__, SEXP c_arg__name, SEXP c_arg__axis, SEXP c_arg__keep) {
    SEXP res = savvy_GbArray_reduce_kept__ffi(self__, c_arg__name, c_arg__axis, c_arg__keep);
    return handle_result(res);
}

SEXP savvy_GbArray_solve__impl(SEXP self__, SEXP c_arg__b) {
    SEXP res = savvy_GbArray_solve__ffi(self__, c_arg__b);
    return handle_result(res);
}

SEXP savvy_GbArray_subset__impl(SEXP self__, SEXP c_arg__rows, SEXP c_arg__all_rows, SEXP c_arg__cols, SEXP c_arg__all_cols, SEXP c_arg__flat) {
    SEXP res = savvy_GbArray_subset__ffi(self__, c_arg__rows, c_arg__all_rows, c_arg__cols, c_arg__all_cols, c_arg__flat);
    return handle_result(res);
}

SEXP savvy_GbArray_t__impl(SEXP self__) {
    SEXP res = savvy_GbArray_t__ffi(self__);
    return handle_result(res);
}

SEXP savvy_GbArray_tcrossprod__impl(SEXP self__, SEXP c_arg__other) {
    SEXP res = savvy_GbArray_tcrossprod__ffi(self__, c_arg__other);
    return handle_result(res);
}

SEXP savvy_GbArray_to_r__impl(SEXP self__) {
    SEXP res = savvy_GbArray_to_r__ffi(self__);
    return handle_result(res);
}

SEXP savvy_GbHandle_backend__impl(SEXP self__) {
    SEXP res = savvy_GbHandle_backend__ffi(self__);
    return handle_result(res);
}

SEXP savvy_GbHandle_ewise__impl(SEXP self__, SEXP c_arg__other, SEXP c_arg__op) {
    SEXP res = savvy_GbHandle_ewise__ffi(self__, c_arg__other, c_arg__op);
    return handle_result(res);
}

SEXP savvy_GbHandle_ewise_scalar__impl(SEXP self__, SEXP c_arg__value, SEXP c_arg__op) {
    SEXP res = savvy_GbHandle_ewise_scalar__ffi(self__, c_arg__value, c_arg__op);
    return handle_result(res);
}

SEXP savvy_GbHandle_new__impl(SEXP c_arg__x, SEXP c_arg__backend) {
    SEXP res = savvy_GbHandle_new__ffi(c_arg__x, c_arg__backend);
    return handle_result(res);
}

SEXP savvy_GbHandle_shares_source__impl(SEXP self__) {
    SEXP res = savvy_GbHandle_shares_source__ffi(self__);
    return handle_result(res);
}

SEXP savvy_GbHandle_snapshot__impl(SEXP self__) {
    SEXP res = savvy_GbHandle_snapshot__ffi(self__);
    return handle_result(res);
}

SEXP savvy_GbHandle_sweep__impl(SEXP self__, SEXP c_arg__stats, SEXP c_arg__margin, SEXP c_arg__op) {
    SEXP res = savvy_GbHandle_sweep__ffi(self__, c_arg__stats, c_arg__margin, c_arg__op);
    return handle_result(res);
}

SEXP savvy_GbHandle_view__impl(SEXP self__) {
    SEXP res = savvy_GbHandle_view__ffi(self__);
    return handle_result(res);
}


static const R_CallMethodDef CallEntries[] = {
    {"savvy_gb_calibrate_impl__impl", (DL_FUNC) &savvy_gb_calibrate_impl__impl, 0},
    {"savvy_gb_fallback_columns__impl", (DL_FUNC) &savvy_gb_fallback_columns__impl, 0},
    {"savvy_gb_fallback_reset__impl", (DL_FUNC) &savvy_gb_fallback_reset__impl, 0},
    {"savvy_gb_glm_grid_impl__impl", (DL_FUNC) &savvy_gb_glm_grid_impl__impl, 10},
    {"savvy_gb_grad_impl__impl", (DL_FUNC) &savvy_gb_grad_impl__impl, 3},
    {"savvy_gb_linear_init__impl", (DL_FUNC) &savvy_gb_linear_init__impl, 4},
    {"savvy_gb_many_lm_impl__impl", (DL_FUNC) &savvy_gb_many_lm_impl__impl, 4},
    {"savvy_gb_nmath_impl__impl", (DL_FUNC) &savvy_gb_nmath_impl__impl, 3},
    {"savvy_gb_panic_for_test__impl", (DL_FUNC) &savvy_gb_panic_for_test__impl, 0},
    {"savvy_gb_set_precision__impl", (DL_FUNC) &savvy_gb_set_precision__impl, 1},
    {"savvy_gb_set_runtime_options__impl", (DL_FUNC) &savvy_gb_set_runtime_options__impl, 2},
    {"savvy_gb_status_columns__impl", (DL_FUNC) &savvy_gb_status_columns__impl, 0},
    {"savvy_gb_use_gpu_impl__impl", (DL_FUNC) &savvy_gb_use_gpu_impl__impl, 2},
    {"savvy_GbArray_binary__impl", (DL_FUNC) &savvy_GbArray_binary__impl, 3},
    {"savvy_GbArray_binary_scalar__impl", (DL_FUNC) &savvy_GbArray_binary_scalar__impl, 4},
    {"savvy_GbArray_broadcast__impl", (DL_FUNC) &savvy_GbArray_broadcast__impl, 3},
    {"savvy_GbArray_chol__impl", (DL_FUNC) &savvy_GbArray_chol__impl, 1},
    {"savvy_GbArray_count_kept__impl", (DL_FUNC) &savvy_GbArray_count_kept__impl, 2},
    {"savvy_GbArray_cov__impl", (DL_FUNC) &savvy_GbArray_cov__impl, 2},
    {"savvy_GbArray_cov_with__impl", (DL_FUNC) &savvy_GbArray_cov_with__impl, 3},
    {"savvy_GbArray_crossprod__impl", (DL_FUNC) &savvy_GbArray_crossprod__impl, 2},
    {"savvy_GbArray_cumsum__impl", (DL_FUNC) &savvy_GbArray_cumsum__impl, 1},
    {"savvy_GbArray_device__impl", (DL_FUNC) &savvy_GbArray_device__impl, 1},
    {"savvy_GbArray_dim__impl", (DL_FUNC) &savvy_GbArray_dim__impl, 1},
    {"savvy_GbArray_eval__impl", (DL_FUNC) &savvy_GbArray_eval__impl, 1},
    {"savvy_GbArray_explain__impl", (DL_FUNC) &savvy_GbArray_explain__impl, 1},
    {"savvy_GbArray_explain_op__impl", (DL_FUNC) &savvy_GbArray_explain_op__impl, 2},
    {"savvy_GbArray_from_r__impl", (DL_FUNC) &savvy_GbArray_from_r__impl, 3},
    {"savvy_GbArray_inverse__impl", (DL_FUNC) &savvy_GbArray_inverse__impl, 1},
    {"savvy_GbArray_math__impl", (DL_FUNC) &savvy_GbArray_math__impl, 2},
    {"savvy_GbArray_matmul__impl", (DL_FUNC) &savvy_GbArray_matmul__impl, 2},
    {"savvy_GbArray_mode__impl", (DL_FUNC) &savvy_GbArray_mode__impl, 1},
    {"savvy_GbArray_reduce__impl", (DL_FUNC) &savvy_GbArray_reduce__impl, 3},
    {"savvy_GbArray_reduce_kept__impl", (DL_FUNC) &savvy_GbArray_reduce_kept__impl, 4},
    {"savvy_GbArray_solve__impl", (DL_FUNC) &savvy_GbArray_solve__impl, 2},
    {"savvy_GbArray_subset__impl", (DL_FUNC) &savvy_GbArray_subset__impl, 6},
    {"savvy_GbArray_t__impl", (DL_FUNC) &savvy_GbArray_t__impl, 1},
    {"savvy_GbArray_tcrossprod__impl", (DL_FUNC) &savvy_GbArray_tcrossprod__impl, 2},
    {"savvy_GbArray_to_r__impl", (DL_FUNC) &savvy_GbArray_to_r__impl, 1},
    {"savvy_GbHandle_backend__impl", (DL_FUNC) &savvy_GbHandle_backend__impl, 1},
    {"savvy_GbHandle_ewise__impl", (DL_FUNC) &savvy_GbHandle_ewise__impl, 3},
    {"savvy_GbHandle_ewise_scalar__impl", (DL_FUNC) &savvy_GbHandle_ewise_scalar__impl, 3},
    {"savvy_GbHandle_new__impl", (DL_FUNC) &savvy_GbHandle_new__impl, 2},
    {"savvy_GbHandle_shares_source__impl", (DL_FUNC) &savvy_GbHandle_shares_source__impl, 1},
    {"savvy_GbHandle_snapshot__impl", (DL_FUNC) &savvy_GbHandle_snapshot__impl, 1},
    {"savvy_GbHandle_sweep__impl", (DL_FUNC) &savvy_GbHandle_sweep__impl, 4},
    {"savvy_GbHandle_view__impl", (DL_FUNC) &savvy_GbHandle_view__impl, 1},
    {NULL, NULL, 0}
};

void R_init_gearbox(DllInfo *dll) {
    R_registerRoutines(dll, NULL, CallEntries, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);

    // Functions for initialization, if any.

}
