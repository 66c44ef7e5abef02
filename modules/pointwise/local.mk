# modules/pointwise/local.mk - the pointwise module (mica_pointwise.so):
# the Pointwise layer, a program of element-by-element operations that the
# builder's pointwise pass makes of groups of ElementWise, Unary,
# Activation, Select, Scale and Identity layers; on CUDA its kernels are
# generated and compiled with NVRTC when the engine is built.  Its tests.

pkgmodule_LTLIBRARIES += modules/mica_pointwise.la
modules_mica_pointwise_la_SOURCES = modules/pointwise/pointwise.c \
	modules/pointwise/pointwise.h modules/pointwise/pw_args.h \
	modules/pointwise/pw_prog.c modules/pointwise/pw_view.c \
	modules/pointwise/pw_cpu.c modules/pointwise/pw_gen.c
# The ops are the families' own scalar functions (their headers).
modules_mica_pointwise_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/modules/pointwise -I$(top_srcdir)/modules/elementwise \
	-I$(top_srcdir)/modules/unary -I$(top_srcdir)/modules/activation \
	-I$(top_srcdir)/modules/scale -I$(top_srcdir)/modules/identity
# No trapping floating point (values are unchanged, only the exception
# flags nobody reads): the CPU evaluator's loops of selects between float
# results (float16 conversions) then vectorize.
modules_mica_pointwise_la_CFLAGS = $(AM_CFLAGS) -fno-trapping-math
modules_mica_pointwise_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_pointwise_la_LIBADD = modules/common/libmicamodkit_cpu.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_pointwise_la_SOURCES += modules/pointwise/pw_cuda.c \
	modules/pointwise/pw_cuda.h
nodist_modules_mica_pointwise_la_SOURCES = modules/pointwise/pw_headers.c
modules_mica_pointwise_la_LIBADD += modules/common/libmicamodkit_gpu.la \
	$(MICA_CUDA_MODULE_LIBS)
endif

# The headers a generated kernel includes, embedded for NVRTC (which has
# no file system of ours at run time): the families' headers themselves,
# and the few C library headers NVRTC lacks.
PW_NVRTC_STUBS = modules/pointwise/nvrtc/stdint.h \
	modules/pointwise/nvrtc/stddef.h modules/pointwise/nvrtc/float.h \
	modules/pointwise/nvrtc/math.h modules/pointwise/nvrtc/string.h
EXTRA_DIST += modules/pointwise/pw_headers.sh $(PW_NVRTC_STUBS)
CLEANFILES += modules/pointwise/pw_headers.c
modules/pointwise/pw_headers.c: $(top_srcdir)/modules/pointwise/pw_headers.sh \
		$(top_srcdir)/abi/mica/types.h $(top_srcdir)/abi/mica/layer.h \
		$(top_srcdir)/abi/mica/module.h $(top_srcdir)/abi/mica/kit.h \
		$(top_srcdir)/abi/mica/kit_half.h \
		$(top_srcdir)/abi/mica/kit_minifloat.h \
		$(top_srcdir)/modules/elementwise/elementwise.h \
		$(top_srcdir)/modules/unary/unary.h \
		$(top_srcdir)/modules/activation/activation.h \
		$(top_srcdir)/modules/scale/scale.h \
		$(top_srcdir)/modules/identity/identity.h \
		$(top_srcdir)/modules/pointwise/pw_args.h \
		$(top_srcdir)/modules/pointwise/nvrtc/stdint.h \
		$(top_srcdir)/modules/pointwise/nvrtc/stddef.h \
		$(top_srcdir)/modules/pointwise/nvrtc/float.h \
		$(top_srcdir)/modules/pointwise/nvrtc/math.h \
		$(top_srcdir)/modules/pointwise/nvrtc/string.h
	$(AM_V_GEN)$(MKDIR_P) modules/pointwise && \
	$(SHELL) $(top_srcdir)/modules/pointwise/pw_headers.sh \
	  $(top_srcdir) > $@-t && mv -f $@-t $@

# The layer against the layers it stands for, on random programs (CPU bit
# for bit; CUDA within tolerance where a GPU is usable).
check_PROGRAMS += tests/test_pointwise_random
TESTS += tests/test_pointwise_random
tests_test_pointwise_random_SOURCES = tests/test_pointwise_random.c
tests_test_pointwise_random_LDADD = tests/libmicatest.la libmica.la $(LIBM)

# NVRTC compiles the generated kernels of every op and dtype (no GPU
# needed; skipped without CUDA).
check_PROGRAMS += tests/test_pointwise_nvrtc
TESTS += tests/test_pointwise_nvrtc
tests_test_pointwise_nvrtc_SOURCES = tests/test_pointwise_nvrtc.c
tests_test_pointwise_nvrtc_LDADD = tests/libmicatest.la libmica.la $(LIBM)

check_PROGRAMS += tests/test_mod_pointwise
TESTS += tests/test_mod_pointwise
tests_test_mod_pointwise_SOURCES = tests/test_mod_pointwise.c
tests_test_mod_pointwise_LDADD = tests/libmicatest.la libmica.la $(LIBM)

# The graph pass "pointwise" (core/passes/pointwise.c): networks with and
# without it give the same outputs; the groups it makes.
check_PROGRAMS += tests/test_pass_pointwise
TESTS += tests/test_pass_pointwise
tests_test_pass_pointwise_SOURCES = tests/test_pass_pointwise.c
tests_test_pass_pointwise_LDADD = tests/libmicatest.la libmica.la $(LIBM)
# Networks the pointwise pass fuses, for tests/test_passes.sh (every test
# manifest built with and without the passes, compared).
EXTRA_DIST += tests/manifests/pointwise/dag.yaml \
	tests/manifests/pointwise/gelu.yaml
# The same without F16C: the portable float16 conversions.
TESTS += tests/test_pointwise_portable.sh
EXTRA_DIST += tests/test_pointwise_portable.sh
