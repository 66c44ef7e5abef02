# modules/resize/local.mk - the resize module (mica_resize.so) and its test.

pkgmodule_LTLIBRARIES += modules/mica_resize.la
modules_mica_resize_la_SOURCES = modules/resize/resize.c modules/resize/resize.h \
	modules/resize/resize_vec.c
modules_mica_resize_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_resize_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_resize_la_SOURCES += modules/resize/resize_cuda.cu
modules_mica_resize_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_resize
TESTS += tests/test_mod_resize
tests_test_mod_resize_SOURCES = tests/test_mod_resize.c tests/resize_fixtures.h
tests_test_mod_resize_LDADD = tests/libmicatest.la libmica.la $(LIBM)
EXTRA_DIST += tests/gen/gen_resize.py
