//===- MemoryOpsTest.cpp - Every memory op knows its address space --------===//
//
// Part of gridjit. Each memory op (load, store, element address, pointer
// offset, atomic, array declaration) reaches its lowering with the address
// space of its memory, the declared extent of the array it is in (where
// there is one) and the variable it goes through: on NVPTX (the shared
// structural lowering) and on the host (the thread-loop lowering), both
// through their own registries. A target whose registry records each
// memory op before lowering it as the real target does shows it.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "Target/Host/HostLowering.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Lower/LoweringContext.h"
#include "gridjit/Lower/LoweringTarget.h"
#include "gridjit/Target/CodegenTarget.h"
#include "gridjit/Target/Target.h"

#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <map>
#include <set>
#include <tuple>

using namespace gridjit;
using namespace gridjit::test;

namespace {

/// What one memory op's lowering was given.
struct Seen {
  AddrSpace Space;
  uint64_t Extent;
  Type OperandTy;
  /// The LLVM address space of the address operand (loads, stores,
  /// atomics); ~0u for other ops.
  unsigned IRSpace;
  /// The synchronisation scope of the instruction an atomic became; -1 for
  /// other ops.
  int Scope = -1;
};
/// (op, source line, variable) of a memory op.
using Key = std::tuple<Op, unsigned, std::string>;

/// The ops recorded while a RecordingTarget lowers (one lowering at a
/// time: the registry holds plain function pointers).
std::multimap<Key, Seen> *Log = nullptr;
const LoweringRegistry *RealOps = nullptr;

template <Op O> llvm::Expected<llvm::Value *> record(LoweringContext &C, const OpArgs &A) {
  unsigned IRSpace = ~0u;
  bool Access =
      O == Op::Load || O == Op::Store || (O >= Op::BuiltinAtomicAdd && O <= Op::BuiltinAtomicCas);
  if (Access)
    IRSpace = A.Operands[0]->getType()->getPointerAddressSpace();
  auto V = RealOps->lookup(O)(C, A);
  int Scope = -1;
  if (V && *V && O >= Op::BuiltinAtomicAdd && O <= Op::BuiltinAtomicCas) {
    llvm::Value *I = *V;
    if (auto *Old = llvm::dyn_cast<llvm::ExtractValueInst>(I)) // atomic_cas
      I = Old->getAggregateOperand();
    if (auto *RMW = llvm::dyn_cast<llvm::AtomicRMWInst>(I))
      Scope = RMW->getSyncScopeID();
    else if (auto *CX = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(I))
      Scope = CX->getSyncScopeID();
  }
  Log->insert({{O, A.Loc.Line, A.Mem.Var ? A.Mem.Var->Name : ""},
               {A.Mem.Space, A.Mem.Extent, A.OperandTy, IRSpace, Scope}});
  return V;
}

static_assert(Op::BuiltinAtomicCas > Op::BuiltinAtomicAdd &&
                  unsigned(Op::BuiltinAtomicCas) - unsigned(Op::BuiltinAtomicAdd) == 8,
              "the atomics are consecutive ops (Builtins.def)");

/// Lowers like \p Inner, with \p Inner's registry except that every
/// memory op is recorded first; on the host with the thread-loop lowering.
class RecordingTarget : public LoweringTarget {
public:
  RecordingTarget(const CodegenTarget &Inner, bool Host)
      : LoweringTarget("recording-" + Inner.getRegistry().getTargetName()), Inner(Inner),
        Host(Host) {
    LoweringRegistry &R = getMutableRegistry();
    const LoweringEntry Table[] = {
        {Op::Load, record<Op::Load>},
        {Op::Store, record<Op::Store>},
        {Op::ElementAddr, record<Op::ElementAddr>},
        {Op::PtrOffset, record<Op::PtrOffset>},
        {Op::LocalArray, record<Op::LocalArray>},
        {Op::SharedArray, record<Op::SharedArray>},
        {Op::DynamicShared, record<Op::DynamicShared>},
        {Op::BuiltinAtomicAdd, record<Op::BuiltinAtomicAdd>},
        {Op::BuiltinAtomicSub, record<Op::BuiltinAtomicSub>},
        {Op::BuiltinAtomicExch, record<Op::BuiltinAtomicExch>},
        {Op::BuiltinAtomicMin, record<Op::BuiltinAtomicMin>},
        {Op::BuiltinAtomicMax, record<Op::BuiltinAtomicMax>},
        {Op::BuiltinAtomicAnd, record<Op::BuiltinAtomicAnd>},
        {Op::BuiltinAtomicOr, record<Op::BuiltinAtomicOr>},
        {Op::BuiltinAtomicXor, record<Op::BuiltinAtomicXor>},
        {Op::BuiltinAtomicCas, record<Op::BuiltinAtomicCas>},
    };
    llvm::cantFail(R.addAll(Table));
    for (unsigned I = 0; I < NumOps; ++I) {
      auto O = static_cast<Op>(I);
      if (!R.lookup(O))
        llvm::cantFail(R.add(O, Inner.getRegistry().lookup(O)));
    }
    R.freeze();
  }

