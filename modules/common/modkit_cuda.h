/* modules/common/modkit_cuda.h - old names, while the modules move to
 * <mica/kit_cuda.h>. */
#ifndef MICA_MODKIT_CUDA_H
#define MICA_MODKIT_CUDA_H
#include "mica/kit_cuda.h"
#define mica__mod_cuda_copy mica_kit_cuda_copy
#define mica__mod_cuda_host_alloc mica_kit_cuda_host_alloc
#define mica__mod_cuda_host_free mica_kit_cuda_host_free
#define mica__mod_cuda_fetch mica_kit_cuda_fetch
#endif
