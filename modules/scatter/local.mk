# modules/scatter/local.mk - the scatter module (Scatter) and its test.

pkgmodule_LTLIBRARIES += modules/mica_scatter.la
modules_mica_scatter_la_SOURCES = modules/scatter/scatter.c \
	modules/scatter/scatter.h
modules_mica_scatter_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_scatter_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_scatter_la_SOURCES += modules/scatter/scatter_cuda.cu
modules_mica_scatter_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_scatter
TESTS += tests/test_mod_scatter
tests_test_mod_scatter_SOURCES = tests/test_mod_scatter.c
tests_test_mod_scatter_LDADD = $(MICA_TEST_LIBS)