  unsigned getAddrSpace(AddrSpace AS) const override { return Inner.getAddrSpace(AS); }
  llvm::SyncScope::ID getAtomicScope(AddrSpace AS) const override {
    return Inner.getAtomicScope(AS);
  }
  llvm::Error prepareModule(llvm::Module &IR) const override { return Inner.prepareModule(IR); }
  void markKernel(llvm::Module &IR, llvm::Function &F) const override { Inner.markKernel(IR, F); }
  void addHiddenKernelParams(const FunctionDecl &K, llvm::LLVMContext &Ctx,
                             std::vector<llvm::Type *> &Params) const override {
    Inner.addHiddenKernelParams(K, Ctx, Params);
  }
  llvm::Error emitKernelPrologue(LoweringContext &C) const override {
    return Inner.emitKernelPrologue(C);
  }
  llvm::Error lowerFunctions(const Module &M, llvm::Module &IR) const override {
    if (!Host)
      return LoweringTarget::lowerFunctions(M, IR);
    host::HostModuleLowering L(*this, M, IR);
    return L.run();
  }

private:
  const CodegenTarget &Inner;
  bool Host;
};

// Line numbers matter: the expectations name them.
const char *Source = R"(fn read_shared(q: ptr<f32, shared>, i: i32) -> f32 {
  return q[i];
}
kernel k(x: ptr<f32>, hist: ptr<u32>, n: i32) {
  shared tile: [f32; 64];
  shared dyn: [i32];
  var local: [f32; 4];
  let t: i32 = thread_idx.x;
  tile[t] = x[t];
  dyn[t] = t;
  local[t % 4] = tile[t];
  sync_threads();
  if t < n {
    x[t] += read_shared(&tile[0], t) + local[1];
  }
  atomic_add(&tile[1], 1.0);
  atomic_max(&dyn[2], t);
  atomic_add(hist + 2, 1u32);
  atomic_cas(hist, 0u32, 1u32);
}
)";

/// What each memory op of Source must have been given.
struct Expect {
  Op O;
  unsigned Line;
  const char *Var;
  AddrSpace Space;
  uint64_t Extent;
};
constexpr AddrSpace G = AddrSpace::Global, S = AddrSpace::Shared, L = AddrSpace::Local;
const Expect Expected[] = {
    {Op::ElementAddr, 2, "q", S, 0},
    {Op::Load, 2, "q", S, 0},
    {Op::SharedArray, 5, "tile", S, 64},
    {Op::DynamicShared, 6, "dyn", S, 0},
    {Op::LocalArray, 7, "local", L, 4},
    {Op::ElementAddr, 9, "tile", S, 64},
    {Op::ElementAddr, 9, "x", G, 0},
    {Op::Load, 9, "x", G, 0},
    {Op::Store, 9, "tile", S, 64},
    {Op::ElementAddr, 10, "dyn", S, 0},
    {Op::Store, 10, "dyn", S, 0},
    {Op::ElementAddr, 11, "local", L, 4},
    {Op::ElementAddr, 11, "tile", S, 64},
    {Op::Load, 11, "tile", S, 64},
    {Op::Store, 11, "local", L, 4},
    {Op::ElementAddr, 14, "x", G, 0},
    {Op::Load, 14, "x", G, 0}, // `+=` reads, then writes
    {Op::Store, 14, "x", G, 0},
    {Op::ElementAddr, 14, "tile", S, 64},
    {Op::ElementAddr, 14, "local", L, 4},
    {Op::Load, 14, "local", L, 4},
    {Op::ElementAddr, 16, "tile", S, 64},
    {Op::BuiltinAtomicAdd, 16, "tile", S, 64},
    {Op::ElementAddr, 17, "dyn", S, 0},
    {Op::BuiltinAtomicMax, 17, "dyn", S, 0},
    {Op::PtrOffset, 18, "hist", G, 0},
    {Op::BuiltinAtomicAdd, 18, "hist", G, 0},
    {Op::BuiltinAtomicCas, 19, "hist", G, 0},
};

