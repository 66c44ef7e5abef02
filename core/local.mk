# core/: libmica.  Its folders depend on each other in one direction
# only (HACKING.md): core/base/ (the context, utilities, expressions,
# the validator, the device table, .npy files) <- registry/ <- core/
# (networks, building, memory planning, engines, execution, the devices
# core/<device>/) <- core/manifest/.
lib_LTLIBRARIES += libmica.la
libmica_la_SOURCES = \
	core/base/mica_int.h core/base/context.c core/base/util.c \
	core/base/index.c core/base/size.c \
	core/base/expr.h core/base/expr_int.h core/base/expr.c \
	core/base/expr_nodes.c \
	core/base/fields.h core/base/fields.c core/base/schema.c \
	core/base/text.c core/base/device.h core/base/device.c \
	core/base/npy.h core/base/npy.c core/base/files.h core/base/files.c \
	core/base/threads.c
libmica_la_SOURCES += \
	core/graph.h core/build.h core/exec.h core/control.h \
	core/abi_layout.c core/network.c core/network_io.c \
	core/network_profile.c \
	core/network_format.c core/formats.c \
	core/build.c core/graph_order.c core/choose.c core/instance.c \
	core/device.c core/device_pick.c \
	core/infer.c core/infer_layer.c core/profile.c core/shapes.c \
	core/plan.c core/inplace.c core/constants.c core/dds.c core/engine.c \
	core/exec.c \
	core/exec_run.c core/exec_timing.c core/exec_graph.c \
	core/flow.c \
	core/autotune.c core/timing_cache.c core/precision.c core/rewrite.c \
	core/passes/passes.c core/passes/passes.h core/passes/fusion.c \
	core/passes/fold.c core/passes/eliminate.c core/passes/affine.c \
	core/passes/shuffles.c core/passes/transpose.c core/passes/pointwise.c \
	core/control.c core/control_plan.c core/control_order.c \
	core/control_check.c core/cpu/device.c
# Engine files (core/format/): the format in one room.
libmica_la_SOURCES += \
	core/format/format.h core/format/restore.h core/format/read.c \
	core/format/write.c core/format/layer.c core/format/exprs.c \
	core/format/fields_form.c core/format/load.c core/format/legacy.c \
	core/format/restore.c core/format/restore_layers.c \
	core/format/restore_check.c core/format/restore_plan.c \
	core/format/restore_shapes.c \
	core/format/file.c core/format/checksum.c
# The manifest loader (core/manifest/).
libmica_la_SOURCES += \
	core/manifest/manifest_int.h core/manifest/yaml_load.c \
	core/manifest/yaml_doc.c \
	core/manifest/weights.c core/manifest/params.c \
	core/manifest/tensors.c core/manifest/profiles.c \
	core/manifest/layers.c core/manifest/manifest.c
# The validator and what it needs, for tests that compile it in.
MICA_FIELDS_SOURCES = core/base/fields.c core/base/schema.c \
	core/base/text.c
libmica_la_CPPFLAGS = $(AM_CPPFLAGS) $(YAML_CFLAGS) \
	-DMICA_DEVICE_DIR_DEFAULT='"$(pkglibdir)"'
libmica_la_CFLAGS = $(AM_CFLAGS) $(MICA_VISIBILITY_CFLAGS)
libmica_la_LDFLAGS = -version-info 0:0:0 -no-undefined
libmica_la_LIBADD = $(YAML_LIBS) $(LIBM)

# The devices libmica does not link: each a shared object of $(pkglibdir)
# that core/base/device.c opens the first time the device is used, so that a
# program that never uses CUDA never maps the CUDA runtime.  Uninstalled,
# they are found through $MICA_DEVICE_DIR (core/.libs).
if MICA_CUDA
pkglib_LTLIBRARIES += core/mica_device_cuda.la
core_mica_device_cuda_la_SOURCES = core/cuda/device.c core/cuda/cond.cu
core_mica_device_cuda_la_LDFLAGS = -module -avoid-version -shared \
	-no-undefined -export-symbols-regex '^mica__device_entry$$'
