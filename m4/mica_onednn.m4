# mica_onednn.m4 - oneDNN, the CPU implementations' library (optional).
# serial 1
#
# MICA_CHECK_ONEDNN
#   --with-onednn[=DIR]   oneDNN 2.x in DIR (DIR/include, DIR/lib64 or
#                         DIR/lib); default: detect in the default paths
#                         (Debian's libdnnl-dev) and build without it if
#                         absent.  --without-onednn: never.
#
#   Modules never link oneDNN: the kit opens libdnnl.so.2 on first use
#   (modules/common/kit_onednn.c), so only its headers are needed to
#   build; the library is checked too, so that the build's tests run it.
#   Defines MICA_HAVE_ONEDNN in config.h; conditional MICA_ONEDNN;
#   substitutes MICA_ONEDNN_CPPFLAGS and MICA_ONEDNN_LDFLAGS (a run path
#   for the loader when DIR is given).

AC_DEFUN([MICA_CHECK_ONEDNN], [
AC_ARG_WITH([onednn],
  [AS_HELP_STRING([--with-onednn@<:@=DIR@:>@],
    [oneDNN 2.x for the CPU implementations of Convolution, Pooling...
     (default: detect; optional)])],
  [], [with_onednn=check])

mica_onednn=no
MICA_ONEDNN_CPPFLAGS=
MICA_ONEDNN_LDFLAGS=
AS_IF([test "x$with_onednn" != xno], [
  mica_onednn_base=
  AS_CASE([$with_onednn],
    [yes|check], [],
    [MICA_ONEDNN_CPPFLAGS="-I$with_onednn/include"
     for mica_d in "$with_onednn/lib64" "$with_onednn/lib"; do
       AS_IF([test -d "$mica_d"],
             [mica_onednn_base="-L$mica_d"
              MICA_ONEDNN_LDFLAGS="-Wl,-rpath,$mica_d"; break])
     done])
  mica_save_CPPFLAGS=$CPPFLAGS
  mica_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $MICA_ONEDNN_CPPFLAGS"
  LIBS="$mica_onednn_base -ldnnl $LIBS"
  AC_MSG_CHECKING([for oneDNN 2.x])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <dnnl.h>
#include <dnnl_debug.h>
#if DNNL_VERSION_MAJOR != 2
#error mica uses oneDNN 2's C API
#endif]],
      [[dnnl_engine_t e; (void)dnnl_status2str(dnnl_success);
        return (int)dnnl_engine_create(&e, dnnl_cpu, 0);]])],
    [mica_onednn=yes], [])
  AC_MSG_RESULT([$mica_onednn])
  CPPFLAGS=$mica_save_CPPFLAGS
  LIBS=$mica_save_LIBS
  AS_IF([test "x$mica_onednn" = xyes], [
      AC_DEFINE([MICA_HAVE_ONEDNN], [1],
                [Define to 1 to build the oneDNN implementations.])
    ], [test "x$with_onednn" != xcheck], [
      AC_MSG_ERROR([--with-onednn=$with_onednn: no oneDNN 2.x (dnnl.h and libdnnl; see config.log)])
    ], [
      MICA_ONEDNN_CPPFLAGS=
      MICA_ONEDNN_LDFLAGS=
    ])
])
AM_CONDITIONAL([MICA_ONEDNN], [test "x$mica_onednn" = xyes])
AC_SUBST([MICA_ONEDNN_CPPFLAGS])
AC_SUBST([MICA_ONEDNN_LDFLAGS])
])
