# modules/rnn/local.mk - the RNNv2 module (mica_rnn.so) and its tests.
#
# The CUDA implementation is cuDNN's: built where CUDA and cuDNN are, with
# cuDNN opened on first use through the kit's loader (never linked; the
# run path to cuDNN's folder is in MICA_CUDNN_MODULE_LIBS).

pkgmodule_LTLIBRARIES += modules/mica_rnn.la
modules_mica_rnn_la_SOURCES = modules/rnn/rnn.c modules/rnn/rnn.h \
	modules/rnn/rnn_params.c modules/rnn/rnn_ref.c
modules_mica_rnn_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_rnn_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
modules_mica_rnn_la_CPPFLAGS = $(AM_CPPFLAGS)
if MICA_ONEDNN
modules_mica_rnn_la_SOURCES += modules/rnn/rnn_onednn.c
modules_mica_rnn_la_CPPFLAGS += $(MICA_ONEDNN_CPPFLAGS)
modules_mica_rnn_la_LDFLAGS += $(MICA_ONEDNN_LDFLAGS)
modules_mica_rnn_la_LIBADD += modules/common/libmicamodkit_nn.la
endif
if MICA_CUDNN
# The cuDNN half: a convenience library of its own for cuDNN's headers.
noinst_LTLIBRARIES += modules/rnn/librnncudnn.la
modules_rnn_librnncudnn_la_SOURCES = modules/rnn/rnn_cudnn.c
modules_rnn_librnncudnn_la_CPPFLAGS = $(AM_CPPFLAGS) $(MICA_CUDNN_CPPFLAGS)
modules_mica_rnn_la_SOURCES += modules/rnn/rnn_cuda.cu
modules_mica_rnn_la_LIBADD += modules/rnn/librnncudnn.la \
	$(MICA_CUDA_MODULE_LIBS) $(MICA_CUDNN_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_rnn tests/test_rnn_loop
TESTS += tests/test_mod_rnn tests/test_rnn_loop
tests_test_mod_rnn_SOURCES = tests/test_mod_rnn.c tests/rnn_fixtures.h
tests_test_mod_rnn_LDADD = tests/libmicatest.la libmica.la $(LIBM)
tests_test_rnn_loop_SOURCES = tests/test_rnn_loop.c
tests_test_rnn_loop_LDADD = tests/libmicatest.la libmica.la $(LIBM)
# Against ONNX Runtime, where a Python with numpy, onnx and onnxruntime is.
TESTS += tests/test_rnn_onnx.sh
EXTRA_DIST += tests/test_rnn_onnx.sh tests/manifests/rnn/lstm_loop.yaml \
	tests/gen/rnn_ref.py tests/gen/rnn_fixtures.py tests/gen/lstm_loop.py \
	tests/gen/rnn_onnx_check.py tests/gen/rnn_torch_check.py
