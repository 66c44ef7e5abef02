# modules/constant/local.mk - the constant module and its test.

pkgmodule_LTLIBRARIES += modules/mica_constant.la
modules_mica_constant_la_SOURCES = modules/constant/constant.c modules/constant/constant.h
modules_mica_constant_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_constant_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_constant_la_SOURCES += modules/constant/constant_cuda.cu
modules_mica_constant_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_constant
tests_test_mod_constant_SOURCES = tests/test_mod_constant.c
tests_test_mod_constant_LDADD = tests/libmicatest.la libmica.la $(LIBM)
TESTS += tests/test_mod_constant
