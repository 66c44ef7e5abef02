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
	core/onnx/emit.c core/onnx/shape.c core/onnx/import.c \
	core/onnx/op_elementwise.c core/onnx/op_tensor.c \
	core/onnx/op_nn.c core/onnx/op_reduce.c core/onnx/op_control.c \
	core/onnx/op_rnn.c \
	core/onnx/api.c
core_onnx_libmicaonnx_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/core/onnx \
	$(YAML_CFLAGS) $(PROTOBUF_C_CFLAGS)
libmica_la_LIBADD += core/onnx/libmicaonnx.la $(PROTOBUF_C_LIBS)
else
libmica_la_SOURCES += core/onnx/none.c
endif
EXTRA_DIST += core/onnx/none.c
