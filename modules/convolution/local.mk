# modules/convolution/local.mk - Convolution and Deconvolution
# (mica_convolution.so) and their test.

pkgmodule_LTLIBRARIES += modules/mica_convolution.la
modules_mica_convolution_la_SOURCES = modules/convolution/convolution.c \
	modules/convolution/conv_layer.c modules/convolution/conv_layer.h \
	modules/convolution/conv_ref.c modules/convolution/conv.h \
	modules/convolution/fused_conv.c modules/convolution/fused_conv.h \
	modules/convolution/fused_rules.c
modules_mica_convolution_la_CPPFLAGS = $(AM_CPPFLAGS)
modules_mica_convolution_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_convolution_la_LIBADD = modules/common/libmicamodkit_nn.la \
	modules/common/libmicamodkit.la $(LIBM)
if MICA_ONEDNN
modules_mica_convolution_la_SOURCES += modules/convolution/conv_onednn.c
modules_mica_convolution_la_CPPFLAGS += $(MICA_ONEDNN_CPPFLAGS)
modules_mica_convolution_la_LDFLAGS += $(MICA_ONEDNN_LDFLAGS)
endif

if MICA_CUDA
modules_mica_convolution_la_SOURCES += modules/convolution/conv_cuda.cu \
	modules/convolution/conv_gpu.c modules/convolution/fused_cuda.cu
modules_mica_convolution_la_LIBADD += modules/common/libmicamodkit_gpu.la \
	modules/common/libmicamodkit_cuda.la $(MICA_CUDA_MODULE_LIBS)
if MICA_CUDNN
modules_mica_convolution_la_SOURCES += modules/convolution/conv_cudnn.c \
	modules/convolution/conv_graph.c
modules_mica_convolution_la_CPPFLAGS += $(MICA_CUDNN_CPPFLAGS)
endif
endif

check_PROGRAMS += tests/test_mod_convolution
TESTS += tests/test_mod_convolution
tests_test_mod_convolution_SOURCES = tests/test_mod_convolution.c \
	tests/gen/conv_cases.h
tests_test_mod_convolution_LDADD = tests/libmicatest.la libmica.la $(LIBM)

check_PROGRAMS += tests/test_mod_fused_conv
TESTS += tests/test_mod_fused_conv
tests_test_mod_fused_conv_SOURCES = tests/test_mod_fused_conv.c
tests_test_mod_fused_conv_LDADD = tests/libmicatest.la libmica.la $(LIBM)
