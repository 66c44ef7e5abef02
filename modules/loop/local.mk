# modules/loop/local.mk - the loop module (TripLimit, Iterator, Recurrence,
# LoopOutput) and its test.

pkgmodule_LTLIBRARIES += modules/mica_loop.la
modules_mica_loop_la_SOURCES = modules/loop/loop.c modules/loop/loop.h
modules_mica_loop_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_loop_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_loop_la_SOURCES += modules/loop/loop_cuda.cu
modules_mica_loop_la_LIBADD += modules/common/libmicamodkit_cuda.la \
	$(MICA_CUDA_MODULE_LIBS)
endif

# The test calls the layers' ops directly (boundary layers run through
# enqueue_boundary): it builds fields and dimension expressions with the
# core's own code, and moves data to the GPU itself.
check_PROGRAMS += tests/test_mod_loop
tests_test_mod_loop_SOURCES = tests/test_mod_loop.c tests/boundary.c \
	tests/boundary.h core/fields.c core/expr.c
tests_test_mod_loop_LDADD = $(MICA_TEST_LIBS) $(MICA_CUDA_LIBS)
TESTS += tests/test_mod_loop
