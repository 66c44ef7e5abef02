/* swish.h - the formula, shared by the CPU code and the kernel. */
#ifndef SWISH_H
#define SWISH_H

#include <math.h>
#include <mica/kit.h>

MICA_KIT_HD float swish(float x) { return x / (1.0f + expf(-x)); }

#endif
