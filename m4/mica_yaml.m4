# mica_yaml.m4 - find libyaml for the manifest loader.
# serial 1
#
# MICA_CHECK_YAML
#   --with-yaml=DIR looks in DIR/include or DIR/usr/include and in DIR/lib64,
#   DIR/lib, DIR/usr/lib/<multiarch>, DIR/usr/lib (a prefix, or a folder
#   where libyaml-dev's .deb was unpacked with dpkg -x).  Without it,
#   pkg-config's yaml-0.1, then the compiler's default paths.  Where only
#   the runtime library is installed (libyaml-0.so.2, no libyaml.so link),
#   that file is linked by name.  libyaml is required.
#   Substitutes YAML_CFLAGS and YAML_LIBS.

AC_DEFUN([MICA_CHECK_YAML], [
AC_REQUIRE([AC_PROG_CC])
AC_REQUIRE([PKG_PROG_PKG_CONFIG])
AC_ARG_WITH([yaml],
  [AS_HELP_STRING([--with-yaml=DIR],
    [libyaml under DIR (DIR/include or DIR/usr/include, e.g. an unpacked
     libyaml-dev .deb); default: pkg-config, then the default paths])],
  [], [with_yaml=check])
AS_CASE([$with_yaml],
  [no], [AC_MSG_ERROR([libyaml is required: the manifest loader reads YAML])],
  [yes|check],
    [PKG_CHECK_MODULES([YAML], [yaml-0.1], [mica_yaml_found=yes],
                       [mica_yaml_found=no])],
  [mica_yaml_found=dir])

AS_IF([test "x$mica_yaml_found" = xdir], [
  mica_yaml_multiarch=`$CC -print-multiarch 2>/dev/null`
  AS_IF([test -z "$mica_yaml_multiarch"],
        [mica_yaml_multiarch=x86_64-linux-gnu])
  mica_yaml_inc=
  for mica_d in "$with_yaml/include" "$with_yaml/usr/include"; do
    AS_IF([test -f "$mica_d/yaml.h"], [mica_yaml_inc=$mica_d; break])
  done
  AS_IF([test -z "$mica_yaml_inc"],
        [AC_MSG_ERROR([--with-yaml=$with_yaml: no yaml.h in $with_yaml/include or $with_yaml/usr/include])])
  YAML_CFLAGS="-I$mica_yaml_inc"
  YAML_LIBS=
  for mica_d in "$with_yaml/lib64" "$with_yaml/lib" \
                "$with_yaml/lib/$mica_yaml_multiarch" \
                "$with_yaml/usr/lib/$mica_yaml_multiarch" \
                "$with_yaml/usr/lib64" "$with_yaml/usr/lib"; do
    dnl test -e follows links: a dangling libyaml.so does not count.
    AS_IF([test -e "$mica_d/libyaml.so" || test -e "$mica_d/libyaml-0.so.2"],
          [YAML_LIBS="-L$mica_d -Wl,-rpath,$mica_d"; break])
  done
])

AS_IF([test "x$mica_yaml_found" != xyes], [
  mica_save_CPPFLAGS=$CPPFLAGS
  mica_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $YAML_CFLAGS"
  AC_CHECK_HEADER([yaml.h], [],
    [AC_MSG_ERROR([libyaml headers not found: install libyaml-dev or use --with-yaml=DIR])])
  AC_MSG_CHECKING([how to link libyaml])
  mica_yaml_base=$YAML_LIBS
  for mica_l in -lyaml -l:libyaml-0.so.2; do
    LIBS="$mica_yaml_base $mica_l $mica_save_LIBS"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <yaml.h>]],
        [[yaml_parser_t p; return !yaml_parser_initialize(&p);]])],
      [YAML_LIBS="${mica_yaml_base:+$mica_yaml_base }$mica_l"; mica_yaml_found=yes; break])
  done
  AS_IF([test "x$mica_yaml_found" = xyes],
        [AC_MSG_RESULT([$YAML_LIBS])],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([cannot link libyaml: install libyaml-dev or use --with-yaml=DIR])])
  CPPFLAGS=$mica_save_CPPFLAGS
  LIBS=$mica_save_LIBS
])
AC_SUBST([YAML_CFLAGS])
AC_SUBST([YAML_LIBS])
])
