# mica_cuda.m4 - the CUDA toolkit: nvcc, cudart, cuBLAS, optionally cuDNN.
# serial 5
#
# MICA_CHECK_CUDA
#   --with-cuda[=DIR]     DIR is the toolkit's root (DIR/bin/nvcc,
#                         DIR/include, DIR/lib64).  Default: detect
#                         $NVCC, /usr/local/cuda, or nvcc on PATH, and build
#                         CPU-only if none works.  --without-cuda: CPU-only.
#   --with-cuda-arch=LIST comma-separated GPU architectures (sm_90, 90,
#                         sm_90a); SASS for each, PTX for the last.
#                         Default sm_90.
#   --with-cudnn[=DIR]    cuDNN (optional): default, look beside the toolkit
#                         and in the default paths.
#
#   Defines MICA_HAVE_CUDA, MICA_CUDA_ARCH_LAST (and MICA_HAVE_CUDNN) in
#   config.h; conditionals
#   MICA_CUDA and MICA_CUDNN; substitutes NVCC, MICA_CUDA_CPPFLAGS,
#   MICA_CUDA_LIBS (cudart, cuBLAS, an rpath so uninstalled programs run,
#   and -lstdc++ where nvcc's objects need it), MICA_CUDA_MODULE_LIBS (what
#   a module's CUDA code links: the static CUDA runtime, -lstdc++ and the
#   system libraries it needs where they are not in libc, and an rpath to
#   the toolkit's libraries, which the kit's loader opens on first use),
#   MICA_CUDNN_CPPFLAGS, MICA_CUDNN_LIBS, MICA_CUDNN_MODULE_LIBS (a
#   module's run path to cuDNN's folder when --with-cudnn=DIR names one:
#   modules open cuDNN through the kit's loader, never link it),
#   MICA_CUDA_ARCHFLAGS,
#   MICA_NVCCFLAGS, MICA_CUDA_DIR, and for mica-module.pc
#   MICA_KIT_NVCCFLAGS and MICA_KIT_CUDA_CFLAGS (empty without CUDA),
#   MICA_CUDART_LIBS (cudart with its rpath, and -lstdc++ where nvcc's
#   objects need it: the CUDA device, core/cuda/cond.cu).
#   Requires MICA_WARNINGS and MICA_VISIBILITY first.

AC_DEFUN([_MICA_CUDA_ARCHFLAGS], [
mica_cuda_arch_ok=yes
MICA_CUDA_ARCHFLAGS=
mica_cuda_last=
mica_save_IFS=$IFS
IFS=,
for mica_a in $with_cuda_arch; do
  IFS=$mica_save_IFS
  mica_a=`echo "$mica_a" | sed -e 's/^ *//' -e 's/ *$//' -e 's/^sm_//' -e 's/^compute_//'`
  AS_CASE([$mica_a],
    [@<:@1-9@:>@@<:@0-9@:>@|@<:@1-9@:>@@<:@0-9@:>@@<:@0-9af@:>@|@<:@1-9@:>@@<:@0-9@:>@@<:@0-9@:>@@<:@af@:>@], [],
    [mica_cuda_arch_ok=no])
  MICA_CUDA_ARCHFLAGS="$MICA_CUDA_ARCHFLAGS -gencode arch=compute_$mica_a,code=sm_$mica_a"
  mica_cuda_last=$mica_a
done
IFS=$mica_save_IFS
AS_IF([test -z "$mica_cuda_last"], [mica_cuda_arch_ok=no])
AS_IF([test "x$mica_cuda_arch_ok" != xyes],
  [AC_MSG_ERROR([bad --with-cuda-arch=$with_cuda_arch: expected a comma-separated list such as sm_90 or sm_80,sm_90])])
MICA_CUDA_ARCHFLAGS="${MICA_CUDA_ARCHFLAGS# } -gencode arch=compute_$mica_cuda_last,code=compute_$mica_cuda_last"
])

dnl _MICA_CUDA_GIVE_UP(REASON): an error if CUDA was asked for, else a
dnl notice and a CPU-only build.
AC_DEFUN([_MICA_CUDA_GIVE_UP], [
AS_IF([test "x$mica_cuda_asked" = xyes],
  [AC_MSG_ERROR([--with-cuda=$with_cuda: $1])],
  [AC_MSG_NOTICE([CUDA disabled: $1])
   mica_cuda=no])
])

