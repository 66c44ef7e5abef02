# modules/elementwise/local.mk - the elementwise module (mica_elementwise.so) and its test.

pkgmodule_LTLIBRARIES += modules/mica_elementwise.la
modules_mica_elementwise_la_SOURCES = modules/elementwise/elementwise.c \
	modules/elementwise/elementwise.h modules/elementwise/elementwise_vec.c
modules_mica_elementwise_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_elementwise_la_CPPFLAGS = $(AM_CPPFLAGS)
modules_mica_elementwise_la_LIBADD = modules/common/libmicamodkit_cpu.la \
	modules/common/libmicamodkit_nn.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_ONEDNN
modules_mica_elementwise_la_SOURCES += modules/elementwise/elementwise_onednn.c
modules_mica_elementwise_la_CPPFLAGS += $(MICA_ONEDNN_CPPFLAGS)
modules_mica_elementwise_la_LDFLAGS += $(MICA_ONEDNN_LDFLAGS)
endif
if MICA_CUDA
modules_mica_elementwise_la_SOURCES += modules/elementwise/elementwise_cuda.cu
modules_mica_elementwise_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_elementwise
TESTS += tests/test_mod_elementwise
tests_test_mod_elementwise_SOURCES = tests/test_mod_elementwise.c
tests_test_mod_elementwise_LDADD = tests/libmicatest.la libmica.la $(LIBM)
