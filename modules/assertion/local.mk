# modules/assertion/local.mk - the assertion module and its test.  No CUDA
# part: the layer runs on the host in phase 1 (see assertion.c).

pkgmodule_LTLIBRARIES += modules/mica_assertion.la
modules_mica_assertion_la_SOURCES = modules/assertion/assertion.c
modules_mica_assertion_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_assertion_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)

check_PROGRAMS += tests/test_mod_assertion
tests_test_mod_assertion_SOURCES = tests/test_mod_assertion.c
tests_test_mod_assertion_LDADD = tests/libmicatest.la libmica.la $(LIBM)
TESTS += tests/test_mod_assertion
