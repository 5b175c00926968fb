//===- CacheKeyTest.cpp - What the cache key depends on, and what not -----===//
//
// Part of gridjit. The same module written with other spacing, comments or
// number spellings has the same key for a target whose artifacts do not
// embed source positions (nvptx); for one that does (the host target), the
// buffer name and the exact text are part of the key too. A change of the
// module, target, architecture, opt level, any version component or the
// lowering registry gives another key.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Cache/CacheKey.h"
#include "Cache/CacheTestUtil.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/IR/Printer.h"
#include "gridjit/Parse/Parser.h"

#include "gtest/gtest.h"

#include <set>

using namespace gridjit;
using namespace gridjit::test;

namespace {

/// The saxpy kernel, respaced, commented, with redundant parentheses.
const char *SaxpyRespelled = "// the same kernel\n"
                             "kernel   saxpy( n : i32,a: f32,\n"
                             "   x: ptr<f32>, y: ptr<f32>)\n"
                             "{ let i: i32 = (block_idx.x * block_dim.x) + thread_idx.x; // index\n"
                             "  if (i < n) {\n"
                             "    y[i] = (a * x[i]) + y[i];\n"
                             "  }\n"
                             "}";

CacheKey keyOf(Compiler &C, const std::string &Text, CompileRequest Req = {}) {
  auto K = C.computeKey(Text, "t.kir", Req);
  if (!K) {
    ADD_FAILURE() << llvm::toString(K.takeError());
    return {};
  }
  return *K;
}

TEST(CacheKeyTest, SpacingCommentsAndParenthesesDoNotMatter) {
  auto C = makeCompiler("");
  ASSERT_TRUE(C);
  EXPECT_EQ(keyOf(*C, SaxpySource), keyOf(*C, SaxpyRespelled));
  // ... and the compiled module is the same object: the second is a hit.
  CompileInfo I1, I2;
  auto A = C->compile(SaxpySource, "a.kir", {}, &I1);
  ASSERT_TRUE(succeeded(A));
  auto B = C->compile(SaxpyRespelled, "b.kir", {}, &I2);
  ASSERT_TRUE(succeeded(B));
  EXPECT_EQ(I1.Outcome, CacheOutcome::Compiled);
  EXPECT_EQ(I2.Outcome, CacheOutcome::MemoryHit);
  EXPECT_EQ(A->get(), B->get());
  EXPECT_EQ(C->getStats().Compiles, 1u);
}

TEST(CacheKeyTest, BufferNameDoesNotMatterForNVPTX) {
  auto C = makeCompiler(""); // nvptx
  ASSERT_TRUE(C);
  auto A = C->computeKey(SaxpySource, "one.kir");
  auto B = C->computeKey(SaxpySource, "two.kir");
  ASSERT_TRUE(A && B);
  EXPECT_EQ(*A, *B);
}

/// A kernel with a sync site (hostabi::SyncSite: name, line, column, the
/// source line) in every host artifact, as three spellings of one module:
/// the same lines, another sync line (moved down by a comment line), and
/// the sync line respaced (the same line, another column and source line).
const char *SyncKernel = "kernel k(out: ptr<i32>) {\n"
                         "  if thread_idx.x < 3 {\n"
                         "    sync_threads();\n"
                         "  }\n"
                         "}\n";
const char *SyncKernelMoved = "// a comment line\n"
                              "kernel k(out: ptr<i32>) {\n"
                              "  if thread_idx.x < 3 {\n"
                              "    sync_threads();\n"
                              "  }\n"
                              "}\n";
const char *SyncKernelRespaced = "kernel k(out: ptr<i32>) {\n"
                                 "  if thread_idx.x < 3 {\n"
                                 "     sync_threads();\n"
                                 "  }\n"
                                 "}\n";

/// A Compiler (no disk cache) of the host target, or null with the reason
/// in \p Why when this machine has none.
std::unique_ptr<Compiler> hostCompiler(std::string &Why) {
  auto Host = hostTarget(&Why);
  return Host ? makeCompiler("", nullptr, {Host}) : nullptr;
}

TEST(CacheKeyTest, NVPTXIgnoresSourcePositions) {
  // PTX names no file, line or column, so a respelled module under another
  // name reuses the artifact: getSourceIdentity is empty, and no record is
  // added (the golden key of EncodingIsStable still holds).
  auto C = makeCompiler("");
  ASSERT_TRUE(C);
  EXPECT_FALSE(C->getTarget("")->embedsSourcePositions());
  auto A = C->computeKey(SyncKernel, "a.kir");
  auto B = C->computeKey(SyncKernelMoved, "b.kir");
  auto R = C->computeKey(SyncKernelRespaced, "a.kir");
  ASSERT_TRUE(A && B && R);
  EXPECT_EQ(*A, *B);
  EXPECT_EQ(*A, *R);
}

TEST(CacheKeyTest, HostKeyCoversNameAndText) {
  std::string Why;
  auto C = hostCompiler(Why);
  if (!C)
    GTEST_SKIP() << "no host target: " << Why;
  EXPECT_TRUE(C->getTarget("")->embedsSourcePositions());
  CompileRequest Checked;
  Checked.Check = true;
  // The same for unchecked code and for the checked twin (whose
  // kernel-checker sites also hold positions).
  for (const CompileRequest &Req : {CompileRequest(), Checked}) {
    std::set<std::string> Keys;
    auto Add = [&](const char *Text, const char *Name) {
      auto K = C->computeKey(Text, Name, Req);
      if (!K) {
        ADD_FAILURE() << llvm::toString(K.takeError());
        return std::string();
      }
      return K->hex();
    };
    std::string Same = Add(SyncKernel, "a.kir");
    EXPECT_EQ(Same, Add(SyncKernel, "a.kir")) << "same text, same name";
    EXPECT_TRUE(Keys.insert(Same).second);
    EXPECT_TRUE(Keys.insert(Add(SyncKernel, "b.kir")).second) << "another name";
    EXPECT_TRUE(Keys.insert(Add(SyncKernelMoved, "a.kir")).second) << "moved lines";
    EXPECT_TRUE(Keys.insert(Add(SyncKernelRespaced, "a.kir")).second) << "respaced line";
    // A name and a text do not run together.
    EXPECT_TRUE(Keys.insert(Add(SyncKernel, "a.kirk")).second) << "name boundary";
  }
}

TEST(CacheKeyTest, HostRespelledTextCompilesItsOwnPositions) {
  // Through the Compiler's text memo and memory cache: another name or
  // moved lines compile anew, and the artifacts differ (their sync sites
  // name different positions); the same name and text is a memory hit.
  std::string Why;
  auto C = hostCompiler(Why);
  if (!C)
    GTEST_SKIP() << "no host target: " << Why;
  auto Compile = [&](const char *Text, const char *Name, CacheOutcome Want) {
    CompileInfo I;
    auto M = C->compile(Text, Name, {}, &I);
    if (!M) {
      ADD_FAILURE() << llvm::toString(M.takeError());
      return CompiledModuleRef();
    }
    EXPECT_EQ(I.Outcome, Want) << Name << ":\n" << Text;
    return std::move(*M);
  };
  CompiledModuleRef A = Compile(SyncKernel, "a.kir", CacheOutcome::Compiled);
  CompiledModuleRef B = Compile(SyncKernel, "b.kir", CacheOutcome::Compiled);
  CompiledModuleRef Moved = Compile(SyncKernelMoved, "a.kir", CacheOutcome::Compiled);
  CompiledModuleRef Again = Compile(SyncKernel, "a.kir", CacheOutcome::MemoryHit);
  ASSERT_TRUE(A && B && Moved && Again);
  EXPECT_EQ(A.get(), Again.get());
  EXPECT_TRUE(A->Art.Payload != B->Art.Payload) << "the same object for a.kir and b.kir";
  EXPECT_TRUE(A->Art.Payload != Moved->Art.Payload) << "the same object for moved lines";
  EXPECT_EQ(C->getStats().Compiles, 3u);
}

TEST(CacheKeyTest, SourceIdentity) {
  auto M = parseModule(SyncKernel, "a.kir");
  ASSERT_TRUE(succeeded(M));
  EXPECT_EQ(getSourceIdentity(*nvptxTarget(), **M), "");
  EXPECT_EQ(makeCacheKeyInputs(*nvptxTarget(), {}, **M).SourceIdentity, "");
  std::string Why;
  auto Host = hostTarget(&Why);
  if (!Host)
    GTEST_SKIP() << "no host target: " << Why;
  auto IdOf = [&](const char *Text, const char *Name) -> std::string {
    auto P = parseModule(Text, Name);
    if (!succeeded(P))
      return "(parse failed)";
    return getSourceIdentity(*Host, **P);
  };
  std::string Id = getSourceIdentity(*Host, **M);
  EXPECT_EQ(Id.size(), 64u);
  EXPECT_EQ(Id, IdOf(SyncKernel, "a.kir"));
  EXPECT_NE(Id, IdOf(SyncKernel, "b.kir"));
  EXPECT_NE(Id, IdOf(SyncKernelMoved, "a.kir"));
  CacheKeyInputs In = makeCacheKeyInputs(*Host, {}, **M);
  EXPECT_EQ(In.SourceIdentity, Id);
  EXPECT_EQ(In.CanonicalModule, printModule(**M));
}

TEST(CacheKeyTest, ModuleChangesMiss) {
  auto C = makeCompiler("");
  ASSERT_TRUE(C);
  std::string Base = SaxpySource;
  std::set<std::string> Keys;
  Keys.insert(keyOf(*C, Base).hex());
  auto Variant = [&](std::string From, std::string To) {
    std::string T = Base;
    size_t Pos = T.find(From);
    ASSERT_NE(Pos, std::string::npos) << From;
    T.replace(Pos, From.size(), To);
    EXPECT_TRUE(Keys.insert(keyOf(*C, T).hex()).second)
        << "same key after " << From << " -> " << To;
  };
  Variant("saxpy", "saxpy2");              // a name
  Variant("a * x[i]", "a * x[i + 1]");     // an expression
  Variant("i < n", "i <= n");              // an operator
  Variant("thread_idx.x", "thread_idx.y"); // a builtin field
}

TEST(CacheKeyTest, TargetArchOptLevelAndRegistryMiss) {
  auto Sm80 = nvptxTarget();
  NVPTXTargetOptions O90;
  O90.Arch = "sm_90";
  auto Sm90 = createNVPTXTarget(O90);
  ASSERT_TRUE(succeeded(Sm90));
  NVPTXTargetOptions OOmit;
  OOmit.OmitLowerings = {Op::BuiltinPopc};
  auto Omit = createNVPTXTarget(OOmit);
  ASSERT_TRUE(succeeded(Omit));

  std::set<std::string> Keys;
  auto Add = [&](std::shared_ptr<const Target> T, unsigned Opt, const char *What) {
    auto C = makeCompiler("", nullptr, {T});
    ASSERT_TRUE(C);
    CompileRequest R;
    R.OptLevel = Opt;
    EXPECT_TRUE(Keys.insert(keyOf(*C, SaxpySource, R).hex()).second) << What;
  };
  for (unsigned Opt = 0; Opt <= 3; ++Opt)
    Add(Sm80, Opt, "opt level");
  Add(std::shared_ptr<const Target>(std::move(*Sm90)), 3, "sm_90");
  // A registry without one lowering (an op saxpy does not even use).
  Add(std::shared_ptr<const Target>(std::move(*Omit)), 3, "registry");
  std::string Why;
  if (auto Host = hostTarget(&Why))
    Add(Host, 3, "host target");
}

TEST(CacheKeyTest, EveryComponentChangesTheKey) {
  CacheKeyInputs Base;
  Base.GridjitVersion = "0.1.0";
  Base.GridjitBuild = "abc";
  Base.LLVMVersion = "19.1.7";
  Base.TargetName = "nvptx";
  Base.Arch = "sm_80";
  Base.TargetFingerprint = "tf";
  Base.RegistryFingerprint = "rf";
  Base.Options = "opt=3;";
  Base.CanonicalModule = "kernel k() {\n}\n";
  std::set<std::string> Keys{computeCacheKey(Base).hex()};
  auto Change = [&](auto Field, const char *What) {
    CacheKeyInputs In = Base;
    Field(In);
    EXPECT_TRUE(Keys.insert(computeCacheKey(In).hex()).second) << What;
  };
  Change([](CacheKeyInputs &I) { I.FormatVersion++; }, "format version");
  Change([](CacheKeyInputs &I) { I.GridjitVersion = "0.1.1"; }, "gridjit version");
  Change([](CacheKeyInputs &I) { I.GridjitBuild = "abd"; }, "gridjit build");
  Change([](CacheKeyInputs &I) { I.LLVMVersion = "19.1.8"; }, "LLVM version");
  Change([](CacheKeyInputs &I) { I.TargetName = "host"; }, "target");
  Change([](CacheKeyInputs &I) { I.Arch = "sm_90"; }, "arch");
  Change([](CacheKeyInputs &I) { I.TargetFingerprint = "tg"; }, "target fingerprint");
  Change([](CacheKeyInputs &I) { I.RegistryFingerprint = "rg"; }, "registry");
  Change([](CacheKeyInputs &I) { I.Options = "opt=2;"; }, "options");
  Change([](CacheKeyInputs &I) { I.CanonicalModule += " "; }, "module");
  Change([](CacheKeyInputs &I) { I.SourceIdentity = "s"; }, "source");
  // Fields do not run together: moving a byte from one to the next differs.
  Change(
      [](CacheKeyInputs &I) {
        I.TargetName = "nvpt";
        I.Arch = "xsm_80";
      },
      "field boundary");
}

TEST(CacheKeyTest, EncodingIsStable) {
  // The key of fixed inputs. If this changes, the key's encoding changed:
  // bump CacheFormatVersion (and update this value).
  CacheKeyInputs In;
  In.FormatVersion = 1;
  In.GridjitVersion = "0.1.0";
  In.GridjitBuild = "";
  In.LLVMVersion = "19.1.7";
  In.TargetName = "nvptx";
  In.Arch = "sm_80";
  In.TargetFingerprint = "f";
  In.RegistryFingerprint = "r";
  In.Options = "opt=3;";
  In.CanonicalModule = "kernel k() {\n}\n";
  EXPECT_EQ(computeCacheKey(In).hex(),
            "b045e5f46471ecff4c496fe83f25456203cd19d941f276a723e912c61d99f410");
  // A target that embeds source positions adds the "source" record last
  // (an empty SourceIdentity adds none: the key above).
  In.TargetName = "host";
  In.Arch = "znver3";
  In.SourceIdentity = std::string(64, 'a');
  EXPECT_EQ(computeCacheKey(In).hex(),
            "de25dc7147fb4253b75381e1d80ff7f0e94b6309d017ffef4483aef0a78ee744");
}

TEST(CacheKeyTest, CurrentBuildComponents) {
  EXPECT_FALSE(getGridjitVersion().empty());
  EXPECT_EQ(getLLVMVersion().substr(0, 3), "19.");
  // Linux toolchains put a GNU build id in every binary by default.
  EXPECT_GE(getGridjitBuildId().size(), 16u);
  CompileOptions O;
  O.OptLevel = 2;
  EXPECT_EQ(encodeCompileOptions(O), "opt=2;");
}

TEST(CacheKeyTest, HexRoundTrip) {
  CacheKey K;
  for (unsigned I = 0; I < 32; ++I)
    K.Bytes[I] = static_cast<uint8_t>(I * 37);
  CacheKey Back;
  ASSERT_TRUE(CacheKey::fromHex(K.hex(), Back));
  EXPECT_EQ(K, Back);
  EXPECT_FALSE(CacheKey::fromHex("abc", Back));
  EXPECT_FALSE(CacheKey::fromHex(std::string(64, 'G'), Back));
  EXPECT_FALSE(CacheKey::fromHex(std::string(64, 'A'), Back)); // lower case only
}

} // namespace
