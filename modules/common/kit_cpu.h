/*
 * modules/common/kit_cpu.h - threads for the modules' CPU
 * implementations: how many a layer may use now, and a parallel loop
 * over a range.  Part of the module kit (libmicamodkit.la), for the
 * `vec` implementations (kit_vec.h) and oneDNN's runners (kit_onednn.h);
 * the header is not installed.
 *
 * The threads are GNU OpenMP's (libgomp.so.1), the runtime Debian's
 * oneDNN (libdnnl2) runs on, so that mica's own parallel kernels and
 * oneDNN's primitives share one pool of threads.  libgomp is not linked:
 * like oneDNN it is opened on first use through the kit's loader, so that
 * loading a module maps no OpenMP, and where it cannot be opened every
 * loop runs on the calling thread.  Its parallel region is entered
 * through GOMP_parallel, what `#pragma omp parallel` compiles to.
 *
 * Waiting: before libgomp or oneDNN is first opened in the process
 * (mica__cpu_omp_env), OMP_WAIT_POLICY=passive is set in the
 * environment unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set already:
 * OpenMP's threads then sleep between layers instead of spinning for
 * about 300,000 turns, which on a busy machine costs a time slice per
 * layer.  OMP_WAIT_POLICY=active in the environment asks for spinning.
 * libgomp reads the variable once, when it is loaded: where the
 * application loaded it before (another library using OpenMP), its own
 * setting stays.
 */
#ifndef MICA_KIT_CPU_H
#define MICA_KIT_CPU_H

#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * OMP_WAIT_POLICY=passive unless the environment says otherwise (see the
 * file's comment); once per module.  Call before opening a library that
 * loads libgomp (oneDNN).
 */
MICA_KIT_API void mica__cpu_omp_env(void);

/*
 * The threads the layer being enqueued may use: the execution context's
 * setting (the host's cpu_threads), else OpenMP's default
 * (omp_get_max_threads: OMP_NUM_THREADS, else every CPU); 1 without
 * libgomp.
 */
MICA_KIT_API int32_t mica__cpu_threads(void);

/*
 * Give OpenMP on the calling thread the layer's thread count
 * (omp_set_num_threads), before a oneDNN primitive is made or run: the
 * count oneDNN plans for and runs on.  Nothing where the context set no
 * count or libgomp cannot be opened.
 */
MICA_KIT_API void mica__cpu_omp_threads(void);

/* A part [begin, end) of a loop's range, with the loop's context. */
typedef void mica__cpu_range_fn(void *ctx, int64_t begin, int64_t end);

/*
 * fn over [0, n) split in contiguous parts, each at least `grain` long
 * (but the last), their bounds multiples of 64 elements, on at most
 * mica__cpu_threads() threads: on the calling thread alone (no OpenMP
 * at all) when n < 2 * grain or one thread is allowed.  fn must not
 * fail; parts run concurrently.
 */
MICA_KIT_API void mica__cpu_for(int64_t n, int64_t grain,
                                mica__cpu_range_fn *fn, void *ctx);

/*
 * Whether the CPU and the operating system allow AVX and F16C (the
 * half <-> float conversions): CPUID leaf 1 and XCR0's SSE and AVX
 * state, read once.  0 off x86-64.  (clang 14's __builtin_cpu_supports
 * knows no "f16c".)
 */
MICA_KIT_API int mica__cpu_has_f16c(void);

/* Whether the CPU has AVX2 and FMA and the OS saves AVX state: 1 or 0
 * (the kit's 8-lane exp, sigmoid and tanh: kit_vec.h). */
MICA_KIT_API int mica__cpu_has_avx2_fma(void);

/* The grain of memory-bound element loops: below two of them a second
 * thread costs more than it saves. */
#define MICA__CPU_GRAIN 32768

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_CPU_H */
