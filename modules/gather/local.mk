# modules/gather/local.mk - the gather module and its test.

pkgmodule_LTLIBRARIES += modules/mica_gather.la
modules_mica_gather_la_SOURCES = modules/gather/gather.c modules/gather/gather.h
modules_mica_gather_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_gather_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_gather_la_SOURCES += modules/gather/gather_cuda.cu
modules_mica_gather_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_gather
tests_test_mod_gather_SOURCES = tests/test_mod_gather.c
tests_test_mod_gather_LDADD = tests/libmicatest.la libmica.la $(LIBM)
TESTS += tests/test_mod_gather
