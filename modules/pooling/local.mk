# modules/pooling/local.mk - Pooling (mica_pooling.so) and its test.

pkgmodule_LTLIBRARIES += modules/mica_pooling.la
modules_mica_pooling_la_SOURCES = modules/pooling/pooling.c \
	modules/pooling/pooling.h
modules_mica_pooling_la_CPPFLAGS = $(AM_CPPFLAGS)
modules_mica_pooling_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_pooling_la_LIBADD = modules/common/libmicamodkit_nn.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_ONEDNN
modules_mica_pooling_la_SOURCES += modules/pooling/pool_onednn.c
modules_mica_pooling_la_CPPFLAGS += $(MICA_ONEDNN_CPPFLAGS)
modules_mica_pooling_la_LDFLAGS += $(MICA_ONEDNN_LDFLAGS)
endif

if MICA_CUDA
modules_mica_pooling_la_SOURCES += modules/pooling/pool_cuda.cu
modules_mica_pooling_la_LIBADD += modules/common/libmicamodkit_gpu.la \
	modules/common/libmicamodkit_cuda.la $(MICA_CUDA_MODULE_LIBS)
if MICA_CUDNN
modules_mica_pooling_la_SOURCES += modules/pooling/pool_cudnn.c
modules_mica_pooling_la_CPPFLAGS += $(MICA_CUDNN_CPPFLAGS)
endif
endif

check_PROGRAMS += tests/test_mod_pooling
TESTS += tests/test_mod_pooling
tests_test_mod_pooling_SOURCES = tests/test_mod_pooling.c \
	tests/gen/pool_cases.h
tests_test_mod_pooling_LDADD = tests/libmicatest.la libmica.la $(LIBM)
