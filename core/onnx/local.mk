# core/onnx/local.mk - the ONNX importer (part of libmica): C code that
# protoc-c generates at build time from onnx.proto, the reader and the
# mapping of operators.  Without it (--without-onnx), none.c answers the
# public functions with the reason.

if MICA_ONNX
noinst_LTLIBRARIES += core/onnx/libmicaonnx.la
# The generated code: core/onnx/onnx.pb-c.{c,h} in the build tree, from a
# copy of the configured onnx.proto (protoc-c names its output after it).
nodist_core_onnx_libmicaonnx_la_SOURCES = core/onnx/onnx.pb-c.c \
	core/onnx/onnx.pb-c.h
BUILT_SOURCES += core/onnx/onnx.pb-c.h
CLEANFILES += core/onnx/onnx.pb-c.c core/onnx/onnx.pb-c.h \
	core/onnx/onnx.proto core/onnx/onnx.pb-c.stamp
core/onnx/onnx.pb-c.stamp: $(ONNX_PROTO)
	$(AM_V_GEN)$(MKDIR_P) core/onnx && cp $(ONNX_PROTO) core/onnx/onnx.proto \
	  && $(PROTOC_C) --proto_path=core/onnx --c_out=core/onnx \
	     core/onnx/onnx.proto && touch $@
core/onnx/onnx.pb-c.c core/onnx/onnx.pb-c.h: core/onnx/onnx.pb-c.stamp
	@test -f $@ || { rm -f core/onnx/onnx.pb-c.stamp; \
	  $(MAKE) $(AM_MAKEFLAGS) core/onnx/onnx.pb-c.stamp; }

core_onnx_libmicaonnx_la_SOURCES = core/onnx/onnx_int.h \
	core/onnx/reader.c core/onnx/tensor.c core/onnx/ir.c \
	core/onnx/names.c core/onnx/weights.c core/onnx/emit.c \
	core/onnx/shape.c core/onnx/layers.c core/onnx/import.c \
	core/onnx/profile.c core/onnx/thirdparty.c \
	core/onnx/op_elementwise.c core/onnx/op_tensor.c \
	core/onnx/op_slice.c core/onnx/op_shape.c core/onnx/op_gather.c \
	core/onnx/op_conv.c core/onnx/op_nn.c core/onnx/op_norm.c \
	core/onnx/op_resize.c core/onnx/op_reduce.c core/onnx/op_control.c \
	core/onnx/op_rnn.c core/onnx/op_loss.c core/onnx/op_index.c \
	core/onnx/op_math.c core/onnx/op_xformer.c core/onnx/op_quant.c \
	core/onnx/op_act.c core/onnx/api.c
core_onnx_libmicaonnx_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/core/onnx \
	$(YAML_CFLAGS) $(PROTOBUF_C_CFLAGS)
libmica_la_LIBADD += core/onnx/libmicaonnx.la $(PROTOBUF_C_LIBS)
else
libmica_la_SOURCES += core/onnx/none.c
endif
EXTRA_DIST += core/onnx/none.c

# ---- tests -------------------------------------------------------------------
# ONNX's backend tests as a conformance suite, Debian's libonnx-testdata
# and the onnx 1.19.1 wheel's data ($$MICA_ONNX_WHEEL_TESTDATA, which
# .ci/run sets); skips without the importer or without either.
# tests/onnx/expected.txt and expected-1.19.1.txt list what does not pass
# yet, with why; `make onnx-expected` rewrites them from a run.
check_PROGRAMS += tests/test_onnx_backend
TESTS += tests/test_onnx_backend
tests_test_onnx_backend_SOURCES = tests/test_onnx_backend.c
tests_test_onnx_backend_LDADD = $(MICA_TEST_LIBS)
EXTRA_DIST += tests/onnx/expected.txt tests/onnx/expected-1.19.1.txt

# Whole models: the onnx wheel's light_* models on the CPU and CUDA (skips
# without $$MICA_ONNX_LIGHT, which .ci/run sets).
check_PROGRAMS += tests/test_onnx_models
TESTS += tests/test_onnx_models
tests_test_onnx_models_SOURCES = tests/test_onnx_models.c
tests_test_onnx_models_LDADD = $(MICA_TEST_LIBS)

