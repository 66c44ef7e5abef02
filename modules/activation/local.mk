# modules/activation/local.mk - the activation module (mica_activation.so) and its test.

pkgmodule_LTLIBRARIES += modules/mica_activation.la
modules_mica_activation_la_SOURCES = modules/activation/activation.c \
	modules/activation/activation.h modules/activation/activation_vec.c \
	modules/activation/gelu_rules.c
modules_mica_activation_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_activation_la_LIBADD = modules/common/libmicamodkit_cpu.la \
	modules/common/libmicamodkit_nn.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_activation_la_SOURCES += modules/activation/activation_cuda.cu
modules_mica_activation_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_activation
TESTS += tests/test_mod_activation
tests_test_mod_activation_SOURCES = tests/test_mod_activation.c
tests_test_mod_activation_LDADD = tests/libmicatest.la libmica.la $(LIBM)