AC_DEFUN([MICA_CHECK_CUDA], [
AC_REQUIRE([AC_PROG_CC])
AC_ARG_VAR([NVCC], [CUDA compiler (default: DIR/bin/nvcc of --with-cuda)])
AC_ARG_VAR([NVCCFLAGS], [extra flags for nvcc])
AC_ARG_WITH([cuda],
  [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
    [CUDA device and kernels, toolkit in DIR (default: detect
     /usr/local/cuda or nvcc on PATH; --without-cuda builds CPU-only)])],
  [], [with_cuda=check])
AC_ARG_WITH([cuda-arch],
  [AS_HELP_STRING([--with-cuda-arch=LIST],
    [comma-separated GPU architectures, SASS for each and PTX for the
     last (default: sm_90)])],
  [], [with_cuda_arch=sm_90])
AC_ARG_WITH([cudnn],
  [AS_HELP_STRING([--with-cudnn@<:@=DIR@:>@],
    [cuDNN for layers that use it (default: detect; optional)])],
  [], [with_cudnn=check])

mica_cuda=yes
mica_cuda_asked=yes
MICA_CUDA_DIR=
AS_CASE([$with_cuda],
  [no], [mica_cuda=no],
  [check], [mica_cuda_asked=no],
  [yes], [],
  [MICA_CUDA_DIR=$with_cuda])

dnl Find the toolkit's root and nvcc.
AS_IF([test "x$mica_cuda" = xyes], [
  AS_IF([test -n "$MICA_CUDA_DIR"], [
      AS_IF([test -z "$NVCC"], [NVCC="$MICA_CUDA_DIR/bin/nvcc"])
    ], [test -n "$NVCC"], [
      dnl NVCC given: the toolkit is the folder above its bin/.
      set dummy $NVCC
      mica_nvcc_path=`command -v "$[2]" 2>/dev/null`
      AS_IF([test -n "$mica_nvcc_path"],
            [MICA_CUDA_DIR=`dirname "$mica_nvcc_path"`
             MICA_CUDA_DIR=`dirname "$MICA_CUDA_DIR"`])
    ], [test -x /usr/local/cuda/bin/nvcc], [
      MICA_CUDA_DIR=/usr/local/cuda
      NVCC=/usr/local/cuda/bin/nvcc
    ], [
      AC_PATH_PROG([NVCC], [nvcc])
      AS_IF([test -n "$NVCC"],
            [MICA_CUDA_DIR=`dirname "$NVCC"`
             MICA_CUDA_DIR=`dirname "$MICA_CUDA_DIR"`])
    ])
  AS_IF([test -z "$NVCC" || test -z "$MICA_CUDA_DIR"],
        [_MICA_CUDA_GIVE_UP([nvcc not found])])
])
AS_IF([test "x$mica_cuda" = xyes], [
  set dummy $NVCC
  AS_IF([command -v "$[2]" >/dev/null 2>&1], [],
        [_MICA_CUDA_GIVE_UP([no nvcc at $[2]])])
])

dnl nvcc compiles a kernel for the requested architectures.
AS_IF([test "x$mica_cuda" = xyes], [
  _MICA_CUDA_ARCHFLAGS
  AC_MSG_CHECKING([whether $NVCC compiles for $with_cuda_arch])
  cat > conftest.cu <<_MICA_EOF
__global__ static void mica_k(float *p) { p@<:@threadIdx.x@:>@ = 1.0f; }
extern "C" int mica_launch(float *p)
{
    mica_k<<<1, 1>>>(p);
    return (int)cudaGetLastError();
}
_MICA_EOF
  AS_IF([$NVCC $MICA_CUDA_ARCHFLAGS -Xcompiler -fPIC -c conftest.cu -o mica_conftest_cu.o >&AS_MESSAGE_LOG_FD 2>&1],
        [AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no])
         _MICA_CUDA_GIVE_UP([$NVCC cannot compile for $with_cuda_arch (see config.log)])])
])

