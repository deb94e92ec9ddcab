// math.hypot for kernels: in, its arguments as doubles; out, what CPython's math.hypot returns
// (Modules/mathmodule.c's vector_norm: the coordinates scaled by a power of two, their
// squares summed in double-length arithmetic, a square root and one correction step), so
// the results are CPython's bit for bit — checked at start-up against math.hypot on sample
// values (_types.verify_hypot); where that fails, nests calling math.hypot stay in CPython.
// math.hypot never raises: an infinite coordinate gives inf, a NaN one NaN, an overflow inf.
#pragma once

extern "C" {
double stagepy_math_hypot(double x, double y);
}
