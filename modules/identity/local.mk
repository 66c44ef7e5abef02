# modules/identity/local.mk - the identity module and its test.

pkgmodule_LTLIBRARIES += modules/mica_identity.la
modules_mica_identity_la_SOURCES = modules/identity/identity.c \
	modules/identity/identity.h modules/identity/identity_vec.c
modules_mica_identity_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_identity_la_LIBADD = modules/common/libmicamodkit_cpu.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_identity_la_SOURCES += modules/identity/identity_cuda.cu
modules_mica_identity_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_identity
tests_test_mod_identity_SOURCES = tests/test_mod_identity.c
tests_test_mod_identity_LDADD = tests/libmicatest.la libmica.la $(LIBM)
TESTS += tests/test_mod_identity
