# modules/quantize/local.mk - the quantize module (mica_quantize.so) and its test.

pkgmodule_LTLIBRARIES += modules/mica_quantize.la
modules_mica_quantize_la_SOURCES = modules/quantize/quantize.c modules/quantize/quantize.h
modules_mica_quantize_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_quantize_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_quantize_la_SOURCES += modules/quantize/quantize_cuda.cu
modules_mica_quantize_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_quantize
TESTS += tests/test_mod_quantize
tests_test_mod_quantize_SOURCES = tests/test_mod_quantize.c
tests_test_mod_quantize_LDADD = tests/libmicatest.la libmica.la $(LIBM)
