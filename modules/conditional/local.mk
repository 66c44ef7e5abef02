# modules/conditional/local.mk - the conditional module (Condition,
# IfConditionalInput, IfConditionalOutput) and its test.

pkgmodule_LTLIBRARIES += modules/mica_conditional.la
modules_mica_conditional_la_SOURCES = modules/conditional/conditional.c
modules_mica_conditional_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_conditional_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_conditional_la_LIBADD += modules/common/libmicamodkit_cuda.la \
	$(MICA_CUDA_MODULE_LIBS)
endif

# As tests/test_mod_loop: direct op calls, fields and expressions through
# the core's own code, its own GPU transfers.
check_PROGRAMS += tests/test_mod_conditional
tests_test_mod_conditional_SOURCES = tests/test_mod_conditional.c \
	tests/boundary.c tests/boundary.h \
	core/fields.c core/expr.c
tests_test_mod_conditional_LDADD = $(MICA_TEST_LIBS) $(MICA_CUDA_LIBS)
TESTS += tests/test_mod_conditional
