//===- HalfFloat.cpp - f16 and bf16 conversions with integer ops ----------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/HalfFloat.h"

#include <cmath>
#include <cstring>

using namespace gridjit;

namespace {
/// A binary floating-point format of 16 bits: ExpBits + MantBits = 15.
struct Format {
  unsigned ExpBits, MantBits;
  int bias() const { return (1 << (ExpBits - 1)) - 1; }
  uint16_t infinity() const { return uint16_t(((1u << ExpBits) - 1) << MantBits); }
};
constexpr Format F16{5, 10}, BF16{8, 7};

uint16_t fromDouble(double V, Format F) {
  uint64_t Bits;
  std::memcpy(&Bits, &V, sizeof Bits);
  uint16_t Sign = uint16_t((Bits >> 48) & 0x8000);
  unsigned Exp = unsigned((Bits >> 52) & 0x7FF);
  uint64_t Mant = Bits & ((uint64_t(1) << 52) - 1);
  if (Exp == 0x7FF) // infinity, or a NaN made quiet
    return Sign | F.infinity() | (Mant ? uint16_t(1u << (F.MantBits - 1)) : 0);
  if (Exp == 0) // zero, or a double subnormal: far below either format's range
    return Sign;
  int E = int(Exp) - 1023, EMin = 1 - F.bias();
  if (E > F.bias())
    return Sign | F.infinity();
  uint64_t M = Mant | (uint64_t(1) << 52);
  // Normal results keep MantBits bits below the leading one; subnormal ones
  // fewer, one per binade below EMin.
  unsigned Shift = 52 - F.MantBits + unsigned(E < EMin ? EMin - E : 0);
  if (Shift > 53) // below half the smallest subnormal
    return Sign;
  // A normal result's exponent field, less the leading one that M >> Shift
  // adds; a carry out of the fraction (rounding up) moves to the next
  // binade, and past the largest finite to the infinity.
  uint64_t Result = (E >= EMin ? uint64_t(E - EMin) << F.MantBits : 0) + (M >> Shift);
  uint64_t Rest = M & ((uint64_t(1) << Shift) - 1), Half = uint64_t(1) << (Shift - 1);
  if (Rest > Half || (Rest == Half && (Result & 1)))
    ++Result;
  return Sign | uint16_t(Result);
}

double toDouble(uint16_t Bits, Format F) {
  double Sign = (Bits & 0x8000) ? -1.0 : 1.0;
  unsigned Exp = (Bits >> F.MantBits) & ((1u << F.ExpBits) - 1);
  unsigned Mant = Bits & ((1u << F.MantBits) - 1);
  int EMin = 1 - F.bias();
  if (Exp == (1u << F.ExpBits) - 1)
    return Mant ? std::copysign(NAN, Sign) : Sign * INFINITY;
  if (Exp == 0)
    return Sign * std::ldexp(double(Mant), EMin - int(F.MantBits));
  return Sign *
         std::ldexp(double(Mant | (1u << F.MantBits)), int(Exp) - F.bias() - int(F.MantBits));
}
} // namespace

uint16_t gridjit::f16FromDouble(double V) { return fromDouble(V, F16); }
uint16_t gridjit::bf16FromDouble(double V) { return fromDouble(V, BF16); }
uint16_t gridjit::bf16FromFloat(float V) { return fromDouble(double(V), BF16); }
double gridjit::f16ToDouble(uint16_t Bits) { return toDouble(Bits, F16); }
double gridjit::bf16ToDouble(uint16_t Bits) { return toDouble(Bits, BF16); }
