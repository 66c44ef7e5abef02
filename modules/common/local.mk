# modules/common/local.mk - the module kit (<mica/kit.h>): the sources of
# libmica_kit.a and its installed headers.
#
# In-tree modules link the convenience libraries (PIC objects, hidden
# symbols: each module .so gets its own copy); third parties link the
# installed static archive libmica_kit.a made of the very same objects
# (`pkg-config --libs mica-module`).  The CUDA half (device copies, scalar
# read-backs) is a convenience library of its own, linked only by the
# modules that use it, with the CUDA runtime.

include_mica_HEADERS += abi/mica/kit.h abi/mica/kit_half.h abi/mica/kit_minifloat.h \
	abi/mica/kit_cuda.h

noinst_LTLIBRARIES += modules/common/libmicamodkit.la
modules_common_libmicamodkit_la_SOURCES = modules/common/kit.c \
	modules/common/kit_fields.c modules/common/kit_layer.c \
	modules/common/kit_lib.c modules/common/kit_bcast.c \
	modules/common/kit_cpu.c modules/common/kit_cpu.h

lib_LTLIBRARIES += modules/common/libmica_kit.la
modules_common_libmica_kit_la_SOURCES =
modules_common_libmica_kit_la_LDFLAGS = -static
modules_common_libmica_kit_la_LIBADD = modules/common/libmicamodkit.la

# The CNN helpers (not installed): the sliding window of Convolution,
# Deconvolution and Pooling; the layer glue of the CNN modules; with
# oneDNN, its engine, streams and errors.
noinst_LTLIBRARIES += modules/common/libmicamodkit_nn.la
modules_common_libmicamodkit_nn_la_SOURCES = modules/common/kit_window.c \
	modules/common/kit_window.h modules/common/kit_nn.c \
	modules/common/kit_nn.h modules/common/kit_nn_cuda.h
modules_common_libmicamodkit_nn_la_CPPFLAGS = $(AM_CPPFLAGS) \
	$(MICA_ONEDNN_CPPFLAGS)
if MICA_ONEDNN
modules_common_libmicamodkit_nn_la_SOURCES += modules/common/kit_onednn.c \
	modules/common/kit_onednn.h
endif

# The CPU helpers (not installed): the element kernels' drivers of the
# `vec` implementations.  (Their threads, GNU OpenMP opened on first
# use, kit_cpu.[ch], are in the kit itself, for oneDNN's runners too.)
noinst_LTLIBRARIES += modules/common/libmicamodkit_cpu.la
modules_common_libmicamodkit_cpu_la_SOURCES = modules/common/kit_vec.c \
	modules/common/kit_vec_math.c modules/common/kit_gather.c \
	modules/common/kit_vec.h

# The vec implementations against their references (corner values,
# broadcasts, formats, threads).
check_PROGRAMS += tests/test_vec
TESTS += tests/test_vec
tests_test_vec_SOURCES = tests/test_vec.c
tests_test_vec_LDADD = tests/libmicatest.la libmica.la $(LIBM)

# The GPU libraries' helpers (not installed): cuBLAS and, when configure
# found it, cuDNN, opened on first use, with a handle per thread and device;
# NVRTC and the CUDA driver, for kernels compiled while an engine is built.
if MICA_CUDA
noinst_LTLIBRARIES += modules/common/libmicamodkit_gpu.la
modules_common_libmicamodkit_gpu_la_SOURCES = modules/common/kit_handles.c \
	modules/common/kit_handles.h modules/common/kit_cublas.c \
	modules/common/kit_cublas.h modules/common/kit_nvrtc.c \
	modules/common/kit_nvrtc.h
modules_common_libmicamodkit_gpu_la_CPPFLAGS = $(AM_CPPFLAGS) \
	$(MICA_CUDNN_CPPFLAGS)
if MICA_CUDNN
modules_common_libmicamodkit_gpu_la_SOURCES += modules/common/kit_cudnn.c \
	modules/common/kit_cudnn.h
endif
endif

if MICA_CUDA
noinst_LTLIBRARIES += modules/common/libmicamodkit_cuda.la
modules_common_libmicamodkit_cuda_la_SOURCES = modules/common/kit_cuda.c
modules_common_libmicamodkit_cuda_la_CPPFLAGS = $(AM_CPPFLAGS) \
	$(MICA_CUDA_CPPFLAGS)
modules_common_libmica_kit_la_LIBADD += modules/common/libmicamodkit_cuda.la
endif

# The kit alone, without libmica (a host table of the test's own), and
# the proof that loading the modules maps no GPU library.
check_PROGRAMS += tests/test_kit tests/test_kit_nogpu
TESTS += tests/test_kit tests/test_kit_nogpu
tests_test_kit_SOURCES = tests/test_kit.c tests/kit_host.c tests/kit_host.h \
	tests/tap.c tests/tap.h
tests_test_kit_LDADD = modules/common/libmicamodkit.la $(LIBM)
tests_test_kit_nogpu_SOURCES = tests/test_kit_nogpu.c tests/kit_host.c \
	tests/kit_host.h tests/tap.c tests/tap.h
# Objects of their own (tap.c is also part of libmicatest.la).
tests_test_kit_CFLAGS = $(AM_CFLAGS)
tests_test_kit_nogpu_CFLAGS = $(AM_CFLAGS)
