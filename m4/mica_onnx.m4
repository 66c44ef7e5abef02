# mica_onnx.m4 - find what the ONNX importer needs: protobuf-c (the
# runtime library and its compiler protoc-c) and the onnx.proto that
# Debian's libonnx-dev installs.
# serial 1
#
# MICA_CHECK_ONNX
#   --with-onnx[=PROTO]  build the importer; PROTO is an onnx.proto file or
#                        the folder holding it (default:
#                        /usr/include/onnx/onnx.proto).  The proto2 file
#                        onnx.proto is the one to use: onnx-ml.proto
#                        describes the same messages plus the ML types
#                        (same wire format), and onnx.proto3 loses the
#                        has_ flags the reader relies on to tell a field
#                        left out from a zero.
#   --without-onnx       no importer; the rest of mica is unaffected.
#   Default: build it when everything is found.
#   Defines MICA_HAVE_ONNX, the conditional MICA_ONNX, and substitutes
#   PROTOC_C, ONNX_PROTO, PROTOBUF_C_CFLAGS and PROTOBUF_C_LIBS.

AC_DEFUN([MICA_CHECK_ONNX], [
AC_REQUIRE([AC_PROG_CC])
AC_REQUIRE([PKG_PROG_PKG_CONFIG])
AC_ARG_WITH([onnx],
  [AS_HELP_STRING([--with-onnx@<:@=PROTO@:>@],
    [the ONNX importer, on protobuf-c; PROTO: onnx.proto or its folder
     (default: check, /usr/include/onnx/onnx.proto)])],
  [], [with_onnx=check])
AC_ARG_VAR([PROTOC_C], [the protobuf-c compiler (protoc-c)])

mica_onnx=no
mica_onnx_why=
AS_IF([test "x$with_onnx" != xno], [
  AS_CASE([$with_onnx],
    [yes|check], [ONNX_PROTO=/usr/include/onnx/onnx.proto],
    [AS_IF([test -d "$with_onnx"], [ONNX_PROTO=$with_onnx/onnx.proto],
           [ONNX_PROTO=$with_onnx])])
  AC_MSG_CHECKING([for onnx.proto])
  AS_IF([test -f "$ONNX_PROTO"],
        [AC_MSG_RESULT([$ONNX_PROTO])],
        [AC_MSG_RESULT([no])
         mica_onnx_why="no $ONNX_PROTO (install libonnx-dev)"])
  AC_PATH_PROGS([PROTOC_C], [protoc-c protoc-gen-c])
  AS_IF([test -z "$mica_onnx_why" && test -z "$PROTOC_C"],
        [mica_onnx_why="no protoc-c (install protobuf-c-compiler)"])
  AS_IF([test -z "$mica_onnx_why"], [
    PKG_CHECK_MODULES([PROTOBUF_C], [libprotobuf-c >= 1.0.0], [],
      [PROTOBUF_C_CFLAGS= ; PROTOBUF_C_LIBS=-lprotobuf-c])
    mica_save_CPPFLAGS=$CPPFLAGS
    mica_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $PROTOBUF_C_CFLAGS"
    LIBS="$PROTOBUF_C_LIBS $LIBS"
    AC_MSG_CHECKING([whether libprotobuf-c links])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <protobuf-c/protobuf-c.h>]],
        [[return protobuf_c_version_number() == 0;]])],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no])
       mica_onnx_why="libprotobuf-c does not link (install libprotobuf-c-dev)"])
    CPPFLAGS=$mica_save_CPPFLAGS
    LIBS=$mica_save_LIBS
  ])
  AS_IF([test -z "$mica_onnx_why"], [mica_onnx=yes],
        [test "x$with_onnx" != xcheck],
        [AC_MSG_ERROR([--with-onnx: $mica_onnx_why])],
        [AC_MSG_WARN([no ONNX importer: $mica_onnx_why])])
], [mica_onnx_why="configured --without-onnx"])

AS_IF([test "x$mica_onnx" = xyes],
      [AC_DEFINE([MICA_HAVE_ONNX], [1],
                 [Define to 1 to build the ONNX importer.])],
      [ONNX_PROTO= ; PROTOBUF_C_CFLAGS= ; PROTOBUF_C_LIBS=])
AC_DEFINE_UNQUOTED([MICA_ONNX_WHY], ["$mica_onnx_why"],
                   [Why the ONNX importer is not built (empty when it is).])
AM_CONDITIONAL([MICA_ONNX], [test "x$mica_onnx" = xyes])
AC_SUBST([ONNX_PROTO])
AC_SUBST([PROTOBUF_C_CFLAGS])
AC_SUBST([PROTOBUF_C_LIBS])
])
