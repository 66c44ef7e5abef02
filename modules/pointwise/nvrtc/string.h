/* modules/pointwise/nvrtc/string.h - <string.h> for the Pointwise
 * kernels NVRTC compiles: empty (device code of mica's headers uses no
 * C library function). */
