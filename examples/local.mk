# examples/local.mk - the out-of-tree module examples (not built by this
# Makefile: they build against the *installed* headers and kit) and their
# end-to-end test, which installs the project into a scratch DESTDIR,
# builds the examples with pkg-config, and runs their manifests with the
# mica command.  examples/bar uses the raw ABI of <mica/module.h> alone;
# examples/swish is written with the module kit (<mica/kit.h>) and has a
# CUDA kernel.

EXTRA_DIST += examples/bar/bar.c examples/bar/Makefile examples/bar/bar.yaml \
	examples/bar/bar_dynamic.yaml examples/app/app.c examples/app/Makefile \
	examples/swish/swish.c examples/swish/swish.h \
	examples/swish/swish_cuda.cu examples/swish/Makefile \
	examples/swish/swish.yaml

TESTS += tests/test_example.sh
# Its `make install` relinks libraries and programs of this build tree
# (libtool's relink of what depends on the uninstalled libmica): it runs
# after every other test, so that none of them meets a file being
# rewritten.
tests/test_example.log: $(filter-out tests/test_example.log,$(TEST_LOGS))
EXTRA_DIST += tests/test_example.sh

# Writes and prints .npy files for shell tests, independently of tools/.
check_PROGRAMS += tests/npy_fixture
tests_npy_fixture_SOURCES = tests/npy_fixture.c
