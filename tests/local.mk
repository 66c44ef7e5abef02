# tests/local.mk - the test support library (TAP producer, layer harness).
# Test programs are added by the parts they test, as:
#
#   check_PROGRAMS += tests/test_foo
#   TESTS += tests/test_foo
#   tests_test_foo_SOURCES = tests/test_foo.c
#   tests_test_foo_LDADD = $(MICA_TEST_LIBS)

check_LTLIBRARIES += tests/libmicatest.la
tests_libmicatest_la_SOURCES = tests/tap.c tests/tap.h \
	tests/harness.c tests/harness.h tests/cnn_cases.c tests/cnn_cases.h \
	tests/gen/cases.h
tests_libmicatest_la_LIBADD = modules/common/libmicamodkit.la libmica.la $(LIBM)

# What a test program links: the TAP helper and harness, and libmica.
MICA_TEST_LIBS = tests/libmicatest.la libmica.la $(LIBM)
EXTRA_DIST += tests/tap.sh tests/gen/cnn_gen.py

# NumPy-generated expected values of the module tests (tests/gen/layers.py
# writes the *_cases.h headers; the tests need no Python).
EXTRA_DIST += tests/gen/layers.py tests/gen/gen_case.h tests/gen/gen_th.h \
	tests/gen/softmax_cases.h tests/gen/ragged_cases.h \
	tests/gen/topk_cases.h tests/gen/scatter_cases.h \
	tests/gen/einsum_cases.h
