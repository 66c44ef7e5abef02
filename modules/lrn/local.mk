# modules/lrn/local.mk - LRN (mica_lrn.so) and its test.

pkgmodule_LTLIBRARIES += modules/mica_lrn.la
modules_mica_lrn_la_SOURCES = modules/lrn/lrn.c modules/lrn/lrn.h
modules_mica_lrn_la_CPPFLAGS = $(AM_CPPFLAGS)
modules_mica_lrn_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_lrn_la_LIBADD = modules/common/libmicamodkit_nn.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_ONEDNN
modules_mica_lrn_la_SOURCES += modules/lrn/lrn_onednn.c
modules_mica_lrn_la_CPPFLAGS += $(MICA_ONEDNN_CPPFLAGS)
modules_mica_lrn_la_LDFLAGS += $(MICA_ONEDNN_LDFLAGS)
endif

if MICA_CUDA
modules_mica_lrn_la_SOURCES += modules/lrn/lrn_cuda.cu
modules_mica_lrn_la_LIBADD += modules/common/libmicamodkit_gpu.la \
	modules/common/libmicamodkit_cuda.la $(MICA_CUDA_MODULE_LIBS)
if MICA_CUDNN
modules_mica_lrn_la_SOURCES += modules/lrn/lrn_cudnn.c
modules_mica_lrn_la_CPPFLAGS += $(MICA_CUDNN_CPPFLAGS)
endif
endif

check_PROGRAMS += tests/test_mod_lrn
TESTS += tests/test_mod_lrn
tests_test_mod_lrn_SOURCES = tests/test_mod_lrn.c tests/gen/lrn_cases.h
tests_test_mod_lrn_LDADD = tests/libmicatest.la libmica.la $(LIBM)
