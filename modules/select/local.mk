# modules/select/local.mk - the select module and its test.

pkgmodule_LTLIBRARIES += modules/mica_select.la
modules_mica_select_la_SOURCES = modules/select/select.c modules/select/select.h
modules_mica_select_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_select_la_LIBADD = modules/common/libmicamodkit_cpu.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_select_la_SOURCES += modules/select/select_cuda.cu
modules_mica_select_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_select
tests_test_mod_select_SOURCES = tests/test_mod_select.c
tests_test_mod_select_LDADD = tests/libmicatest.la libmica.la $(LIBM)
TESTS += tests/test_mod_select
