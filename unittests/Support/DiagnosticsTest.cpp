//===- DiagnosticsTest.cpp - Rendering of located errors ------------------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/Diagnostics.h"
#include "gridjit/IR/Type.h"

#include "llvm/Support/raw_ostream.h"

#include "TestSupport.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;

TEST(DiagnosticsTest, NoErrorIsSuccess) {
  DiagnosticEngine D("a.kir", "kernel k() {}\n");
  EXPECT_FALSE(D.hasErrors());
  llvm::Error E = D.takeError();
  EXPECT_TRUE(succeeded(std::move(E)));
}

TEST(DiagnosticsTest, RendersLineColumnSourceAndCaret) {
  DiagnosticEngine D("a.kir", "kernel k() {\n  let x: i32 = y;\n}\n");
  D.error({2, 16}, "use of undeclared name 'y'");
  ASSERT_TRUE(D.hasErrors());
  EXPECT_EQ(errorText(D.takeError()), "a.kir:2:16: error: use of undeclared name 'y'\n"
                                      "  let x: i32 = y;\n"
                                      "               ^\n");
}

TEST(DiagnosticsTest, KeepsEveryErrorInOrder) {
  DiagnosticEngine D("m", "ab\ncd\n");
  D.error({2, 1}, "second");
  D.error({1, 2}, "first");
  llvm::Error E = D.takeError();
  ASSERT_TRUE(E.isA<DiagnosticError>());
  std::string Text = errorText(std::move(E));
  EXPECT_LT(Text.find("m:2:1: error: second"), Text.find("m:1:2: error: first"));
}

TEST(DiagnosticsTest, WithoutSourceOrLocationStillNamesTheBuffer) {
  DiagnosticEngine D("built", "");
  D.error({3, 4}, "bad thing");
  D.error({}, "no place");
  EXPECT_EQ(errorText(D.takeError()), "built:3:4: error: bad thing\nbuilt: error: no place\n");
}

TEST(DiagnosticsTest, StopsCollectingAfterTheLimit) {
  DiagnosticEngine D("m", "x\n");
  for (unsigned I = 0; I < DiagnosticEngine::MaxErrors + 10; ++I)
    D.error({1, 1}, "e");
  EXPECT_EQ(D.getNumErrors(), DiagnosticEngine::MaxErrors + 10);
  EXPECT_EQ(D.getDiagnostics().size(), DiagnosticEngine::MaxErrors);
  EXPECT_THAT(errorText(D.takeError()), HasSubstr("too many errors"));
}

TEST(TypeTest, SpellingsAndEquality) {
  EXPECT_EQ(Type::getScalar(ScalarKind::I32).str(), "i32");
  EXPECT_EQ(Type::getPointer(ScalarKind::F32).str(), "ptr<f32>");
  EXPECT_EQ(Type::getPointer(ScalarKind::F32, AddrSpace::Shared).str(), "ptr<f32, shared>");
  EXPECT_EQ(Type::getPointer(ScalarKind::U8, AddrSpace::Local).str(), "ptr<u8, local>");
  EXPECT_EQ(Type::getArray(ScalarKind::F64, 16).str(), "[f64; 16]");
  EXPECT_EQ(Type::getArray(ScalarKind::F64, 0).str(), "[f64]");
  // A multi-dimensional array spells its innermost dimension first.
  Type Row = Type::getArray(ScalarKind::F32, 17);
  Type Tile = Type::getArrayOf(Row, 16);
  const uint64_t Dims[] = {16, 17};
  EXPECT_EQ(Tile.str(), "[[f32; 17]; 16]");
  EXPECT_EQ(Tile, Type::getArray(ScalarKind::F32, Dims));
  EXPECT_NE(Tile, Type::getArrayOf(Type::getArray(ScalarKind::F32, 16), 17));
  EXPECT_NE(Tile, Type::getArray(ScalarKind::F32, 16));
  EXPECT_NE(Tile, Tile.withArrayAddrSpace(AddrSpace::Shared));
  EXPECT_EQ(Type::getArrayOf(Tile, 2).str(), "[[[f32; 17]; 16]; 2]");
  EXPECT_EQ(Type::getArrayOf(Tile, 2).getArrayElementType(), Tile);
  EXPECT_EQ(Type::getPointer(ScalarKind::F32), Type::getPointer(ScalarKind::F32));
  EXPECT_NE(Type::getPointer(ScalarKind::F32),
            Type::getPointer(ScalarKind::F32, AddrSpace::Shared));
  EXPECT_NE(Type::getScalar(ScalarKind::I32), Type::getScalar(ScalarKind::U32));
  EXPECT_FALSE(Type().isValid());
}

TEST(TypeTest, ScalarProperties) {
  for (const char *Name :
       {"bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64"}) {
    auto K = scalarFromName(Name);
    ASSERT_TRUE(K.has_value()) << Name;
    EXPECT_EQ(scalarName(*K), Name);
  }
  EXPECT_FALSE(scalarFromName("i128").has_value());
  EXPECT_TRUE(Type::getScalar(ScalarKind::I8).isSignedInteger());
  EXPECT_TRUE(Type::getScalar(ScalarKind::U64).isUnsignedInteger());
  EXPECT_FALSE(Type::getScalar(ScalarKind::Bool).isInteger());
  EXPECT_TRUE(Type::getScalar(ScalarKind::F32).isFloat());
  EXPECT_EQ(Type::getScalar(ScalarKind::U16).getBits(), 16u);
}

// The one definition of a value's size in memory (frames, shared layouts,
// parameters, jit-run's buffers all use it): bool is a byte, pointers are
// 8, arrays are their elements.
TEST(TypeTest, BytesInMemory) {
  const std::pair<const char *, unsigned> Bytes[] = {
      {"bool", 1}, {"i8", 1},  {"u8", 1},  {"i16", 2}, {"u16", 2}, {"i32", 4},
      {"u32", 4},  {"f32", 4}, {"i64", 8}, {"u64", 8}, {"f64", 8}};
  for (auto [Name, N] : Bytes) {
    ScalarKind K = *scalarFromName(Name);
    EXPECT_EQ(scalarBytes(K), N) << Name;
    EXPECT_EQ(Type::getScalar(K).getSizeInBytes(), N) << Name;
    EXPECT_EQ(Type::getScalar(K).getElementBytes(), N) << Name;
    EXPECT_EQ(Type::getPointer(K).getSizeInBytes(), 8u) << Name;
    EXPECT_EQ(Type::getPointer(K, AddrSpace::Shared).getElementBytes(), N) << Name;
    EXPECT_EQ(Type::getArray(K, 3).getSizeInBytes(), 3u * N) << Name;
    EXPECT_EQ(Type::getArray(K, 3).getElementBytes(), N) << Name;
  }
  EXPECT_EQ(Type::getArray(ScalarKind::F32, 0).getSizeInBytes(), 0u); // sized by the launch
  // Every element of every dimension: 16 rows of 17 f64.
  Type Tile = Type::getArrayOf(Type::getArray(ScalarKind::F64, 17), 16);
  EXPECT_EQ(Tile.getArrayElementCount(), 272u);
  EXPECT_EQ(Tile.getSizeInBytes(), 272u * 8);
  EXPECT_EQ(Tile.getArrayCount(), 16u);
  EXPECT_EQ(Type::getScalar(ScalarKind::F64).getArrayRank(), 0u);
  EXPECT_EQ(Type::getVoid().getSizeInBytes(), 0u);
  EXPECT_EQ(Type().getSizeInBytes(), 0u);
}

} // namespace