dnl Headers and libraries.
AS_IF([test "x$mica_cuda" = xyes], [
  MICA_CUDA_CPPFLAGS="-I$MICA_CUDA_DIR/include"
  mica_cuda_libdir=
  for mica_d in "$MICA_CUDA_DIR/lib64" "$MICA_CUDA_DIR/lib" \
                "$MICA_CUDA_DIR/targets/x86_64-linux/lib"; do
    AS_IF([test -e "$mica_d/libcudart.so"], [mica_cuda_libdir=$mica_d; break])
  done
  AS_IF([test -z "$mica_cuda_libdir"],
        [_MICA_CUDA_GIVE_UP([no libcudart.so under $MICA_CUDA_DIR])],
        [test -e "$mica_cuda_libdir/libcudart_static.a"], [],
        [_MICA_CUDA_GIVE_UP([no libcudart_static.a in $mica_cuda_libdir])])
])
AS_IF([test "x$mica_cuda" = xyes], [
  mica_save_CPPFLAGS=$CPPFLAGS
  mica_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $MICA_CUDA_CPPFLAGS"
  mica_cuda_base="-L$mica_cuda_libdir -Wl,-rpath,$mica_cuda_libdir"
  AC_MSG_CHECKING([for cudart and cuBLAS])
  LIBS="$mica_cuda_base -lcudart -lcublas $LIBS"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cuda_runtime_api.h>
#include <cublas_v2.h>]],
      [[int n; cublasHandle_t h;
        cudaGetDeviceCount(&n); return (int)cublasCreate(&h);]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     _MICA_CUDA_GIVE_UP([cannot link cudart and cuBLAS from $mica_cuda_libdir (see config.log)])])
  CPPFLAGS=$mica_save_CPPFLAGS
  LIBS=$mica_save_LIBS
])

dnl Does a shared object of nvcc's objects, linked by $CC, need -lstdc++
dnl (with the dynamic CUDA runtime, for libmica)?  And what does one need
dnl with the static runtime (for modules): -lstdc++, and -ldl -lpthread
dnl -lrt where they are not in libc?
AS_IF([test "x$mica_cuda" = xyes], [
  AC_MSG_CHECKING([whether nvcc objects need -lstdc++ when linked by $CC])
  mica_cuda_stdcxx=unknown
  for mica_l in "" -lstdc++; do
    AS_IF([$CC -shared -Wl,-z,defs -o mica_conftest.so mica_conftest_cu.o $mica_cuda_base -lcudart $mica_l >&AS_MESSAGE_LOG_FD 2>&1],
          [mica_cuda_stdcxx=$mica_l; break])
  done
  AS_CASE([$mica_cuda_stdcxx],
    [unknown], [AC_MSG_RESULT([cannot tell]); mica_cuda_stdcxx=-lstdc++],
    [""], [AC_MSG_RESULT([no])],
    [AC_MSG_RESULT([yes])])
  AC_MSG_CHECKING([what a module needs with the static CUDA runtime])
  mica_cuda_static=unknown
  for mica_l in "" -lstdc++ "-ldl -lpthread -lrt" "-lstdc++ -ldl -lpthread -lrt"; do
    AS_IF([$CC -shared -Wl,-z,defs -o mica_conftest.so mica_conftest_cu.o -L$mica_cuda_libdir -lcudart_static $mica_l >&AS_MESSAGE_LOG_FD 2>&1],
          [mica_cuda_static=$mica_l; break])
  done
  rm -f mica_conftest.so
  AS_IF([test "x$mica_cuda_static" = xunknown],
        [AC_MSG_RESULT([cannot tell])
         mica_cuda_static="-lstdc++ -ldl -lpthread -lrt"],
        [AC_MSG_RESULT([-lcudart_static${mica_cuda_static:+ $mica_cuda_static}])])
  MICA_CUDA_LIBS="$mica_cuda_base -lcudart -lcublas${mica_cuda_stdcxx:+ $mica_cuda_stdcxx}"
  MICA_CUDA_MODULE_LIBS="$mica_cuda_base -lcudart_static${mica_cuda_static:+ $mica_cuda_static}"
  dnl What mica-module.pc tells third parties.
  MICA_KIT_NVCCFLAGS="$MICA_CUDA_ARCHFLAGS -O3 -std=c++17 -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -DMICA_KIT_CUDA=1 "'-I${includedir}'
  MICA_KIT_CUDA_CFLAGS="-DMICA_KIT_CUDA=1 $MICA_CUDA_CPPFLAGS"
  MICA_CUDART_LIBS="$mica_cuda_base -lcudart${mica_cuda_stdcxx:+ $mica_cuda_stdcxx}"
  MICA_NVCCFLAGS="$MICA_CUDA_ARCHFLAGS -O3 -std=c++17 -Xcompiler -fPIC"
  AS_IF([test -n "$MICA_VISIBILITY_CFLAGS"],
        [MICA_NVCCFLAGS="$MICA_NVCCFLAGS -Xcompiler $MICA_VISIBILITY_CFLAGS"])
  MICA_NVCCFLAGS="$MICA_NVCCFLAGS $MICA_WARN_NVCCFLAGS -DHAVE_CONFIG_H"
  MICA_NVCCFLAGS="$MICA_NVCCFLAGS "'-I$(top_builddir) -I$(top_srcdir)/abi -I$(top_srcdir)/modules/common'
  AC_DEFINE([MICA_HAVE_CUDA], [1], [Define to 1 to build the CUDA device and kernels.])
  AC_DEFINE_UNQUOTED([MICA_CUDA_ARCH_LAST], ["$mica_cuda_last"],
    [The last GPU architecture of --with-cuda-arch, without sm_ (what
     kernels generated at run time target where no device says).])
])
rm -f conftest.cu mica_conftest_cu.o

