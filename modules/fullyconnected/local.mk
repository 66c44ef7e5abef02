# modules/fullyconnected/local.mk - FullyConnected (mica_fullyconnected.so)
# and its test.

pkgmodule_LTLIBRARIES += modules/mica_fullyconnected.la
modules_mica_fullyconnected_la_SOURCES = modules/fullyconnected/fc.c \
	modules/fullyconnected/fc.h
modules_mica_fullyconnected_la_CPPFLAGS = $(AM_CPPFLAGS)
modules_mica_fullyconnected_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_fullyconnected_la_LIBADD = \
	modules/common/libmicamodkit_nn.la modules/common/libmicamodkit.la \
	$(LIBM)
if MICA_ONEDNN
modules_mica_fullyconnected_la_SOURCES += modules/fullyconnected/fc_onednn.c
modules_mica_fullyconnected_la_CPPFLAGS += $(MICA_ONEDNN_CPPFLAGS)
modules_mica_fullyconnected_la_LDFLAGS += $(MICA_ONEDNN_LDFLAGS)
endif

if MICA_CUDA
modules_mica_fullyconnected_la_SOURCES += modules/fullyconnected/fc_cuda.cu \
	modules/fullyconnected/fc_cublas.c
modules_mica_fullyconnected_la_LIBADD += modules/common/libmicamodkit_gpu.la \
	modules/common/libmicamodkit_cuda.la $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_fullyconnected
TESTS += tests/test_mod_fullyconnected
tests_test_mod_fullyconnected_SOURCES = tests/test_mod_fullyconnected.c \
	tests/gen/fc_cases.h
tests_test_mod_fullyconnected_LDADD = tests/libmicatest.la libmica.la $(LIBM)
