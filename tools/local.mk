# tools/local.mk - the `mica` command, and the tests of it and of the
# manifest loader.

# ---- the mica command ------------------------------------------------------
bin_PROGRAMS += tools/mica
tools_mica_SOURCES = tools/mica.c tools/cli.h tools/cli.c \
	tools/cmd_run.c tools/run_output.c tools/cmd_build.c \
	tools/cmd_inspect.c tools/inspect_formats.c tools/cmd_modules.c \
	tools/cmd_modules.h \
	tools/modules_detail.c tools/modules_json.c tools/cmd_import.c \
	tools/cli_onnx.c tools/inputs.h tools/inputs.c tools/random_input.c \
	tools/bench.h tools/cmd_bench.c tools/bench_run.c tools/bench_report.c \
	tools/compare.h tools/cmd_compare.c tools/compare_diff.c \
	tools/compare_layers.c tools/compare_side.c tools/compare_ort.c \
	tools/ort_api.h core/base/npy.c core/base/npy.h core/base/files.c \
	core/base/files.h core/base/index.c
tools_mica_LDADD = libmica.la $(LIBM)
# `mica modules TYPE` points to the installed manifest reference.
tools_mica_CPPFLAGS = $(AM_CPPFLAGS) -DMICA_DOC_DIR='"$(docdir)"'


# ---- tests -----------------------------------------------------------------
check_PROGRAMS += tests/test_manifest tests/test_npy tests/npytool
TESTS += tests/test_manifest tests/test_npy tests/test_cli.sh
tests_test_manifest_SOURCES = tests/test_manifest.c
tests_test_manifest_LDADD = $(MICA_TEST_LIBS)
# What mica refuses instead of crashing (issue 15).
check_PROGRAMS += tests/test_limits
TESTS += tests/test_limits tests/test_cli_limits.sh
EXTRA_DIST += tests/test_cli_limits.sh
# Issue 25's large graphs, small: a DAG planned in execution order, many
# inputs (bench/gen_dag.py writes them; the big figures are benchmarks).
TESTS += tests/test_large_graphs.sh
EXTRA_DIST += tests/test_large_graphs.sh bench/gen_dag.py
tests_test_limits_SOURCES = tests/test_limits.c
tests_test_limits_LDADD = $(MICA_TEST_LIBS)
tests_test_npy_SOURCES = tests/test_npy.c core/base/npy.c core/base/npy.h \
	core/base/files.c core/base/files.h
tests_test_npy_LDADD = $(MICA_TEST_LIBS)
# Files from outside (issue 25): nesting, the model's folder rule, outputs.
check_PROGRAMS += tests/test_files_untrusted
TESTS += tests/test_files_untrusted
tests_test_files_untrusted_SOURCES = tests/test_files_untrusted.c \
	core/base/npy.c core/base/npy.h core/base/files.c core/base/files.h
tests_test_files_untrusted_LDADD = $(MICA_TEST_LIBS)
# A small helper of test_cli.sh: writes and prints .npy files.
tests_npytool_SOURCES = tests/npytool.c core/base/npy.c core/base/npy.h \
	core/base/files.c core/base/files.h
tests_npytool_LDADD = libmica.la $(LIBM)

# Dynamic shapes end to end, on the manifests of tests/manifests/dynamic/.
TESTS += tests/test_cli_dynamic.sh
DYNAMIC_MANIFESTS = tests/manifests/dynamic/reshape_like.yaml \
	tests/manifests/dynamic/batch.yaml \
	tests/manifests/dynamic/two_profiles.yaml \
	tests/manifests/dynamic/shape_input.yaml \
	tests/manifests/dynamic/fill.yaml \
	tests/manifests/dynamic/empty_reduce.yaml \
	tests/manifests/dynamic/empty_slice.yaml \
	tests/manifests/dynamic/empty_slice_bad.yaml \
	tests/manifests/dynamic/slice_shape.yaml \
	tests/manifests/dynamic/empty_concat.yaml \
	tests/manifests/dynamic/empty_shuffle.yaml \
	tests/manifests/dynamic/classify.yaml

# A small CNN end to end (tests/manifests/cnn/, from tests/gen/small_cnn.py).
TESTS += tests/test_cli_cnn.sh
EXTRA_DIST += tests/test_cli_cnn.sh tests/gen/small_cnn.py \
	tests/manifests/cnn/small_cnn.yaml tests/manifests/cnn/small_cnn.bin \
	tests/manifests/cnn/shuffle_cnn.yaml \
	tests/manifests/cnn/x2.npy tests/manifests/cnn/x3.npy \
	tests/manifests/cnn/y2.npy tests/manifests/cnn/y3.npy

# Fusion rules through the command: in-tree and a third party's
# (tests/fusion/, built in registry/local.mk), --no-fusion, engines.
TESTS += tests/test_cli_fusion.sh
EXTRA_DIST += tests/test_cli_fusion.sh tests/manifests/fusion/fusion.yaml

# Graph passes through the command (docs/passes.md): --passes,
# --no-passes, inspect's record, engines, compare's passes= items.
TESTS += tests/test_cli_passes.sh
EXTRA_DIST += tests/test_cli_passes.sh tests/manifests/passes/eliminate.yaml \
	tests/manifests/passes/fold.yaml \
	tests/manifests/passes/affine.yaml tests/manifests/passes/transpose.yaml
# Every pass proven by running both graphs: each test network and ONNX
# model (and the light models with $MICA_ONNX_LIGHT) with and without.
TESTS += tests/test_passes.sh
EXTRA_DIST += tests/test_passes.sh

# Loops and conditionals through the command (tests/manifests/control/).
TESTS += tests/test_cli_control.sh

# What a newcomer is told: folders for files, misspelt --prefer types,
# MICA_LOG_LEVEL, info and debug logging, configure's rm and core/.
TESTS += tests/test_cli_messages.sh
EXTRA_DIST += tests/test_cli_messages.sh

# Engine files end to end: mica build, then run and inspect of the engine
# against the manifest, and the refusals of a damaged or unloadable engine.
TESTS += tests/test_cli_engine.sh

EXTRA_DIST += tests/test_cli.sh tests/test_cli_dynamic.sh \
	tests/test_cli_engine.sh tests/test_cli_control.sh $(DYNAMIC_MANIFESTS) \
	examples/hello.yaml examples/hello_x.npy examples/dynamic.yaml

# `mica modules TYPE` and `--json`, on the in-tree modules and on
# tests/odd/ (strings that need escaping, a default of every field kind;
# in a folder of its own, apart from the fake modules test_registry loads).
TESTS += tests/test_cli_modules.sh
check_LTLIBRARIES += tests/odd/odd.la
tests_odd_odd_la_SOURCES = tests/odd/odd.c
tests_odd_odd_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
EXTRA_DIST += tests/test_cli_modules.sh

# `mica bench`, `mica compare` and `mica run`'s random inputs, on the CPU;
# tests/drift is a module whose two implementations of Drift disagree on
# purpose, for compare to catch.
TESTS += tests/test_cli_perf.sh
EXTRA_DIST += tests/test_cli_perf.sh
# compare against the reference, saved outputs and ONNX Runtime (issue 26)
TESTS += tests/test_cli_compare_ref.sh
EXTRA_DIST += tests/test_cli_compare_ref.sh
check_LTLIBRARIES += tests/drift/drift.la
tests_drift_drift_la_SOURCES = tests/drift/drift.c
tests_drift_drift_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_drift_drift_la_LIBADD = modules/common/libmicamodkit.la
