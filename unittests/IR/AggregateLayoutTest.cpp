//===- AggregateLayoutTest.cpp - Struct and vector layouts ----------------===//
//
// Part of gridjit. A struct's layout (Aggregate::layOut, what the runtime
// and the docs promise: C's) is the one LLVM gives the struct the
// lowering makes, under both targets' data layouts, field by field; and
// it is C's on known structs.
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/AST.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Sema/Verifier.h"

#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/LLVMContext.h"

#include "TestSupport.h"

#include "gtest/gtest.h"

using namespace gridjit;

namespace {

// The LLVM type the lowering makes (LoweringContext::toLLVM), rebuilt
// here without a target: scalars, vectors, structs of them.
llvm::Type *llvmType(llvm::LLVMContext &C, const Type &T) {
  if (const Aggregate *A = T.getAggregate()) {
    if (A->IsVector)
      return llvm::FixedVectorType::get(llvmType(C, A->Fields[0].Ty), A->Fields.size());
    std::vector<llvm::Type *> Fields;
    for (const AggregateField &F : A->Fields)
      Fields.push_back(llvmType(C, F.Ty));
    return llvm::StructType::get(C, Fields);
  }
  switch (T.getScalarKind()) {
  case ScalarKind::F32:
    return llvm::Type::getFloatTy(C);
  case ScalarKind::F64:
    return llvm::Type::getDoubleTy(C);
  case ScalarKind::F16:
    return llvm::Type::getHalfTy(C);
  case ScalarKind::BF16:
    return llvm::Type::getBFloatTy(C);
  default:
    return llvm::Type::getIntNTy(C, scalarBits(T.getScalarKind()));
  }
}

constexpr const char *Source = R"(
struct Node { key: u32, value: f32 }
struct Mixed { a: u8, b: f64, c: u16, d: i32, e: u8 }
struct Outer { m: Mixed, tag: i16 }
struct WithVec { a: f32, v: f32x4, b: u8 }
struct Pairs { a: u8, p: f32x2, q: i64x2, h: f16, r: bf16 }
struct Small { a: u8, b: u16, c: u8 }
kernel k(p: ptr<Node>) { }
)";

struct Expected {
  const char *Name;
  uint64_t Size, Align;
  std::vector<uint64_t> Offsets;
};

TEST(AggregateLayoutTest, IsCAndLLVMsOnBothTargets) {
  auto M = parseModule(Source, "layout.kir");
  ASSERT_TRUE(test::succeeded(M));
  ASSERT_TRUE(test::succeeded(verifyModule(**M)));
  // What gcc and clang give the same C structs (float4 as CUDA's, aligned
  // 16; float2 aligned 8).
  const Expected Want[] = {
      {"Node", 8, 4, {0, 4}},
      {"Mixed", 32, 8, {0, 8, 16, 20, 24}},
      {"Outer", 40, 8, {0, 32}},
      {"WithVec", 48, 16, {0, 16, 32}},
      {"Pairs", 48, 16, {0, 8, 16, 32, 34}},
      {"Small", 6, 2, {0, 2, 4}},
  };
  llvm::LLVMContext C;
  // x86-64 (the host target) and NVPTX64's data layouts.
  llvm::DataLayout Layouts[] = {
      llvm::DataLayout("e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:"
                       "64-S128"),
      llvm::DataLayout("e-i64:64-i128:128-v16:16-v32:32-n16:32:64")};
  unsigned Seen = 0;
  for (const auto &D : (*M)->Decls) {
    const auto *S = llvm::dyn_cast<StructDecl>(D.get());
    if (!S)
      continue;
    const Aggregate &A = S->Agg;
    const Expected &W = Want[Seen++];
    ASSERT_EQ(A.Name, W.Name);
    EXPECT_EQ(A.Size, W.Size) << A.Name;
    EXPECT_EQ(A.Align, W.Align) << A.Name;
    ASSERT_EQ(A.Fields.size(), W.Offsets.size()) << A.Name;
    auto *ST = llvm::cast<llvm::StructType>(llvmType(C, Type::getStruct(&A)));
    for (const llvm::DataLayout &DL : Layouts) {
      const llvm::StructLayout *L = DL.getStructLayout(ST);
      EXPECT_EQ(DL.getTypeAllocSize(ST), A.Size) << A.Name;
      EXPECT_EQ(DL.getABITypeAlign(ST).value(), A.Align) << A.Name;
      for (unsigned I = 0; I < A.Fields.size(); ++I) {
        EXPECT_EQ(A.Fields[I].Offset, W.Offsets[I]) << A.Name << "." << A.Fields[I].Name;
        EXPECT_EQ(L->getElementOffset(I), A.Fields[I].Offset) << A.Name << "." << A.Fields[I].Name;
      }
    }
  }
  EXPECT_EQ(Seen, std::size(Want));
}

TEST(AggregateLayoutTest, VectorTypesAreAlignedToTheirSize) {
  const std::pair<const char *, uint64_t> Want[] = {{"f32x2", 8},  {"f32x4", 16}, {"i32x2", 8},
                                                    {"i32x4", 16}, {"u32x2", 8},  {"u32x4", 16},
                                                    {"f64x2", 16}, {"i64x2", 16}, {"u64x2", 16}};
  for (auto [Name, Bytes] : Want) {
    const Aggregate *A = lookupVectorType(Name);
    ASSERT_NE(A, nullptr) << Name;
    EXPECT_TRUE(A->IsVector);
    EXPECT_EQ(A->Size, Bytes) << Name;
    EXPECT_EQ(A->Align, Bytes) << Name;
    EXPECT_EQ(Type::getStruct(A).str(), Name);
  }
  EXPECT_EQ(lookupVectorType("f32x3"), nullptr);
  EXPECT_EQ(lookupVectorType("f64x4"), nullptr);
}

} // namespace
