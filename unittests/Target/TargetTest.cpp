//===- TargetTest.cpp - Target kinds, names and the facade ----------------===//
//
// Part of gridjit. Every target has one kind and one name, used the same
// way by the library, the cache and the runtime; the public Target reaches
// its code-generation side only through CodegenTarget. (Cache entries that
// name an unknown target: CacheEntryTest.)
//
//===----------------------------------------------------------------------===//

#include "gridjit/Target/Target.h"
#include "gridjit/Target/CodegenTarget.h"

#include "TestSupport.h"

#include "gtest/gtest.h"

using namespace gridjit;

namespace {

TEST(TargetTest, KindsAndNamesRoundTrip) {
  for (TargetKind K : {TargetKind::NVPTX, TargetKind::Host}) {
    std::optional<TargetKind> Back = parseTargetName(getTargetName(K));
    ASSERT_TRUE(Back.has_value()) << getTargetName(K);
    EXPECT_EQ(*Back, K);
  }
  EXPECT_EQ(getTargetName(TargetKind::NVPTX), "nvptx");
  EXPECT_EQ(getTargetName(TargetKind::Host), "host");
  // `cuda` is jit-run's spelling, not a library name.
  EXPECT_FALSE(parseTargetName("cuda").has_value());
  EXPECT_FALSE(parseTargetName("").has_value());
}

TEST(TargetTest, CreateTargetByName) {
  auto N = createTargetByName("nvptx", "sm_90");
  ASSERT_TRUE(static_cast<bool>(N)) << test::errorText(N.takeError());
  EXPECT_EQ((*N)->getKind(), TargetKind::NVPTX);
  EXPECT_EQ((*N)->getName(), "nvptx");
  EXPECT_EQ((*N)->getArch(), "sm_90");
  EXPECT_EQ((*N)->getPayloadKind(), EmitKind::Assembly);
  EXPECT_EQ((*N)->getRegistryFingerprint(), CodegenTarget::get(**N).getRegistry().fingerprint());
  EXPECT_EQ(CodegenTarget::get(**N).getRegistry().getTargetName(), "nvptx");

  auto H = createTargetByName("host");
  ASSERT_TRUE(static_cast<bool>(H)) << test::errorText(H.takeError());
  EXPECT_EQ((*H)->getKind(), TargetKind::Host);
  EXPECT_EQ((*H)->getPayloadKind(), EmitKind::Object);

  auto C = createTargetByName("cuda");
  ASSERT_FALSE(static_cast<bool>(C));
  EXPECT_EQ(test::errorText(C.takeError()), "unknown target 'cuda' (known: host, nvptx)");
}

} // namespace
