# bench/: benchmarks, built with the project and run by hand on the GPU
# machine (`make bench` runs them); figures go to bench/README.md.
noinst_PROGRAMS += bench/bench_overhead
bench_bench_overhead_SOURCES = bench/bench_overhead.c bench/bench_util.c \
	bench/bench_util.h
bench_bench_overhead_LDADD = libmica.la
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
MICA_BENCHES = bench/bench_overhead bench/bench_shapes bench/bench_engine \
	bench/bench_loop
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
endif
EXTRA_DIST += bench/README.md bench/startup.py bench/bench_rnn.py

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
EXTRA_DIST += bench/device.sh
# The scale figures (CPU only, by hand): manifests of N layers.
EXTRA_DIST += bench/gen_chain.sh bench/scale.sh bench/compute_sanitizer.sh
