//===- HalfFloat.h - f16 and bf16 conversions with integer ops --*- C++ -*-===//
//
// Part of gridjit. The one implementation of the half-precision formats'
// conversions outside generated code: constant folding, jit-run's
// arguments and printing, the C API and Python arguments, and the host
// runtime's conversion helpers (HostRuntime.cpp) all use it. Integer
// operations only: exact, and independent of the CPU's and the C library's
// half-precision support.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_SUPPORT_HALFFLOAT_H
#define GRIDJIT_SUPPORT_HALFFLOAT_H

#include <cstdint>

namespace gridjit {

/// IEEE binary16 bits of \p V rounded to nearest, ties to even; a value
/// past the largest finite (65504) rounds to infinity as IEEE says (no
/// saturation); a NaN gives a quiet NaN of the same sign.
uint16_t f16FromDouble(double V);
/// bfloat16 bits of \p V, rounded as f16FromDouble (one rounding, from the
/// double itself).
uint16_t bf16FromDouble(double V);
/// bfloat16 bits of \p V, rounded to nearest, ties to even.
uint16_t bf16FromFloat(float V);
/// The value of IEEE binary16 bits (exact).
double f16ToDouble(uint16_t Bits);
/// The value of bfloat16 bits (exact).
double bf16ToDouble(uint16_t Bits);

} // namespace gridjit

#endif // GRIDJIT_SUPPORT_HALFFLOAT_H
