# modules/softmax/local.mk - the softmax module (SoftMax, RaggedSoftMax)
# and its test.

pkgmodule_LTLIBRARIES += modules/mica_softmax.la
modules_mica_softmax_la_SOURCES = modules/softmax/softmax.c \
	modules/softmax/softmax.h modules/softmax/softmax_vec.c
modules_mica_softmax_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_softmax_la_LIBADD = modules/common/libmicamodkit_cpu.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_softmax_la_SOURCES += modules/softmax/softmax_cuda.cu
modules_mica_softmax_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_softmax
TESTS += tests/test_mod_softmax
tests_test_mod_softmax_SOURCES = tests/test_mod_softmax.c
tests_test_mod_softmax_LDADD = $(MICA_TEST_LIBS)

# A transformer encoder block through `mica run` on both devices
# (tests/gen/transformer.py writes the manifest and its data).
TESTS += tests/test_cli_transformer.sh
EXTRA_DIST += tests/test_cli_transformer.sh tests/gen/transformer.py \
	tests/manifests/transformer/encoder.yaml \
	tests/manifests/transformer/weights.bin \
	tests/manifests/transformer/x.npy tests/manifests/transformer/y.npy
