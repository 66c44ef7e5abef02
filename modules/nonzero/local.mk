# modules/nonzero/local.mk - the nonzero module and its test.

pkgmodule_LTLIBRARIES += modules/mica_nonzero.la
modules_mica_nonzero_la_SOURCES = modules/nonzero/nonzero.c modules/nonzero/nonzero.h
modules_mica_nonzero_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_nonzero_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_nonzero_la_SOURCES += modules/nonzero/nonzero_cuda.cu
modules_mica_nonzero_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_nonzero
tests_test_mod_nonzero_SOURCES = tests/test_mod_nonzero.c
tests_test_mod_nonzero_LDADD = tests/libmicatest.la libmica.la $(LIBM)
TESTS += tests/test_mod_nonzero
