//===- ConstantLowering.cpp - Globals of tables and constant memory -------===//
//
// Part of gridjit. A module's constant tables (`const W: [f32; 5] = [...]`)
// and constant memory (`constant FILTER: [f32; 17];`) become LLVM globals
// in the target's constant address space (NVPTX: addrspace(4), `.const`,
// read with ld.const; host: 0). A table is a private constant global with
// its folded elements; constant memory is an external, zero-initialised
// global named by LoweringTarget::getConstantSymbol, which the runtime
// looks up and writes before a launch. It is not marked constant: the
// optimiser must not fold its loads to the zeros it starts with.
//
//===----------------------------------------------------------------------===//

#include "StructuralLowering.h"

#include "llvm/IR/Constants.h"

using namespace gridjit;

namespace {
/// Element \p V of a table as it lies in memory (bool as i8).
llvm::Constant *memoryConstant(LoweringContext &Ctx, const ConstValue &V) {
  llvm::Type *Ty = Ctx.memType(V.Ty.getScalarKind());
  if (V.Ty.isFloat())
    return llvm::ConstantFP::get(Ty, V.Float);
  return llvm::ConstantInt::get(Ty, V.Int, /*isSigned=*/V.Ty.isSignedInteger());
}
} // namespace

void StructuralLowering::createConstantGlobals(const Module &KM) {
  unsigned AS = Ctx.T.getAddrSpace(AddrSpace::Constant);
  for (const auto &D : KM.Decls) {
    const auto *C = llvm::dyn_cast<ConstDecl>(D.get());
    if (!C || !C->Var.Ty.isArray())
      continue;
    auto *Ty = llvm::cast<llvm::ArrayType>(Ctx.toLLVM(C->Var.Ty));
    llvm::GlobalVariable *G;
    if (C->isConstantMemory()) {
      G = new llvm::GlobalVariable(
          Ctx.IR, Ty, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
          llvm::ConstantAggregateZero::get(Ty), Ctx.T.getConstantSymbol(C->Var.Name), nullptr,
          llvm::GlobalValue::NotThreadLocal, AS);
    } else {
      std::vector<llvm::Constant *> Elems;
      Elems.reserve(C->TableValues.size());
      for (const ConstValue &V : C->TableValues)
        Elems.push_back(memoryConstant(Ctx, V));
      G = new llvm::GlobalVariable(Ctx.IR, Ty, /*isConstant=*/true,
                                   llvm::GlobalValue::PrivateLinkage,
                                   llvm::ConstantArray::get(Ty, Elems), C->Var.Name, nullptr,
                                   llvm::GlobalValue::NotThreadLocal, AS);
      G->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    }
    G->setAlignment(llvm::Align(std::max<unsigned>(4, C->Var.Ty.getElementBytes())));
    ConstantGlobals[&C->Var] = G;
  }
}
