# modules/attention/local.mk - the attention module (Attention: fused
# scaled dot-product attention) and its test.

pkgmodule_LTLIBRARIES += modules/mica_attention.la
modules_mica_attention_la_SOURCES = modules/attention/attention.c \
	modules/attention/attention.h modules/attention/attn_rules.c
modules_mica_attention_la_LDFLAGS = $(MICA_MODULE_LDFLAGS)
modules_mica_attention_la_LIBADD = modules/common/libmicamodkit.la $(LIBM)
if MICA_CUDA
modules_mica_attention_la_SOURCES += modules/attention/attention_cuda.cu
modules_mica_attention_la_LIBADD += $(MICA_CUDA_MODULE_LIBS)
endif

check_PROGRAMS += tests/test_mod_attention
TESTS += tests/test_mod_attention
tests_test_mod_attention_SOURCES = tests/test_mod_attention.c
tests_test_mod_attention_LDADD = $(MICA_TEST_LIBS)
