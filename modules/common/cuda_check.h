/* modules/common/cuda_check.h - old names, while the modules move to
 * <mica/kit_cuda.h>. */
#ifndef MICA_CUDA_CHECK_H
#define MICA_CUDA_CHECK_H
#include "mica/kit_cuda.h"
#include "modkit.h"
#define CUDA_CHECK MICA_KIT_CUDA_CHECK
#define mica__grid mica_kit_grid
#endif
