# modules/scale/local.mk - the scale module (mica_scale.so) and its test.

pkgmodule_LTLIBRARIES += modules/mica_scale.la
modules_mica_scale_la_SOURCES = modules/scale/scale.c modules/scale/scale.h
modules_mica_scale_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_scale_la_LIBADD = modules/common/libmicamodkit_cpu.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_scale_la_SOURCES += modules/scale/scale_cuda.cu
modules_mica_scale_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_scale
TESTS += tests/test_mod_scale
tests_test_mod_scale_SOURCES = tests/test_mod_scale.c
tests_test_mod_scale_LDADD = tests/libmicatest.la libmica.la $(LIBM)
