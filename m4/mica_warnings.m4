# mica_warnings.m4 - compiler warnings and symbol visibility for mica.
# serial 1
#
# MICA_WARNINGS
#   Always warn with -Wall -Wextra; --enable-werror adds -Werror (CI uses
#   it).  Substitutes:
#     MICA_WARN_CFLAGS     for the C compiler (part of AM_CFLAGS)
#     MICA_WARN_NVCCFLAGS  for nvcc's host compiler
#
# MICA_VISIBILITY
#   Checks that the C compiler takes -fvisibility=hidden and substitutes it
#   as MICA_VISIBILITY_CFLAGS; public symbols carry MICA_EXPORT.

AC_DEFUN([MICA_WARNINGS], [
AC_REQUIRE([AC_PROG_CC])
AC_ARG_ENABLE([werror],
  [AS_HELP_STRING([--enable-werror],
                  [treat compiler warnings as errors (default: no)])],
  [], [enable_werror=no])
MICA_WARN_CFLAGS="-Wall -Wextra"
MICA_WARN_NVCCFLAGS="-Xcompiler -Wall,-Wextra"
AS_CASE([$enable_werror],
  [yes], [MICA_WARN_CFLAGS="$MICA_WARN_CFLAGS -Werror"
          MICA_WARN_NVCCFLAGS="$MICA_WARN_NVCCFLAGS -Xcompiler -Werror"],
  [no], [],
  [AC_MSG_ERROR([bad value '$enable_werror' for --enable-werror])])
AC_SUBST([MICA_WARN_CFLAGS])
AC_SUBST([MICA_WARN_NVCCFLAGS])
])

AC_DEFUN([MICA_VISIBILITY], [
AC_REQUIRE([AC_PROG_CC])
AC_CACHE_CHECK([whether $CC accepts -fvisibility=hidden],
  [mica_cv_cc_visibility],
  [mica_save_CFLAGS=$CFLAGS
   CFLAGS="$CFLAGS -fvisibility=hidden -Werror"
   AC_COMPILE_IFELSE([AC_LANG_PROGRAM(
     [[__attribute__((visibility("default"))) int mica_probe(void);
       int mica_probe(void) { return 0; }]], [[]])],
     [mica_cv_cc_visibility=yes], [mica_cv_cc_visibility=no])
   CFLAGS=$mica_save_CFLAGS])
MICA_VISIBILITY_CFLAGS=
AS_IF([test "x$mica_cv_cc_visibility" = xyes],
  [MICA_VISIBILITY_CFLAGS="-fvisibility=hidden"])
AC_SUBST([MICA_VISIBILITY_CFLAGS])
])
