# examples/local.mk - the out-of-tree module example (not built by this
# Makefile: it builds against the *installed* headers) and its end-to-end
# test, which installs the project into a scratch DESTDIR, builds the
# example with pkg-config, and runs its manifest with the mica command.

EXTRA_DIST += examples/bar/bar.c examples/bar/Makefile examples/bar/bar.yaml \
	examples/bar/bar_dynamic.yaml examples/app/app.c examples/app/Makefile

TESTS += tests/test_example.sh
EXTRA_DIST += tests/test_example.sh

# Writes and prints .npy files for shell tests, independently of tools/.
check_PROGRAMS += tests/npy_fixture
tests_npy_fixture_SOURCES = tests/npy_fixture.c
