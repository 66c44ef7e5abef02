# modules/einsum/local.mk - the einsum module (Einsum) and its test.

pkgmodule_LTLIBRARIES += modules/mica_einsum.la
modules_mica_einsum_la_SOURCES = modules/einsum/einsum.c \
	modules/einsum/einsum_parse.c modules/einsum/einsum.h
modules_mica_einsum_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_einsum_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_einsum_la_SOURCES += modules/einsum/einsum_plan.c \
	modules/einsum/einsum_cublas.c modules/einsum/einsum_cuda.cu
modules_mica_einsum_la_LIBADD += modules/common/libmicamodkit_gpu.la \
	$(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_einsum
TESTS += tests/test_mod_einsum
tests_test_mod_einsum_SOURCES = tests/test_mod_einsum.c
tests_test_mod_einsum_LDADD = $(MICA_TEST_LIBS)
