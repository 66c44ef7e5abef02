# modules/matmul/local.mk - the matmul module and its test.

pkgmodule_LTLIBRARIES += modules/mica_matmul.la
modules_mica_matmul_la_SOURCES = modules/matmul/matmul.c modules/matmul/matmul.h \
	modules/matmul/fused_matmul.c modules/matmul/fused_rules.c
modules_mica_matmul_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_matmul_la_CPPFLAGS = $(AM_CPPFLAGS)
modules_mica_matmul_la_LIBADD = modules/common/libmicamodkit_nn.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_matmul_la_SOURCES += modules/matmul/matmul_cublas.c
modules_mica_matmul_la_LIBADD += modules/common/libmicamodkit_gpu.la \
	modules/common/libmicamodkit_cuda.la $(MICA_CUDA_MODULE_LIBS)
endif
if MICA_ONEDNN
modules_mica_matmul_la_SOURCES += modules/matmul/matmul_onednn.c
modules_mica_matmul_la_CPPFLAGS += $(MICA_ONEDNN_CPPFLAGS)
modules_mica_matmul_la_LDFLAGS += $(MICA_ONEDNN_LDFLAGS)
endif

check_PROGRAMS += tests/test_mod_matmul
tests_test_mod_matmul_SOURCES = tests/test_mod_matmul.c
tests_test_mod_matmul_LDADD = tests/libmicatest.la libmica.la $(LIBM)
TESTS += tests/test_mod_matmul
