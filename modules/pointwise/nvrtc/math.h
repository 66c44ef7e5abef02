/* modules/pointwise/nvrtc/math.h - <math.h> for the Pointwise kernels
 * NVRTC compiles: empty, its math functions are built in. */
