# fuzz/local.mk - libFuzzer harnesses (configure --enable-fuzzing, clang):
# the manifest loader, the .npy reader, the engine loader and the ONNX
# importer.  `make fuzz` (CI's fuzz leg) replays each harness's seed
# corpus (fuzz/corpus/TARGET/) and reproducers (fuzz/regress/TARGET/),
# then runs FUZZ_RUNS mutations from a fixed seed: the same commit gets
# the same verdict.  `make fuzz-long` fuzzes FUZZ_TIME seconds each with
# a random seed, by hand (what it finds goes to fuzz/regress/ once
# fixed).  Any finding fails, written to fuzz/findings/ of the build
# folder (fuzz/run.sh).  In every build the same harnesses replay their
# seeds and the reproducers once, as a test (tests/test_fuzz_replay.sh).

FUZZ_RUNS = 20000
FUZZ_TIME = 600
MICA_FUZZ_TARGETS = manifest npy engine
MICA_FUZZ_MANIFEST = fuzz/fuzz_manifest.c fuzz/fuzz_common.h
MICA_FUZZ_NPY = fuzz/fuzz_npy.c core/base/npy.c core/base/npy.h \
	core/base/files.c core/base/files.h
MICA_FUZZ_ENGINE = fuzz/fuzz_engine.c fuzz/fuzz_common.h \
	fuzz/engine_fix.c core/format/checksum.c
MICA_FUZZ_ONNX = fuzz/fuzz_onnx.c fuzz/fuzz_common.h

# The replays, in every build.
check_PROGRAMS += fuzz/replay_manifest fuzz/replay_npy fuzz/replay_engine
fuzz_replay_manifest_SOURCES = $(MICA_FUZZ_MANIFEST) fuzz/replay.c
fuzz_replay_manifest_LDADD = libmica.la
fuzz_replay_npy_SOURCES = $(MICA_FUZZ_NPY) fuzz/replay.c
fuzz_replay_engine_SOURCES = $(MICA_FUZZ_ENGINE) fuzz/replay.c
fuzz_replay_engine_LDADD = libmica.la
if MICA_ONNX
check_PROGRAMS += fuzz/replay_onnx
fuzz_replay_onnx_SOURCES = $(MICA_FUZZ_ONNX) fuzz/replay.c
fuzz_replay_onnx_LDADD = libmica.la
endif
TESTS += tests/test_fuzz_replay.sh
EXTRA_DIST += tests/test_fuzz_replay.sh fuzz/run.sh fuzz/corpus fuzz/regress \
	fuzz/onnx.dict fuzz/engine.dict fuzz/manifest.dict

if MICA_FUZZ
noinst_PROGRAMS += fuzz/fuzz_manifest fuzz/fuzz_npy fuzz/fuzz_engine
fuzz_fuzz_manifest_SOURCES = $(MICA_FUZZ_MANIFEST)
fuzz_fuzz_manifest_CPPFLAGS = $(AM_CPPFLAGS) -DMICA_FUZZING
fuzz_fuzz_manifest_LDFLAGS = $(MICA_FUZZ_LDFLAGS)
fuzz_fuzz_manifest_LDADD = libmica.la
fuzz_fuzz_npy_SOURCES = $(MICA_FUZZ_NPY)
fuzz_fuzz_npy_CPPFLAGS = $(AM_CPPFLAGS) -DMICA_FUZZING
fuzz_fuzz_npy_LDFLAGS = $(MICA_FUZZ_LDFLAGS)
fuzz_fuzz_engine_SOURCES = $(MICA_FUZZ_ENGINE)
fuzz_fuzz_engine_CPPFLAGS = $(AM_CPPFLAGS) -DMICA_FUZZING
fuzz_fuzz_engine_LDFLAGS = $(MICA_FUZZ_LDFLAGS)
fuzz_fuzz_engine_LDADD = libmica.la
if MICA_ONNX
noinst_PROGRAMS += fuzz/fuzz_onnx
fuzz_fuzz_onnx_SOURCES = $(MICA_FUZZ_ONNX)
fuzz_fuzz_onnx_CPPFLAGS = $(AM_CPPFLAGS) -DMICA_FUZZING
fuzz_fuzz_onnx_LDFLAGS = $(MICA_FUZZ_LDFLAGS)
fuzz_fuzz_onnx_LDADD = libmica.la
MICA_FUZZ_TARGETS += onnx
endif

fuzz: all
	@$(MICA_FUZZ_ENV) $(SHELL) $(top_srcdir)/fuzz/run.sh ci $(FUZZ_RUNS) \
	  $(MICA_FUZZ_TARGETS)
fuzz-long: all
	@$(MICA_FUZZ_ENV) $(SHELL) $(top_srcdir)/fuzz/run.sh long $(FUZZ_TIME) \
	  $(MICA_FUZZ_TARGETS)
else
fuzz fuzz-long:
	@echo "make $@: configure with --enable-fuzzing (and CC=clang) first" >&2
	@exit 1
endif
# OMP_NUM_THREADS=1: the engine harness runs engines, and LeakSanitizer
# (clang 14) crashes at exit on OpenMP's worker threads (.ci/run says why).
MICA_FUZZ_ENV = OMP_NUM_THREADS=1 \
	MICA_MODULE_DIR='$(abs_top_builddir)/modules/.libs' \
	MICA_DEVICE_DIR='$(abs_top_builddir)/core/.libs' MICA_MODULE_PATH= \
	MICA_TOP_SRCDIR='$(abs_top_srcdir)' MICA_TOP_BUILDDIR='$(abs_top_builddir)'
.PHONY: fuzz fuzz-long
