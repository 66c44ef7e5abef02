# bench/: benchmarks, built with the project and run by hand on the GPU
# machine (`make bench` runs them); figures go to bench/README.md.
noinst_PROGRAMS += bench/bench_overhead
bench_bench_overhead_SOURCES = bench/bench_overhead.c bench/bench_util.c \
	bench/bench_util.h
bench_bench_overhead_LDADD = libmica.la
if MICA_CUDA
# The floor: an empty kernel's launch through the runtime and the driver
# (a convenience library: .cu files compile to libtool objects).
noinst_LTLIBRARIES += bench/libfloor.la
bench_libfloor_la_SOURCES = bench/launch_floor.cu
bench_bench_overhead_LDADD += bench/libfloor.la $(MICA_CUDA_LIBS)
endif
noinst_PROGRAMS += bench/bench_shapes
bench_bench_shapes_SOURCES = bench/bench_shapes.c bench/bench_util.c \
	bench/bench_util.h
bench_bench_shapes_LDADD = libmica.la $(MICA_CUDA_LIBS)
noinst_PROGRAMS += bench/bench_engine
bench_bench_engine_SOURCES = bench/bench_engine.c bench/bench_util.c \
	bench/bench_util.h
bench_bench_engine_LDADD = libmica.la
noinst_PROGRAMS += bench/bench_loop
bench_bench_loop_SOURCES = bench/bench_loop.c bench/bench_util.c \
	bench/bench_util.h
bench_bench_loop_LDADD = libmica.la
MICA_BENCH_RUNS =
# In-process serving, next to Triton (bench/triton_bench.py runs both).
noinst_PROGRAMS += bench/bench_serving
bench_bench_serving_SOURCES = bench/bench_serving.c bench/bench_util.c \
	bench/bench_util.h core/base/npy.c core/base/npy.h \
	core/base/files.c core/base/files.h
bench_bench_serving_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core/base
bench_bench_serving_LDADD = libmica.la $(LIBM)
EXTRA_DIST += bench/triton_bench.py
# A model from a manifest, timed through the library (ResNet-50, issue 10).
noinst_PROGRAMS += bench/bench_model
bench_bench_model_SOURCES = bench/bench_model.c bench/bench_util.c \
	bench/bench_util.h
bench_bench_model_LDADD = libmica.la
# Pointwise layers against memory speed (issues 20, 22): the CPU by
# default, --device cuda on a GPU (bench/pointwise_gpu.sh).
noinst_PROGRAMS += bench/bench_pointwise
bench_bench_pointwise_SOURCES = bench/bench_pointwise.c bench/bench_util.c \
	bench/bench_util.h
bench_bench_pointwise_CPPFLAGS = $(AM_CPPFLAGS) $(MICA_CUDA_CPPFLAGS)
bench_bench_pointwise_LDADD = libmica.la $(MICA_CUDA_LIBS)
EXTRA_DIST += bench/pointwise_gpu.sh bench/pointwise_cpu.py
MICA_BENCHES = bench/bench_overhead bench/bench_shapes bench/bench_engine \
	bench/bench_loop bench/bench_pointwise
if MICA_CUDA
noinst_PROGRAMS += bench/bench_elementwise bench/bench_matmul
bench_bench_elementwise_SOURCES = bench/bench_elementwise.c \
	bench/bench_util.c bench/bench_util.h
bench_bench_elementwise_CPPFLAGS = $(AM_CPPFLAGS) $(MICA_CUDA_CPPFLAGS)
bench_bench_elementwise_LDADD = libmica.la $(MICA_CUDA_LIBS)
bench_bench_matmul_SOURCES = bench/bench_matmul.c bench/bench_util.c \
	bench/bench_util.h
bench_bench_matmul_CPPFLAGS = $(AM_CPPFLAGS) $(MICA_CUDA_CPPFLAGS)
bench_bench_matmul_LDADD = libmica.la modules/common/libmicamodkit.la \
	$(MICA_CUDA_LIBS)
MICA_BENCHES += bench/bench_elementwise bench/bench_matmul
noinst_PROGRAMS += bench/bench_layers
bench_bench_layers_SOURCES = bench/bench_layers.c bench/bench_util.c \
	bench/bench_util.h
bench_bench_layers_CPPFLAGS = $(AM_CPPFLAGS) $(MICA_CUDA_CPPFLAGS)
bench_bench_layers_LDADD = libmica.la modules/common/libmicamodkit.la \
	$(MICA_CUDA_LIBS)
