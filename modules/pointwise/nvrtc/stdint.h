/* modules/pointwise/nvrtc/stdint.h - <stdint.h> for the Pointwise
 * kernels NVRTC compiles (it has no C library): what mica's headers use,
 * for the LP64 targets CUDA supports. */
#ifndef MICA_PW_STDINT_H
#define MICA_PW_STDINT_H
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
#define INT8_MIN (-128)
#define INT8_MAX 127
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807LL
#define INT64_MIN (-INT64_MAX - 1)
#define UINT32_MAX 4294967295U
#define UINT64_MAX 18446744073709551615ULL
#define SIZE_MAX 18446744073709551615UL
#endif