core_mica_device_cuda_la_LIBADD = $(MICA_CUDART_LIBS)
endif

# Tests of the core.
check_PROGRAMS += tests/test_expr tests/test_network tests/test_dynamic
TESTS += tests/test_expr tests/test_network tests/test_dynamic
tests_test_expr_SOURCES = tests/test_expr.c core/base/expr.c \
	core/base/expr_nodes.c
tests_test_expr_LDADD = tests/libmicatest.la
tests_test_network_SOURCES = tests/test_network.c
tests_test_network_LDADD = $(MICA_TEST_LIBS)
# Many execution contexts of one engine on many threads (also run by the
# ThreadSanitizer leg of .ci/run).
check_PROGRAMS += tests/test_threads
TESTS += tests/test_threads
tests_test_threads_SOURCES = tests/test_threads.c
tests_test_threads_LDADD = $(MICA_TEST_LIBS)
tests_test_dynamic_SOURCES = tests/test_dynamic.c
tests_test_dynamic_LDADD = $(MICA_TEST_LIBS)
# CUDA graphs of an execution context (core/exec_graph.c), with a module
# of layers that wait for the host while enqueuing (not installed).
check_PROGRAMS += tests/test_cuda_graph
TESTS += tests/test_cuda_graph
tests_test_cuda_graph_SOURCES = tests/test_cuda_graph.c
tests_test_cuda_graph_LDADD = $(MICA_TEST_LIBS) $(MICA_CUDA_LIBS)
check_LTLIBRARIES += tests/hostwait/hostwait.la
tests_hostwait_hostwait_la_SOURCES = tests/hostwait/hostwait.c
tests_hostwait_hostwait_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_hostwait_hostwait_la_LIBADD = modules/common/libmicamodkit.la
if MICA_CUDA
tests_hostwait_hostwait_la_LIBADD += modules/common/libmicamodkit_cuda.la \
	$(MICA_CUDA_MODULE_LIBS)
endif
check_PROGRAMS += tests/test_engine
TESTS += tests/test_engine
tests_test_engine_SOURCES = tests/test_engine.c core/format/checksum.c
tests_test_engine_LDADD = $(MICA_TEST_LIBS) $(MICA_CUDA_LIBS)
# Loading without copies: what creators are told, mapped files, format 1.
check_PROGRAMS += tests/test_engine_load
TESTS += tests/test_engine_load
tests_test_engine_load_SOURCES = tests/test_engine_load.c core/format/checksum.c
tests_test_engine_load_LDADD = $(MICA_TEST_LIBS)
# Its module of Probe layers, which report how the host made them; not
# installed, found through $MICA_TOP_BUILDDIR.
check_LTLIBRARIES += tests/probe/probe.la
tests_probe_probe_la_SOURCES = tests/probe/probe.c
tests_probe_probe_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_probe_probe_la_LIBADD = modules/common/libmicamodkit.la
EXTRA_DIST += tests/engines/hello-v1.engine
# Engine files of every format against the manifests they were built from.
check_PROGRAMS += tests/test_engine_format
TESTS += tests/test_engine_format
tests_test_engine_format_SOURCES = tests/test_engine_format.c
tests_test_engine_format_LDADD = $(MICA_TEST_LIBS)
EXTRA_DIST += tests/engines/rows-v2.engine tests/engines/dynamic-v2.engine \
	tests/engines/rows-v3.engine
# Crafted engine files (tests/craft.h: reseal, walk, change one field),
# each refused in one line; the fuzzers reuse tests/craft.c.
check_PROGRAMS += tests/test_engine_crafted
TESTS += tests/test_engine_crafted
tests_test_engine_crafted_SOURCES = tests/test_engine_crafted.c \
	tests/craft.c tests/craft.h core/format/checksum.c
