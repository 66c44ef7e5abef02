# modules/concat/local.mk - the concat module and its test.

pkgmodule_LTLIBRARIES += modules/mica_concat.la
modules_mica_concat_la_SOURCES = modules/concat/concat.c modules/concat/concat.h
modules_mica_concat_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_concat_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_concat_la_SOURCES += modules/concat/concat_cuda.cu
modules_mica_concat_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_concat
tests_test_mod_concat_SOURCES = tests/test_mod_concat.c
tests_test_mod_concat_LDADD = tests/libmicatest.la libmica.la $(LIBM)
TESTS += tests/test_mod_concat
