//===- CudaSpellingsTest.cpp - The CUDA spellings table stays true --------===//
//
// Part of gridjit. Every row of include/gridjit/IR/CudaSpellings.def that
// names a KIR spelling names one that exists (a builtin, a scalar type or
// a keyword), so a renamed builtin cannot leave a hint that sends users to
// a name KIR does not have; no CUDA spelling is itself KIR; and the lookup
// finds every row and nothing else.
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/Builtins.h"
#include "gridjit/IR/Type.h"

#include "gtest/gtest.h"

#include <string>
#include <utility>
#include <vector>

using namespace gridjit;

namespace {

struct Row {
  const char *Cuda, *Kir, *Note;
};

const std::vector<Row> &rows() {
  static const std::vector<Row> R = {
#define CUDA_NAME(Cuda, Kir) {#Cuda, Kir, nullptr},
#define CUDA_NOTE(Cuda, Note) {#Cuda, nullptr, Note},
#include "gridjit/IR/CudaSpellings.def"
  };
  return R;
}

bool isKir(std::string_view Name) {
  return lookupBuiltinValue(Name) != BuiltinValue::None ||
         lookupBuiltinFunc(Name) != BuiltinFunc::None || scalarFromName(Name).has_value() ||
         Name == "kernel" || Name == "fn";
}

TEST(CudaSpellingsTest, EveryHintNamesWhatKIRHas) {
  ASSERT_GT(rows().size(), 50u);
  for (const Row &R : rows()) {
    SCOPED_TRACE(R.Cuda);
    EXPECT_FALSE(isKir(R.Cuda));
    std::optional<CudaSpelling> S = lookupCudaSpelling(R.Cuda);
    ASSERT_TRUE(S.has_value());
    if (R.Kir) {
      EXPECT_TRUE(isKir(R.Kir));
      EXPECT_EQ(S->hint(), std::string("did you mean '") + R.Kir + "'?");
      EXPECT_EQ(cudaSpellingHint(R.Cuda), std::string("; did you mean '") + R.Kir + "'?");
    } else {
      EXPECT_EQ(S->hint(), R.Note);
    }
  }
}

TEST(CudaSpellingsTest, OtherNamesHaveNoHint) {
  for (const char *Name : {"thread_idx", "sync_threads", "f32", "threadIndex", "", "x"}) {
    EXPECT_FALSE(lookupCudaSpelling(Name).has_value()) << Name;
    EXPECT_EQ(cudaSpellingHint(Name), "") << Name;
  }
}

} // namespace