onnx-expected: tests/test_onnx_backend$(EXEEXT) all
	$(AM_V_GEN)set -e; for s in debian:expected onnx-1.19.1:expected-1.19.1; do \
	  label=$${s%%:*}; file=$(srcdir)/tests/onnx/$${s#*:}.txt; \
	  if MICA_MODULE_DIR='$(abs_top_builddir)/modules/.libs' \
	     MICA_MODULE_PATH= MICA_TOP_SRCDIR='$(abs_top_srcdir)' \
	     ./tests/test_onnx_backend --generate $$label >$$file.tmp; then \
	    mv $$file.tmp $$file; \
	    echo "wrote $$file: `grep -vc '^#' $$file` tests that do not pass"; \
	  else rm -f $$file.tmp; echo "$$label: no test data, $$file kept"; fi; \
	done
.PHONY: onnx-expected

# The importer's folds on the checked tensor type (issue 25): the
# reproducers of fuzz/regress/onnx/ refused, consistent folds computed.
check_PROGRAMS += tests/test_onnx_folds
TESTS += tests/test_onnx_folds
tests_test_onnx_folds_SOURCES = tests/test_onnx_folds.c
tests_test_onnx_folds_LDADD = $(MICA_TEST_LIBS)

# Trained models from public wheels against ONNX Runtime (skips without
# $$MICA_REAL_WHEELS and $$MICA_REAL_PYTHON, which .ci/run sets).
TESTS += tests/test_onnx_real.sh
EXTRA_DIST += tests/test_onnx_real.sh tests/onnx/real_models.py \
	tests/onnx/real_models.txt

# Shape arithmetic over runtime dimensions and runtime values where mica
# wants constants (issue 23 items 4, 5), against ONNX Runtime (skips
# without a Python that has it).
TESTS += tests/test_onnx_dynshape.sh
EXTRA_DIST += tests/test_onnx_dynshape.sh tests/onnx/dynshape.txt \
	tests/onnx/make_dynshape.py \
	tests/onnx/models/dyn_conv_wt_computed.onnx \
	tests/onnx/models/dyn_conv_wt_input.onnx \
	tests/onnx/models/dyn_if_shape.onnx \
	tests/onnx/models/dyn_onehot_cumsum_compress.onnx \
	tests/onnx/models/dyn_range_float.onnx \
	tests/onnx/models/dyn_runtime_params.onnx \
	tests/onnx/models/dyn_same_pool_conv.onnx \
	tests/onnx/models/dyn_squeeze_noaxes.onnx \
	tests/onnx/models/dyn_torch_pad.onnx

# BERT and GPT-2 (small) from both PyTorch exporters at dynamic batch and
# sequence, float32 and float16, against ONNX Runtime (skips without a
# Python that has torch and transformers: $$MICA_TORCH_PYTHON).
TESTS += tests/test_onnx_transformers.sh
EXTRA_DIST += tests/test_onnx_transformers.sh

# The command end to end on the models of tests/onnx/models/.
TESTS += tests/test_cli_onnx.sh
ONNX_TEST_MODELS = tests/onnx/make_models.py \
	tests/onnx/models/mlp.onnx tests/onnx/models/mlp.in_0.npy \
	tests/onnx/models/batch.onnx \
	tests/onnx/models/mlp.want.out_relu.npy \
	tests/onnx/models/mlp.want.out_sum.npy \
	tests/onnx/models/ext.onnx tests/onnx/models/ext.data \
	tests/onnx/models/ext-data.onnx \
	tests/onnx/models/big.onnx tests/onnx/models/unsupported.onnx \
	tests/onnx/models/custom_ns.onnx tests/onnx/models/badattr.onnx \
	tests/onnx/models/complex.onnx tests/onnx/models/thirdparty.onnx \
	tests/onnx/models/control.onnx tests/onnx/models/control.x.npy \
	tests/onnx/models/control.c.npy tests/onnx/models/control.want.y.npy \
	tests/onnx/models/splat.onnx tests/onnx/models/splat.x.npy \
	tests/onnx/models/splat.want.z.npy tests/onnx/models/splat.want.mask.npy \
	tests/onnx/make_encoder.py tests/onnx/models/encoder17.onnx \
	tests/onnx/models/encoder20.onnx \
	tests/onnx/models/encoder.input_ids.npy \
	tests/onnx/models/encoder.attention_mask.npy \
	tests/onnx/models/encoder17.want.last_hidden_state.npy \
	tests/onnx/models/encoder17.want.pooler_output.npy \
	tests/onnx/models/encoder20.want.last_hidden_state.npy \
	tests/onnx/models/encoder20.want.pooler_output.npy \
	tests/onnx/make_folds.py tests/onnx/models/folds-ok.onnx
EXTRA_DIST += tests/test_cli_onnx.sh tests/onnx/gen_long_names.py $(ONNX_TEST_MODELS)
EXTRA_DIST += docs/onnx.md bench/onnx_import.sh
