# core/: libmica's context-free parts: fields, expressions, networks,
# building, memory planning, engines, execution and the devices.
lib_LTLIBRARIES += libmica.la
libmica_la_SOURCES = \
	core/mica_int.h core/graph.h core/expr.h core/build.h core/exec.h \
	core/control.h \
	core/fields.h \
	core/abi_layout.c core/fields.c core/expr.c core/network.c \
	core/build.c core/infer.c core/profile.c core/shapes.c core/plan.c \
	core/engine.c core/exec.c core/device.c core/serialize.c \
	core/deserialize.c core/checksum.c core/autotune.c core/precision.c \
	core/control.c core/control_order.c core/control_check.c core/flow.c \
	core/device.h core/cpu/device.c
libmica_la_CPPFLAGS = $(AM_CPPFLAGS) $(YAML_CFLAGS) \
	-DMICA_DEVICE_DIR_DEFAULT='"$(pkglibdir)"'
libmica_la_CFLAGS = $(AM_CFLAGS) $(MICA_VISIBILITY_CFLAGS)
libmica_la_LDFLAGS = -version-info 0:0:0 -no-undefined
libmica_la_LIBADD = $(YAML_LIBS) $(LIBM)

# The devices libmica does not link: each a shared object of $(pkglibdir)
# that core/device.c opens the first time the device is used, so that a
# program that never uses CUDA never maps the CUDA runtime.  Uninstalled,
# they are found through $MICA_DEVICE_DIR (core/.libs).
if MICA_CUDA
pkglib_LTLIBRARIES += core/mica_device_cuda.la
core_mica_device_cuda_la_SOURCES = core/cuda/device.c
core_mica_device_cuda_la_LDFLAGS = -module -avoid-version -shared \
	-no-undefined -export-symbols-regex '^mica__device_entry$$'
core_mica_device_cuda_la_LIBADD = $(MICA_CUDART_LIBS)
endif

# Tests of the core.
check_PROGRAMS += tests/test_expr tests/test_network tests/test_dynamic
TESTS += tests/test_expr tests/test_network tests/test_dynamic
tests_test_expr_SOURCES = tests/test_expr.c core/expr.c
tests_test_expr_LDADD = tests/libmicatest.la
tests_test_network_SOURCES = tests/test_network.c
tests_test_network_LDADD = $(MICA_TEST_LIBS)
tests_test_dynamic_SOURCES = tests/test_dynamic.c
tests_test_dynamic_LDADD = $(MICA_TEST_LIBS)
check_PROGRAMS += tests/test_engine
TESTS += tests/test_engine
tests_test_engine_SOURCES = tests/test_engine.c core/checksum.c
tests_test_engine_LDADD = $(MICA_TEST_LIBS) $(MICA_CUDA_LIBS)
# Loading without copies: what creators are told, mapped files, format 1.
check_PROGRAMS += tests/test_engine_load
TESTS += tests/test_engine_load
tests_test_engine_load_SOURCES = tests/test_engine_load.c core/checksum.c
tests_test_engine_load_LDADD = $(MICA_TEST_LIBS)
# Its module of Probe layers, which report how the host made them; not
# installed, found through $MICA_TOP_BUILDDIR.
check_LTLIBRARIES += tests/probe/probe.la
tests_probe_probe_la_SOURCES = tests/probe/probe.c
tests_probe_probe_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_probe_probe_la_LIBADD = modules/common/libmicamodkit.la
EXTRA_DIST += tests/engines/hello-v1.engine
# The validator alone (core/fields.c compiled in): loose and typed params.
check_PROGRAMS += tests/test_fields
TESTS += tests/test_fields
tests_test_fields_SOURCES = tests/test_fields.c core/fields.c
tests_test_fields_LDADD = $(MICA_TEST_LIBS)
# CPU work on a build with CUDA never maps a GPU library (/proc/self/maps).
check_PROGRAMS += tests/test_lazy_device
TESTS += tests/test_lazy_device
tests_test_lazy_device_SOURCES = tests/test_lazy_device.c
tests_test_lazy_device_LDADD = $(MICA_TEST_LIBS)
check_PROGRAMS += tests/test_precision
TESTS += tests/test_precision
tests_test_precision_SOURCES = tests/test_precision.c
tests_test_precision_LDADD = $(MICA_TEST_LIBS)

# Loops and conditionals end to end, on the manifests of
# tests/manifests/control/ (the seed examples and the errors).
check_PROGRAMS += tests/test_control
TESTS += tests/test_control
tests_test_control_SOURCES = tests/test_control.c
tests_test_control_LDADD = $(MICA_TEST_LIBS)
EXTRA_DIST += $(CONTROL_MANIFESTS)
CONTROL_MANIFESTS = tests/manifests/control/for_loop.yaml \
	tests/manifests/control/iterate.yaml \
	tests/manifests/control/while_loop.yaml \
	tests/manifests/control/nested_loop.yaml \
	tests/manifests/control/simple_if.yaml \
	tests/manifests/control/select_like.yaml \
	tests/manifests/control/sum_even.yaml \
	tests/manifests/control/cond_in_cond.yaml \
	tests/manifests/control/lstm.yaml \
	tests/manifests/control/dynamic_rows.yaml \
	tests/manifests/control/bad/count_inside.yaml \
	tests/manifests/control/bad/cross_branch.yaml \
	tests/manifests/control/bad/inner_output.yaml \
	tests/manifests/control/bad/iterate_inside.yaml \
	tests/manifests/control/bad/kind_clash.yaml \
	tests/manifests/control/bad/last_value.yaml \
	tests/manifests/control/bad/nested_output.yaml \
	tests/manifests/control/bad/next_shape.yaml \
	tests/manifests/control/bad/no_bound.yaml \
	tests/manifests/control/bad/no_condition.yaml \
	tests/manifests/control/bad/no_output.yaml \
	tests/manifests/control/bad/short_length.yaml \
	tests/manifests/control/bad/stray_loop.yaml \
	tests/manifests/control/bad/two_conditions.yaml \
	tests/manifests/control/bad/two_trip.yaml \
	tests/manifests/control/bad/unclean.yaml \
	tests/manifests/control/bad/unnamed.yaml
