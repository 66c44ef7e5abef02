# modules/shape/local.mk - the shape module and its test.

pkgmodule_LTLIBRARIES += modules/mica_shape.la
modules_mica_shape_la_SOURCES = modules/shape/shape.c modules/shape/shape.h
modules_mica_shape_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_shape_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_shape_la_SOURCES += modules/shape/shape_cuda.cu
modules_mica_shape_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_shape
tests_test_mod_shape_SOURCES = tests/test_mod_shape.c
tests_test_mod_shape_LDADD = tests/libmicatest.la libmica.la $(LIBM)
TESTS += tests/test_mod_shape
