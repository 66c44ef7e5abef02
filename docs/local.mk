# docs/local.mk - the manifest reference, the command's reference and
# the graph passes', installed in $(docdir), and the check that the
# manifest reference documents every layer type the in-tree modules
# register (and docs/passes.md every pass).

dist_doc_DATA += docs/manifest.md docs/mica.md docs/triton.md docs/limits.md \
	docs/passes.md

check_PROGRAMS += tests/test_docs
TESTS += tests/test_docs
# The figures README.md and docs/ quote are the code's (issue 26).
TESTS += tests/test_figures.sh
EXTRA_DIST += tests/test_figures.sh
tests_test_docs_SOURCES = tests/test_docs.c
tests_test_docs_LDADD = $(MICA_TEST_LIBS)

# `make check-docs`: that check alone, after building the modules.
check-docs: tests/test_docs$(EXEEXT) $(pkgmodule_LTLIBRARIES)
	@$(AM_TESTS_ENVIRONMENT) $(LIBTOOL) --mode=execute \
	  $(builddir)/tests/test_docs $(abs_top_srcdir)/docs/manifest.md

.PHONY: check-docs
