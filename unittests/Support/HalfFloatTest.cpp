//===- HalfFloatTest.cpp - f16/bf16 conversions against APFloat -----------===//
//
// Part of gridjit. include/gridjit/Support/HalfFloat.h: every f16 and bf16
// value widens exactly, and doubles at the formats' edges (ties, the
// subnormal range, the overflow threshold) and spread over the whole range
// round as LLVM's APFloat rounds them, to nearest even.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/HalfFloat.h"

#include "llvm/ADT/APFloat.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace gridjit;

namespace {

uint16_t reference(double V, const llvm::fltSemantics &Sem) {
  llvm::APFloat F(V);
  bool LosesInfo;
  F.convert(Sem, llvm::APFloat::rmNearestTiesToEven, &LosesInfo);
  return uint16_t(F.bitcastToAPInt().getZExtValue());
}

double widened(uint16_t Bits, const llvm::fltSemantics &Sem) {
  llvm::APFloat F(Sem, llvm::APInt(16, Bits));
  bool LosesInfo;
  F.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &LosesInfo);
  return F.convertToDouble();
}

bool sameBits(double A, double B) { return std::memcmp(&A, &B, sizeof A) == 0; }

TEST(HalfFloatTest, EveryValueWidensExactly) {
  for (uint32_t B = 0; B <= 0xFFFF; ++B) {
    double F = f16ToDouble(uint16_t(B)), BF = bf16ToDouble(uint16_t(B));
    if (std::isnan(F))
      EXPECT_TRUE(std::isnan(widened(uint16_t(B), llvm::APFloat::IEEEhalf()))) << B;
    else
      EXPECT_TRUE(sameBits(F, widened(uint16_t(B), llvm::APFloat::IEEEhalf()))) << B;
    if (std::isnan(BF))
      EXPECT_TRUE(std::isnan(widened(uint16_t(B), llvm::APFloat::BFloat()))) << B;
    else
      EXPECT_TRUE(sameBits(BF, widened(uint16_t(B), llvm::APFloat::BFloat()))) << B;
  }
}

TEST(HalfFloatTest, RoundsAsAPFloat) {
  std::vector<double> Values = {0.0,
                                -0.0,
                                1.0,
                                65504.0,
                                65519.99,
                                65520.0,
                                0x1p-24,
                                0x1p-25,
                                0x1.8p-25,
                                0x1p-26,
                                0x1.ffcp-15,
                                0x1.fep127,
                                0x1.ff7fffffffffp127,
                                0x1.ff8p127,
                                0x1p-133,
                                0x1p-134,
                                0x1.0000000000001p-134,
                                1 + 0x1p-8,
                                1 + 0x3p-8,
                                1 + 0x1p-11,
                                1 + 0x3p-11,
                                1e-320,
                                INFINITY,
                                -INFINITY,
                                1e308};
  // Every value a tie or one ulp of f64 around a tie, in both formats.
  for (uint32_t B = 0; B < 0x7C00; B += 7)
    for (double Half : {f16ToDouble(uint16_t(B)), bf16ToDouble(uint16_t(B))}) {
      double Next = std::nextafter(Half, INFINITY);
      Values.push_back(Half);
      Values.push_back(Next);
    }
  std::mt19937_64 Rng(22);
  for (int I = 0; I < 20000; ++I) {
    uint64_t Bits = Rng();
    double D;
    std::memcpy(&D, &Bits, sizeof D);
    Values.push_back(D);
  }
  for (double V : Values) {
    for (double S : {V, -V}) {
      if (std::isnan(S))
        continue;
      EXPECT_EQ(f16FromDouble(S), reference(S, llvm::APFloat::IEEEhalf())) << S;
      EXPECT_EQ(bf16FromDouble(S), reference(S, llvm::APFloat::BFloat())) << S;
      EXPECT_EQ(bf16FromFloat(float(S)), reference(double(float(S)), llvm::APFloat::BFloat())) << S;
    }
  }
}

TEST(HalfFloatTest, NaNStaysNaN) {
  EXPECT_EQ(f16FromDouble(NAN) & 0x7E00, 0x7E00);
  EXPECT_EQ(bf16FromDouble(-NAN), 0xFFC0);
  EXPECT_TRUE(std::isnan(f16ToDouble(0x7C01)));
  EXPECT_EQ(f16FromDouble(70000.0), 0x7C00);
  EXPECT_EQ(bf16FromDouble(-1e39), 0xFF80);
}

} // namespace
