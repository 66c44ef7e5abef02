# modules/common/local.mk - the module kit, a convenience library (PIC)
# linked into every module: each module .so gets its own hidden copy.

noinst_LTLIBRARIES += modules/common/libmicamodkit.la
modules_common_libmicamodkit_la_SOURCES = modules/common/modkit.c \
	modules/common/modkit_layer.c modules/common/modkit.h \
	modules/common/cuda_check.h
