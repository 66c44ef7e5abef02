# mica_triton.m4 - configure --enable-triton: the Triton Inference Server
# backend, libtriton_mica.so (tools/triton/).               -*- Autoconf -*-
# serial 2
#
# The backend declares the part of Triton's C API it uses itself, so it
# needs no Triton headers or libraries at build time; it needs shared
# libraries (the server dlopens it), POSIX threads and aligned_alloc.
# Explicitly enabled and lacking one of them is an error.
#
# MICA_TRITON_VENV (precious) names a Python virtual environment holding
# nvidia-pytriton and tritonclient[http], which tests/test_triton.sh uses
# (the environment variable of the same name wins at test time).
#
# Sets the conditional MICA_TRITON and mica_triton_summary.

AC_DEFUN([MICA_CHECK_TRITON], [
AC_ARG_ENABLE([triton],
  [AS_HELP_STRING([--enable-triton],
                  [build libtriton_mica.so, a backend for NVIDIA Triton
                   Inference Server (default: no)])],
  [], [enable_triton=no])
AC_ARG_VAR([MICA_TRITON_VENV],
  [a Python virtual environment with nvidia-pytriton and tritonclient[http]
   for the Triton backend's test])
mica_triton_summary=no
AS_CASE([$enable_triton],
  [yes], [
    mica_triton_missing=
    AS_IF([test "x$enable_shared" = xno],
          [mica_triton_missing="$mica_triton_missing shared-libraries"])
    AC_CHECK_FUNCS([aligned_alloc pthread_mutex_init clock_gettime])
    AS_IF([test "x$ac_cv_func_aligned_alloc" != xyes],
          [mica_triton_missing="$mica_triton_missing aligned_alloc"])
    AS_IF([test "x$ac_cv_func_pthread_mutex_init" != xyes],
          [mica_triton_missing="$mica_triton_missing pthreads"])
    AS_IF([test "x$ac_cv_func_clock_gettime" != xyes],
          [mica_triton_missing="$mica_triton_missing clock_gettime"])
    AS_IF([test -n "$mica_triton_missing"],
          [AC_MSG_ERROR([--enable-triton needs what this system lacks:$mica_triton_missing])])
    mica_triton_summary="yes (test venv: ${MICA_TRITON_VENV:-none given})"],
  [no], [],
  [AC_MSG_ERROR([bad value '$enable_triton' for --enable-triton])])
AM_CONDITIONAL([MICA_TRITON], [test "x$enable_triton" = xyes])
dnl The value given to configure reaches the test as MICA_TRITON_VENV_CONF,
dnl so that a MICA_TRITON_VENV set in the environment of `make check` is
dnl not overridden by a make variable of the same name.
MICA_TRITON_VENV_CONF=$MICA_TRITON_VENV
AC_SUBST([MICA_TRITON_VENV_CONF])
AM_SUBST_NOTMAKE([MICA_TRITON_VENV])
])
