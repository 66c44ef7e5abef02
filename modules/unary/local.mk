# modules/unary/local.mk - the unary module (mica_unary.so) and its test.

pkgmodule_LTLIBRARIES += modules/mica_unary.la
modules_mica_unary_la_SOURCES = modules/unary/unary.c modules/unary/unary.h \
	modules/unary/unary_vec.c
modules_mica_unary_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_unary_la_LIBADD = modules/common/libmicamodkit_cpu.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_unary_la_SOURCES += modules/unary/unary_cuda.cu
modules_mica_unary_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_unary
TESTS += tests/test_mod_unary
tests_test_mod_unary_SOURCES = tests/test_mod_unary.c
tests_test_mod_unary_LDADD = tests/libmicatest.la libmica.la $(LIBM)
