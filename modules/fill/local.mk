# modules/fill/local.mk - the fill module (mica_fill.so) and its test.

pkgmodule_LTLIBRARIES += modules/mica_fill.la
modules_mica_fill_la_SOURCES = modules/fill/fill.c modules/fill/fill.h
modules_mica_fill_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_fill_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_fill_la_SOURCES += modules/fill/fill_cuda.cu
modules_mica_fill_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_fill
TESTS += tests/test_mod_fill
tests_test_mod_fill_SOURCES = tests/test_mod_fill.c
tests_test_mod_fill_LDADD = tests/libmicatest.la libmica.la $(LIBM)
