/* modules/pointwise/nvrtc/stddef.h - <stddef.h> for the Pointwise
 * kernels NVRTC compiles (LP64). */
#ifndef MICA_PW_STDDEF_H
#define MICA_PW_STDDEF_H
typedef unsigned long size_t;
typedef long ptrdiff_t;
#ifndef NULL
#define NULL 0
#endif
#define offsetof(t, m) __builtin_offsetof(t, m)
#endif
