# tools/triton/local.mk - libtriton_mica.so, the Triton Inference Server
# backend (configure --enable-triton), and its test.
#
# Installed as $(pkglibdir)/triton/mica/libtriton_mica.so: the server
# looks for BACKEND_DIR/mica/libtriton_mica.so, so
# `tritonserver --backend-directory=$(pkglibdir)/triton` finds it (or
# copy the folder mica/ into the server's backends folder).  The symbols
# of the server's API are resolved in the server process at load time,
# so the library is linked with undefined references on purpose.

TRITON_SOURCES = tools/triton/triton_api.h tools/triton/backend.h \
	tools/triton/json.h tools/triton/json.c tools/triton/backend.c \
	tools/triton/util.c tools/triton/dtype.c tools/triton/model.c tools/triton/model_file.c \
	tools/triton/config_io.c tools/triton/instance.c \
	tools/triton/request.c tools/triton/execute.c

if MICA_TRITON
tritonbackenddir = $(pkglibdir)/triton/mica
tritonbackend_LTLIBRARIES = tools/triton/libtriton_mica.la
tools_triton_libtriton_mica_la_SOURCES = $(TRITON_SOURCES)
tools_triton_libtriton_mica_la_LDFLAGS = -module -avoid-version -shared \
	-export-symbols-regex '^TRITONBACKEND_'
tools_triton_libtriton_mica_la_LIBADD = libmica.la
if MICA_CUDA
tools_triton_libtriton_mica_la_SOURCES += tools/triton/device_cuda.c
tools_triton_libtriton_mica_la_LIBADD += $(MICA_CUDART_LIBS)
else
tools_triton_libtriton_mica_la_SOURCES += tools/triton/device_cpu.c
endif

# The end-to-end test: a tritonserver from nvidia-pytriton (found in the
# virtual environment $MICA_TRITON_VENV) serving mica models.
TESTS += tests/test_triton.sh
AM_TESTS_ENVIRONMENT += \
	MICA_TRITON_VENV="$${MICA_TRITON_VENV:-$(MICA_TRITON_VENV_CONF)}"; \
	MICA_TRITON_BACKEND='$(abs_top_builddir)/tools/triton/.libs/libtriton_mica.so'; \
	export MICA_TRITON_VENV MICA_TRITON_BACKEND;
endif

EXTRA_DIST += $(TRITON_SOURCES) tools/triton/device_cpu.c \
	tools/triton/device_cuda.c tests/test_triton.sh \
	tests/triton/make_repo.py tests/triton/test_triton.py \
	tests/triton/server.py

# The backend's code without a server: its configuration code, then its
# entry points driven by a test double of the server (on a CUDA build with
# a GPU, a KIND_GPU instance too).  Built whether or not --enable-triton.
check_PROGRAMS += tests/test_triton_config tests/test_triton_backend
TESTS += tests/test_triton_config tests/test_triton_backend
tests_test_triton_config_SOURCES = tests/test_triton_config.c \
	tests/triton/fake_triton.c tests/triton/fake_triton.h \
	tools/triton/triton_api.h tools/triton/backend.h tools/triton/json.h \
	tools/triton/json.c tools/triton/util.c tools/triton/dtype.c \
	tools/triton/config_io.c
tests_test_triton_config_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/triton
tests_test_triton_config_LDADD = $(MICA_TEST_LIBS) $(MICA_CUDA_LIBS)
tests_test_triton_backend_SOURCES = tests/test_triton_backend.c \
	tests/triton/fake_triton.c tests/triton/fake_triton.h $(TRITON_SOURCES)
tests_test_triton_backend_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/triton \
	-I$(top_srcdir)/tests/triton
tests_test_triton_backend_LDADD = $(MICA_TEST_LIBS) $(LIBM)
if MICA_CUDA
tests_test_triton_backend_SOURCES += tools/triton/device_cuda.c
tests_test_triton_backend_LDADD += $(MICA_CUDA_LIBS)
else
tests_test_triton_backend_SOURCES += tools/triton/device_cpu.c
endif
