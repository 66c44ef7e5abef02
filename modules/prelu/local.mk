# modules/prelu/local.mk - the prelu module (mica_prelu.so) and its test.

pkgmodule_LTLIBRARIES += modules/mica_prelu.la
modules_mica_prelu_la_SOURCES = modules/prelu/prelu.c modules/prelu/prelu.h
modules_mica_prelu_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_prelu_la_LIBADD = modules/common/libmicamodkit_cpu.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_prelu_la_SOURCES += modules/prelu/prelu_cuda.cu
modules_mica_prelu_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_prelu
TESTS += tests/test_mod_prelu
tests_test_mod_prelu_SOURCES = tests/test_mod_prelu.c
tests_test_mod_prelu_LDADD = tests/libmicatest.la libmica.la $(LIBM)
