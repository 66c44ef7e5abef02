# modules/slice/local.mk - the slice module and its test.

pkgmodule_LTLIBRARIES += modules/mica_slice.la
modules_mica_slice_la_SOURCES = modules/slice/slice.c modules/slice/slice.h
modules_mica_slice_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_slice_la_LIBADD = modules/common/libmicamodkit_cpu.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_slice_la_SOURCES += modules/slice/slice_cuda.cu
modules_mica_slice_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_slice
tests_test_mod_slice_SOURCES = tests/test_mod_slice.c
tests_test_mod_slice_LDADD = tests/libmicatest.la libmica.la $(LIBM)
TESTS += tests/test_mod_slice
