# modules/normalization/local.mk - the normalization module
# (Normalization: layer, group, instance and RMS normalization) and its
# test.

pkgmodule_LTLIBRARIES += modules/mica_normalization.la
modules_mica_normalization_la_SOURCES = \
	modules/normalization/normalization.c \
	modules/normalization/normalization.h \
	modules/normalization/norm_rules.c
modules_mica_normalization_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_normalization_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_normalization_la_SOURCES += \
	modules/normalization/normalization_cuda.cu
modules_mica_normalization_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_normalization
TESTS += tests/test_mod_normalization
tests_test_mod_normalization_SOURCES = tests/test_mod_normalization.c
tests_test_mod_normalization_LDADD = $(MICA_TEST_LIBS)
