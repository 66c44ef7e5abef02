# modules/lrn/local.mk - LRN (mica_lrn.so) and its test.

pkgmodule_LTLIBRARIES += modules/mica_lrn.la
modules_mica_lrn_la_SOURCES = modules/lrn/lrn.c modules/lrn/lrn.h
modules_mica_lrn_la_CPPFLAGS = $(AM_CPPFLAGS) -DMICA_KIT_CUDA=0
modules_mica_lrn_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_lrn_la_LIBADD = modules/common/libmicamodkit_nn.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_ONEDNN
modules_mica_lrn_la_SOURCES += modules/lrn/lrn_onednn.c
modules_mica_lrn_la_CPPFLAGS += $(MICA_ONEDNN_CPPFLAGS)
modules_mica_lrn_la_LDFLAGS += $(MICA_ONEDNN_LDFLAGS)
endif

check_PROGRAMS += tests/test_mod_lrn
TESTS += tests/test_mod_lrn
tests_test_mod_lrn_SOURCES = tests/test_mod_lrn.c tests/gen/lrn_cases.h
tests_test_mod_lrn_LDADD = tests/libmicatest.la libmica.la $(LIBM)
