# modules/topk/local.mk - the topk module (TopK) and its test.

pkgmodule_LTLIBRARIES += modules/mica_topk.la
modules_mica_topk_la_SOURCES = modules/topk/topk.c modules/topk/topk.h
modules_mica_topk_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_topk_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_topk_la_SOURCES += modules/topk/topk_cuda.cu
modules_mica_topk_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_topk
TESTS += tests/test_mod_topk
tests_test_mod_topk_SOURCES = tests/test_mod_topk.c
tests_test_mod_topk_LDADD = $(MICA_TEST_LIBS)
