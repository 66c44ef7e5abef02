/* modules/pointwise/nvrtc/float.h - <float.h> for the Pointwise kernels
 * NVRTC compiles: what mica's headers use. */
#ifndef MICA_PW_FLOAT_H
#define MICA_PW_FLOAT_H
#define FLT_MAX 3.40282346638528859811704183484516925e+38F
#endif
