# mica_sanitizers.m4 - building mica with the compiler's sanitizers.
# serial 1
#
# MICA_CHECK_SANITIZERS
#   --enable-sanitizers=LIST (comma-separated: address, undefined, leak,
#   thread; "yes" means address,undefined) compiles every object with
#   -fsanitize=LIST -fno-omit-frame-pointer -g, with
#   -fno-sanitize-recover=all so that any finding fails the program (and
#   so its test), and links with -fsanitize=LIST (added to LDFLAGS, since
#   many targets set their own link flags).  thread cannot go with
#   address or leak.  Substitutes MICA_SAN_CFLAGS (part of AM_CFLAGS) and
#   defines MICA_SANITIZERS in config.h when enabled.  CUDA objects are
#   not instrumented: use it with --without-cuda.
#
#   --enable-fuzzing (clang) also builds the libFuzzer harnesses of fuzz/
#   (`make fuzz` runs them): every object is compiled with
#   -fsanitize=fuzzer-no-link, and the sanitizers default to
#   address,undefined.  Substitutes MICA_FUZZ_LDFLAGS (-fsanitize=fuzzer)
#   and sets the conditional MICA_FUZZ.

AC_DEFUN([MICA_CHECK_SANITIZERS], [
AC_REQUIRE([AC_PROG_CC])
AC_ARG_ENABLE([sanitizers],
  [AS_HELP_STRING([--enable-sanitizers=LIST],
                  [build with the sanitizers of LIST: address, undefined,
                   leak, thread (comma-separated; yes: address,undefined)
                   (default: no)])],
  [], [enable_sanitizers=no])
AC_ARG_ENABLE([fuzzing],
  [AS_HELP_STRING([--enable-fuzzing],
                  [build the libFuzzer harnesses of fuzz/ (clang; implies
                   --enable-sanitizers=address,undefined unless given)
                   (default: no)])],
  [], [enable_fuzzing=no])
AS_CASE([$enable_fuzzing],
  [yes], [AS_IF([test "x$enable_sanitizers" = xno],
                [enable_sanitizers=address,undefined])],
  [no], [],
  [AC_MSG_ERROR([bad value '$enable_fuzzing' for --enable-fuzzing])])
MICA_SAN_CFLAGS=
MICA_FUZZ_LDFLAGS=
AS_CASE([$enable_sanitizers],
  [no], [],
  [yes], [enable_sanitizers=address,undefined])
AS_IF([test "x$enable_sanitizers" != xno], [
  mica_san_thread=no
  mica_san_memory=no
  for mica_san in `echo "$enable_sanitizers" | tr ',' ' '`; do
    AS_CASE([$mica_san],
      [thread], [mica_san_thread=yes],
      [address|leak], [mica_san_memory=yes],
      [undefined], [],
      [AC_MSG_ERROR([--enable-sanitizers: unknown sanitizer '$mica_san' (address, undefined, leak, thread)])])
  done
  AS_IF([test $mica_san_thread = yes && test $mica_san_memory = yes],
        [AC_MSG_ERROR([--enable-sanitizers: thread cannot go with address or leak])])
  MICA_SAN_CFLAGS="-fsanitize=$enable_sanitizers -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
  mica_san_save_CFLAGS=$CFLAGS
  mica_san_save_LDFLAGS=$LDFLAGS
  CFLAGS="$CFLAGS $MICA_SAN_CFLAGS"
  LDFLAGS="$LDFLAGS -fsanitize=$enable_sanitizers"
  AC_MSG_CHECKING([whether $CC builds with -fsanitize=$enable_sanitizers])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([$CC cannot build with -fsanitize=$enable_sanitizers])])
  CFLAGS=$mica_san_save_CFLAGS
  LDFLAGS="$mica_san_save_LDFLAGS -fsanitize=$enable_sanitizers"
  AC_DEFINE([MICA_SANITIZERS], [1],
            [Define when the build is instrumented by sanitizers.])
])
AS_IF([test "x$enable_fuzzing" = xyes], [
  mica_san_save_CFLAGS=$CFLAGS
  mica_san_save_LDFLAGS=$LDFLAGS
  CFLAGS="$CFLAGS -fsanitize=fuzzer"
  LDFLAGS="$LDFLAGS -fsanitize=fuzzer"
  AC_MSG_CHECKING([whether $CC links libFuzzer harnesses (-fsanitize=fuzzer)])
  AC_LINK_IFELSE([AC_LANG_SOURCE([[
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{ (void)d; (void)n; return 0; }]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([--enable-fuzzing needs a compiler with libFuzzer: CC=clang (and, on Debian, libclang-rt-dev)])])
  CFLAGS=$mica_san_save_CFLAGS
  LDFLAGS=$mica_san_save_LDFLAGS
  MICA_SAN_CFLAGS="$MICA_SAN_CFLAGS -fsanitize=fuzzer-no-link"
  MICA_FUZZ_LDFLAGS=-fsanitize=fuzzer
])
AM_CONDITIONAL([MICA_FUZZ], [test "x$enable_fuzzing" = xyes])
AC_SUBST([MICA_SAN_CFLAGS])
AC_SUBST([MICA_FUZZ_LDFLAGS])
])