class MemoryOpsTest : public ::testing::TestWithParam<bool> {
protected:
  /// Lowers Source for the host (GetParam()) or NVPTX through a
  /// RecordingTarget and returns what the memory ops were given.
  std::multimap<Key, Seen> lowerAndRecord() {
    auto T = GetParam() ? createHostTarget() : createNVPTXTarget();
    EXPECT_TRUE(succeeded(T));
    if (!T)
      return {};
    const CodegenTarget &Inner = CodegenTarget::get(**T);
    RecordingTarget R(Inner, GetParam());
    auto M = parseAndVerify(Source, "memory.kir");
    EXPECT_TRUE(succeeded(M));
    if (!M)
      return {};
    std::multimap<Key, Seen> Seen;
    Log = &Seen;
    RealOps = &Inner.getRegistry();
    llvm::LLVMContext Ctx;
    auto IR = R.lower(**M, Ctx);
    Log = nullptr;
    EXPECT_TRUE(succeeded(IR));
    return Seen;
  }
};

TEST_P(MemoryOpsTest, EveryMemoryOpKnowsItsMemory) {
  std::multimap<Key, Seen> Seen = lowerAndRecord();
  ASSERT_FALSE(Seen.empty());
  // Every op recorded is one of the expected ones (the host lowers some
  // statements more than once: full-block copies) with what it expects...
  std::set<Key> Found;
  for (const auto &[K, V] : Seen) {
    auto [O, Line, Var] = K;
    const Expect *E = nullptr;
    for (const Expect &X : Expected)
      if (X.O == O && X.Line == Line && Var == X.Var)
        E = &X;
    ASSERT_NE(E, nullptr) << "unexpected '" << opName(O) << "' on line " << Line << " through '"
                          << Var << "'";
    SCOPED_TRACE(std::string(opName(O)) + " on line " + std::to_string(Line) + " through " + Var);
    EXPECT_EQ(V.Space, E->Space);
    EXPECT_EQ(V.Extent, E->Extent);
    if (O == Op::Load || O == Op::Store) {
      // The address's own type: a pointer into that memory.
      EXPECT_TRUE(V.OperandTy.isPointer());
      EXPECT_EQ(V.OperandTy, Type::getPointer(V.OperandTy.getScalarKind(), E->Space));
    }
    Found.insert(K);
  }
  // ...and every expected op was lowered.
  for (const Expect &X : Expected)
    EXPECT_TRUE(Found.count({X.O, X.Line, X.Var}))
        << "no '" << opName(X.O) << "' on line " << X.Line << " through '" << X.Var << "'";
}

// NVPTX's pointers carry the address space too: what the op is told and
// what its operand's LLVM type says agree (shared is addrspace(3), global
// addrspace(1), a thread's local arrays generic). The host's pointers are
// all one address space: only the op's MemoryRef tells them apart.
TEST_P(MemoryOpsTest, TheIRAddressSpaceAgrees) {
  std::multimap<Key, Seen> Seen = lowerAndRecord();
  ASSERT_FALSE(Seen.empty());
  for (const auto &[K, V] : Seen) {
    if (V.IRSpace == ~0u)
      continue;
    unsigned Want = GetParam() ? 0 : V.Space == G ? 1 : V.Space == S ? 3 : 0;
    EXPECT_EQ(V.IRSpace, Want) << opName(std::get<0>(K)) << " on line " << std::get<1>(K);
  }
}

// Atomics on the host's shared memory are `singlethread` (one OS thread
// runs the block; HostTarget::optimize makes them plain load-op-store),
// its global ones, and every NVPTX atomic, system-wide: blocks run on
// different worker threads (or SMs).
TEST_P(MemoryOpsTest, AtomicsHaveTheirMemorysScope) {
  std::multimap<Key, Seen> Seen = lowerAndRecord();
  unsigned Atomics = 0;
  for (const auto &[K, V] : Seen) {
    Op O = std::get<0>(K);
    if (O < Op::BuiltinAtomicAdd || O > Op::BuiltinAtomicCas)
      continue;
    ++Atomics;
    int Want = GetParam() && V.Space == S ? llvm::SyncScope::SingleThread : llvm::SyncScope::System;
    EXPECT_EQ(V.Scope, Want) << opName(O) << " on line " << std::get<1>(K);
  }
  EXPECT_GE(Atomics, 4u);
}

INSTANTIATE_TEST_SUITE_P(Targets, MemoryOpsTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &I) {
                           return I.param ? "Host" : "NVPTX";
                         });

} // namespace
