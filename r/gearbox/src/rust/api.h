SEXP savvy_gb_calibrate_impl__ffi(void);
SEXP savvy_gb_fallback_columns__ffi(void);
SEXP savvy_gb_fallback_reset__ffi(void);
SEXP savvy_gb_glm_grid_impl__ffi(SEXP c_arg__family, SEXP c_arg__link, SEXP c_arg__dispersion, SEXP c_arg__b, SEXP c_arg__y, SEXP c_arg__x, SEXP c_arg__mu, SEXP c_arg__p, SEXP c_arg__alpha, SEXP c_arg__wt);
SEXP savvy_gb_grad_impl__ffi(SEXP c_arg__f, SEXP c_arg__args, SEXP c_arg__with_value);
SEXP savvy_gb_linear_init__ffi(SEXP c_arg__input, SEXP c_arg__output, SEXP c_arg__bias, SEXP c_arg__seed);
SEXP savvy_gb_many_lm_impl__ffi(SEXP c_arg__x, SEXP c_arg__y, SEXP c_arg__intercept, SEXP c_arg__names);
SEXP savvy_gb_nmath_impl__ffi(SEXP c_arg__name, SEXP c_arg__args, SEXP c_arg__flags);
SEXP savvy_gb_panic_for_test__ffi(void);
SEXP savvy_gb_set_precision__ffi(SEXP c_arg__mode);
SEXP savvy_gb_set_runtime_options__ffi(SEXP c_arg__auto_probe, SEXP c_arg__quiet);
SEXP savvy_gb_status_columns__ffi(void);
SEXP savvy_gb_use_gpu_impl__ffi(SEXP c_arg__backend, SEXP c_arg__quiet);

// methods and associated functions for GbArray
SEXP savvy_GbArray_binary__ffi(SEXP self__, SEXP c_arg__other, SEXP c_arg__op);
SEXP savvy_GbArray_binary_scalar__ffi(SEXP self__, SEXP c_arg__value, SEXP c_arg__op, SEXP c_arg__value_first);
SEXP savvy_GbArray_broadcast__ffi(SEXP self__, SEXP c_arg__other, SEXP c_arg__op);
SEXP savvy_GbArray_chol__ffi(SEXP self__);
SEXP savvy_GbArray_crossprod__ffi(SEXP self__, SEXP c_arg__other);
SEXP savvy_GbArray_cumsum__ffi(SEXP self__);
SEXP savvy_GbArray_device__ffi(SEXP self__);
SEXP savvy_GbArray_dim__ffi(SEXP self__);
SEXP savvy_GbArray_eval__ffi(SEXP self__);
SEXP savvy_GbArray_explain__ffi(SEXP self__);
SEXP savvy_GbArray_explain_op__ffi(SEXP self__, SEXP c_arg__op);
SEXP savvy_GbArray_from_r__ffi(SEXP c_arg__x, SEXP c_arg__dim, SEXP c_arg__mode);
SEXP savvy_GbArray_inverse__ffi(SEXP self__);
SEXP savvy_GbArray_math__ffi(SEXP self__, SEXP c_arg__name);
SEXP savvy_GbArray_matmul__ffi(SEXP self__, SEXP c_arg__other);
SEXP savvy_GbArray_mode__ffi(SEXP self__);
SEXP savvy_GbArray_reduce__ffi(SEXP self__, SEXP c_arg__name, SEXP c_arg__axis);
SEXP savvy_GbArray_solve__ffi(SEXP self__, SEXP c_arg__b);
SEXP savvy_GbArray_subset__ffi(SEXP self__, SEXP c_arg__rows, SEXP c_arg__all_rows, SEXP c_arg__cols, SEXP c_arg__all_cols, SEXP c_arg__flat);
SEXP savvy_GbArray_t__ffi(SEXP self__);
SEXP savvy_GbArray_tcrossprod__ffi(SEXP self__, SEXP c_arg__other);
SEXP savvy_GbArray_to_r__ffi(SEXP self__);

// methods and associated functions for GbHandle
SEXP savvy_GbHandle_backend__ffi(SEXP self__);
SEXP savvy_GbHandle_ewise__ffi(SEXP self__, SEXP c_arg__other, SEXP c_arg__op);
SEXP savvy_GbHandle_ewise_scalar__ffi(SEXP self__, SEXP c_arg__value, SEXP c_arg__op);
SEXP savvy_GbHandle_new__ffi(SEXP c_arg__x, SEXP c_arg__backend);
SEXP savvy_GbHandle_shares_source__ffi(SEXP self__);
SEXP savvy_GbHandle_snapshot__ffi(SEXP self__);
SEXP savvy_GbHandle_sweep__ffi(SEXP self__, SEXP c_arg__stats, SEXP c_arg__margin, SEXP c_arg__op);
SEXP savvy_GbHandle_view__ffi(SEXP self__);
