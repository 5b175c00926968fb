//===- DeepInputTest.cpp - The verifier on deep and long modules ----------===//
//
// Part of gridjit. The parser bounds how deep what it reads may nest; a
// module made with the builder API is bounded by the verifier, before any
// recursive pass walks it: a tree deeper than Checker::MaxTreeDepth is an
// error naming its declaration, found without recursion, and one at the
// limit verifies. (test/Sema/deep-chains.test covers chains of 100,000
// declarations, which no nesting limit bounds.)
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "Sema/Checker.h"
#include "gridjit/IR/Builder.h"
#include "gridjit/Sema/Verifier.h"

#include "gtest/gtest.h"

#include <pthread.h>

using namespace gridjit;
using namespace gridjit::kir;
using namespace gridjit::test;

namespace {

/// `kernel k(o: ptr<i32>, x: i32) { o[0] = x + x + ... + x; }`: the
/// assignment's value a chain of \p Adds additions (as high as Adds + 1).
std::unique_ptr<Module> additionChain(unsigned Adds) {
  ModuleBuilder MB("built");
  FunctionBuilder K = MB.kernel("k", {{"o", ptr(i32())}, {"x", i32()}});
  ExprPtr E = name("x");
  for (unsigned I = 0; I < Adds; ++I)
    E = add(std::move(E), name("x"));
  K.assign(index(name("o"), lit(0)), std::move(E));
  return MB.take();
}

// The body is level 1, the assignment 2, the chain's root 3: a chain
// MaxTreeDepth - 3 additions high (its leaves at MaxTreeDepth) is the
// deepest tree allowed.
constexpr unsigned DeepestAllowed = sema::Checker::MaxTreeDepth - 3;

TEST(DeepInputTest, ABuiltTreeAtTheLimitVerifies) {
  std::unique_ptr<Module> M = additionChain(DeepestAllowed);
  EXPECT_TRUE(succeeded(verifyModule(*M)));
  EXPECT_TRUE(M->Verified);
}

TEST(DeepInputTest, ABuiltTreeOneLevelDeeperIsAnError) {
  std::unique_ptr<Module> M = additionChain(DeepestAllowed + 1);
  EXPECT_EQ(errorText(verifyModule(*M)),
            "built: error: malformed module: kernel 'k' nests statements and expressions more "
            "than 2048 levels deep\n");
  EXPECT_FALSE(M->Verified);
}

// 100,000 levels: the verifier's recursive checks (resetting the module,
// typing the expressions) overflowed an 8 MiB stack; the depth check meets
// the tree first. Destroying the tree does not recurse (AST.cpp).
TEST(DeepInputTest, AVeryDeepBuiltTreeIsAnErrorNotACrash) {
  std::unique_ptr<Module> M = additionChain(100000);
  EXPECT_EQ(errorText(verifyModule(*M)),
            "built: error: malformed module: kernel 'k' nests statements and expressions more "
            "than 2048 levels deep\n");
}

TEST(DeepInputTest, AVerifiedModuleMadeTooDeepIsNoLongerVerified) {
  std::unique_ptr<Module> M = additionChain(10);
  ASSERT_TRUE(succeeded(verifyModule(*M)));
  ASSERT_TRUE(M->Verified);
  // Deepen the verified module's only assignment through the builder's
  // handle on its body, then verify again.
  auto *Body = llvm::cast<FunctionDecl>(M->Decls[0].get())->Body.get();
  auto &A = llvm::cast<AssignStmt>(*Body->Body[0]);
  for (unsigned I = 0; I < DeepestAllowed; ++I)
    A.Value = add(std::move(A.Value), name("x"));
  EXPECT_TRUE(failed(verifyModule(*M)));
  EXPECT_FALSE(M->Verified);
}

/// Runs \p Fn on a thread of its own with a stack of \p Bytes.
void onSmallStack(size_t Bytes, void (*Fn)(void *), void *Arg) {
  pthread_attr_t A;
  ASSERT_EQ(pthread_attr_init(&A), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&A, Bytes), 0);
  struct Call {
    void (*Fn)(void *);
    void *Arg;
  } C{Fn, Arg};
  pthread_t T;
  ASSERT_EQ(pthread_create(
                &T, &A,
                [](void *P) -> void * {
                  auto *C = static_cast<Call *>(P);
                  C->Fn(C->Arg);
                  return nullptr;
                },
                &C),
            0);
  pthread_join(T, nullptr);
  pthread_attr_destroy(&A);
}

// A module a million levels deep, in expressions and in nested blocks,
// dies on a thread of 256 KiB (a recursive destructor needs tens of MiB
// here: it crashed).
TEST(DeepInputTest, AVeryDeepTreeIsDestroyedWithoutRecursion) {
  auto *M = additionChain(1000000).release();
  auto *Body = llvm::cast<FunctionDecl>(M->Decls[0].get())->Body.get();
  BlockStmt *Inner = Body;
  for (unsigned I = 0; I < 1000000; ++I) {
    auto B = std::make_unique<BlockStmt>(SourceLoc());
    BlockStmt *Next = B.get();
    Inner->Body.push_back(std::move(B));
    Inner = Next;
  }
  onSmallStack(256 << 10, [](void *P) { delete static_cast<Module *>(P); }, M);
}

} // namespace
