# modules/shuffle/local.mk - the shuffle module and its test.

pkgmodule_LTLIBRARIES += modules/mica_shuffle.la
modules_mica_shuffle_la_SOURCES = modules/shuffle/shuffle.c \
	modules/shuffle/shuffle.h modules/shuffle/shuffle_vec.c
modules_mica_shuffle_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_shuffle_la_LIBADD = modules/common/libmicamodkit_cpu.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_shuffle_la_SOURCES += modules/shuffle/shuffle_cuda.cu
modules_mica_shuffle_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_shuffle
tests_test_mod_shuffle_SOURCES = tests/test_mod_shuffle.c
tests_test_mod_shuffle_LDADD = tests/libmicatest.la libmica.la $(LIBM)
TESTS += tests/test_mod_shuffle
