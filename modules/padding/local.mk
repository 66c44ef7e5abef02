# modules/padding/local.mk - the padding module (mica_padding.so) and its test.

pkgmodule_LTLIBRARIES += modules/mica_padding.la
modules_mica_padding_la_SOURCES = modules/padding/padding.c modules/padding/padding.h
modules_mica_padding_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_padding_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_padding_la_SOURCES += modules/padding/padding_cuda.cu
modules_mica_padding_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_padding
TESTS += tests/test_mod_padding
tests_test_mod_padding_SOURCES = tests/test_mod_padding.c
tests_test_mod_padding_LDADD = tests/libmicatest.la libmica.la $(LIBM)
