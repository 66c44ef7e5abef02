# modules/common/local.mk - the module kit, a convenience library (PIC)
# linked into every module: each module .so gets its own hidden copy.

noinst_LTLIBRARIES += modules/common/libmicamodkit.la
modules_common_libmicamodkit_la_SOURCES = modules/common/modkit.c \
	modules/common/modkit_layer.c modules/common/modkit.h \
	modules/common/cuda_check.h

# The CUDA half: device copies and scalar read-backs, linked by the
# modules that use them (with the CUDA runtime).
if MICA_CUDA
noinst_LTLIBRARIES += modules/common/libmicamodkit_cuda.la
modules_common_libmicamodkit_cuda_la_SOURCES = modules/common/modkit_cuda.c \
	modules/common/modkit_cuda.h
modules_common_libmicamodkit_cuda_la_CPPFLAGS = $(AM_CPPFLAGS) \
	$(MICA_CUDA_CPPFLAGS)
endif