dnl cuDNN: optional.
mica_cudnn=no
AS_IF([test "x$mica_cuda" = xyes && test "x$with_cudnn" != xno], [
  mica_save_CPPFLAGS=$CPPFLAGS
  mica_save_LIBS=$LIBS
  AS_CASE([$with_cudnn],
    [yes|check], [MICA_CUDNN_CPPFLAGS=; mica_cudnn_base=],
    [MICA_CUDNN_CPPFLAGS="-I$with_cudnn/include"
     mica_cudnn_base=
     for mica_d in "$with_cudnn/lib64" "$with_cudnn/lib"; do
       AS_IF([test -d "$mica_d"],
             [mica_cudnn_base="-L$mica_d -Wl,-rpath,$mica_d"; break])
     done])
  CPPFLAGS="$CPPFLAGS $MICA_CUDA_CPPFLAGS $MICA_CUDNN_CPPFLAGS"
  LIBS="$mica_cudnn_base $MICA_CUDA_LIBS -lcudnn $LIBS"
  AC_MSG_CHECKING([for cuDNN])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cudnn.h>]],
      [[cudnnHandle_t h; return (int)cudnnCreate(&h);]])],
    [mica_cudnn=yes], [])
  AC_MSG_RESULT([$mica_cudnn])
  CPPFLAGS=$mica_save_CPPFLAGS
  LIBS=$mica_save_LIBS
  AS_IF([test "x$mica_cudnn" = xyes], [
      MICA_CUDNN_LIBS="${mica_cudnn_base:+$mica_cudnn_base }-lcudnn"
      dnl Modules open cuDNN at run time (never linked): only its folder.
      MICA_CUDNN_MODULE_LIBS=$mica_cudnn_base
      AC_DEFINE([MICA_HAVE_CUDNN], [1], [Define to 1 if cuDNN is available.])
    ], [test "x$with_cudnn" != xcheck], [
      AC_MSG_ERROR([--with-cudnn=$with_cudnn: cannot link cuDNN (see config.log)])
    ])
])

AS_IF([test "x$mica_cuda" = xyes], [], [NVCC=])
AM_CONDITIONAL([MICA_CUDA], [test "x$mica_cuda" = xyes])
AM_CONDITIONAL([MICA_CUDNN], [test "x$mica_cudnn" = xyes])
AC_SUBST([MICA_CUDA_DIR])
AC_SUBST([MICA_CUDA_ARCHFLAGS])
AC_SUBST([MICA_CUDA_CPPFLAGS])
AC_SUBST([MICA_CUDA_LIBS])
AC_SUBST([MICA_CUDA_MODULE_LIBS])
AC_SUBST([MICA_KIT_NVCCFLAGS])
AC_SUBST([MICA_KIT_CUDA_CFLAGS])
AC_SUBST([MICA_CUDART_LIBS])
AC_SUBST([MICA_CUDNN_CPPFLAGS])
AC_SUBST([MICA_CUDNN_LIBS])
AC_SUBST([MICA_CUDNN_MODULE_LIBS])
AC_SUBST([MICA_NVCCFLAGS])
])
