# modules/reduce/local.mk - the reduce module and its test.

pkgmodule_LTLIBRARIES += modules/mica_reduce.la
modules_mica_reduce_la_SOURCES = modules/reduce/reduce.c modules/reduce/reduce.h \
	modules/reduce/reduce_vec.c
modules_mica_reduce_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_reduce_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_reduce_la_SOURCES += modules/reduce/reduce_cuda.cu
modules_mica_reduce_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_reduce
tests_test_mod_reduce_SOURCES = tests/test_mod_reduce.c
tests_test_mod_reduce_LDADD = tests/libmicatest.la libmica.la $(LIBM)
TESTS += tests/test_mod_reduce