MICA_BENCHES += bench/bench_layers
# An LSTM as an RNNv2 layer, through loops and in PyTorch (issue 12):
# bench/bench_rnn.py drives bench/bench_rnn; `make bench` runs it first.
noinst_PROGRAMS += bench/bench_rnn
bench_bench_rnn_SOURCES = bench/bench_rnn.c bench/bench_util.c \
	bench/bench_util.h
bench_bench_rnn_LDADD = libmica.la
MICA_BENCH_RUNS += bench-rnn
if MICA_CUDNN
noinst_PROGRAMS += bench/bench_conv
bench_bench_conv_SOURCES = bench/bench_conv.c bench/bench_util.c \
	bench/bench_util.h
bench_bench_conv_CPPFLAGS = $(AM_CPPFLAGS) $(MICA_CUDA_CPPFLAGS) \
	$(MICA_CUDNN_CPPFLAGS) -DMICA_BENCH_SRCDIR='"$(abs_top_srcdir)"'
bench_bench_conv_LDADD = libmica.la modules/common/libmicamodkit.la \
	$(MICA_CUDA_LIBS) $(MICA_CUDNN_LIBS)
MICA_BENCHES += bench/bench_conv
endif
# mica bench and mica compare on CUDA (issue 14): bench/mica_bench.sh.
MICA_BENCH_RUNS += bench-mica
endif
EXTRA_DIST += bench/onnx_dynamic_transformers.py
EXTRA_DIST += bench/README.md bench/startup.py bench/bench_rnn.py \
	bench/resnet50_convs.txt bench/conv_torch.py \
	bench/resnet50_gen.py bench/resnet50_torch.py bench/resnet50_cpu.py \
	bench/resnet50_parts.py bench/run_gpu.sh bench/mica_bench.sh \
	bench/gen_mlp.py bench/onnx_torch_models.py bench/fusion.sh \
	bench/gen_convchain.py bench/xformer_torch.py bench/xformer_gpu.sh \
	bench/gpu21.sh bench/gpu21_models.py bench/conv_ncu.py

bench: $(MICA_BENCHES) $(MICA_BENCH_RUNS)
	@for b in $(MICA_BENCHES); do \
	  echo "== $$b"; \
	  MICA_MODULE_DIR=$(abs_top_builddir)/modules/.libs \
	  MICA_DEVICE_DIR=$(abs_top_builddir)/core/.libs ./$$b || exit 1; \
	done
.PHONY: bench
bench-rnn: bench/bench_rnn tools/mica $(pkgmodule_LTLIBRARIES)
	-$(PYTHON3) $(srcdir)/bench/bench_rnn.py \
	  --build $(abs_top_builddir)
.PHONY: bench-rnn
bench-fusion: tools/mica $(pkgmodule_LTLIBRARIES)
	-MICA_MODULE_DIR=$(abs_top_builddir)/modules/.libs \
	  MICA_DEVICE_DIR=$(abs_top_builddir)/core/.libs \
	  $(SHELL) $(srcdir)/bench/fusion.sh $(abs_top_builddir)/tools/mica \
	  $(abs_top_srcdir) $(abs_top_builddir)/bench-fusion-out
.PHONY: bench-fusion
bench-mica: tools/mica $(pkgmodule_LTLIBRARIES)
	-MICA_MODULE_DIR=$(abs_top_builddir)/modules/.libs \
	  MICA_DEVICE_DIR=$(abs_top_builddir)/core/.libs \
	  $(SHELL) $(srcdir)/bench/mica_bench.sh $(abs_top_builddir)/tools/mica \
	  $(abs_top_srcdir) $(abs_top_builddir)/bench-mica-out
.PHONY: bench-mica
EXTRA_DIST += bench/device.sh bench/passes_cpu.py bench/passes_gpu.sh
# CUDA graphs on the GPU, by hand (issue 14): bench/graphs_gpu.sh.
EXTRA_DIST += bench/graphs_gpu.sh
# The scale figures (CPU only, by hand): manifests of N layers.
EXTRA_DIST += bench/gen_chain.sh bench/scale.sh bench/compute_sanitizer.sh
# The CPU's element kernels against memcpy (issue 22).
noinst_PROGRAMS += bench/bench_vec
bench_bench_vec_SOURCES = bench/bench_vec.c bench/bench_util.c \
	bench/bench_util.h
bench_bench_vec_LDADD = libmica.la
EXTRA_DIST += bench/cpu_suite.py bench/cpu_suite.txt