tests_test_engine_crafted_LDADD = $(MICA_TEST_LIBS)
# The ABI's appended capabilities (tactics, in place, the shape-change
# hook, ...), through a test module
# written with the kit (tests/abi2/), found through $MICA_TOP_BUILDDIR.
check_LTLIBRARIES += tests/abi2/abi2.la
tests_abi2_abi2_la_SOURCES = tests/abi2/abi2.c
tests_abi2_abi2_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_abi2_abi2_la_LIBADD = modules/common/libmicamodkit.la
# A module built against the ABI's first headers (copies in tests/abi1/,
# first on its include path) runs on today's host beside tests/abi2.
check_LTLIBRARIES += tests/abi1/abi1.la
tests_abi1_abi1_la_SOURCES = tests/abi1/abi1.c
tests_abi1_abi1_la_CPPFLAGS = -I$(top_srcdir)/tests/abi1 $(AM_CPPFLAGS)
tests_abi1_abi1_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
EXTRA_DIST += tests/abi1/mica/types.h tests/abi1/mica/layer.h \
	tests/abi1/mica/module.h
check_PROGRAMS += tests/test_abi_compat
TESTS += tests/test_abi_compat
tests_test_abi_compat_SOURCES = tests/test_abi_compat.c
tests_test_abi_compat_LDADD = $(MICA_TEST_LIBS)
check_PROGRAMS += tests/test_abi_inplace
TESTS += tests/test_abi_inplace
tests_test_abi_inplace_SOURCES = tests/test_abi_inplace.c tests/craft.c \
	tests/craft.h core/format/checksum.c
tests_test_abi_inplace_LDADD = $(MICA_TEST_LIBS)
# Constants bound, not computed (core/constants.c), with tests/abi2's
# in-place layer reading one.
check_PROGRAMS += tests/test_constants
TESTS += tests/test_constants
tests_test_constants_SOURCES = tests/test_constants.c
tests_test_constants_LDADD = $(MICA_TEST_LIBS)
check_PROGRAMS += tests/test_abi_dds
TESTS += tests/test_abi_dds
tests_test_abi_dds_SOURCES = tests/test_abi_dds.c tests/craft.c \
	tests/craft.h core/format/checksum.c
tests_test_abi_dds_LDADD = $(MICA_TEST_LIBS)
EXTRA_DIST += tests/manifests/abi/dds_in_loop.yaml
check_PROGRAMS += tests/test_abi_formats
TESTS += tests/test_abi_formats
tests_test_abi_formats_SOURCES = tests/test_abi_formats.c tests/craft.c \
	tests/craft.h core/format/checksum.c
tests_test_abi_formats_LDADD = $(MICA_TEST_LIBS) $(LIBM)
check_PROGRAMS += tests/test_struct_size
TESTS += tests/test_struct_size
tests_test_struct_size_SOURCES = tests/test_struct_size.c
tests_test_struct_size_LDADD = $(MICA_TEST_LIBS)
check_PROGRAMS += tests/test_abi_tactics
TESTS += tests/test_abi_tactics
tests_test_abi_tactics_SOURCES = tests/test_abi_tactics.c tests/craft.c \
	tests/craft.h core/format/checksum.c
tests_test_abi_tactics_LDADD = $(MICA_TEST_LIBS)
# The validator alone (core/base/fields.c compiled in): loose and typed params.
check_PROGRAMS += tests/test_fields
TESTS += tests/test_fields
tests_test_fields_SOURCES = tests/test_fields.c $(MICA_FIELDS_SOURCES)
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
# Timing of runs (mica bench's markers), on for_loop.yaml.
check_PROGRAMS += tests/test_timing
TESTS += tests/test_timing
tests_test_timing_SOURCES = tests/test_timing.c
tests_test_timing_LDADD = $(MICA_TEST_LIBS)
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
