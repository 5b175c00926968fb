//===- PublicHeaders.cpp - The public API names no LLVM IR type -----------===//
//
// Part of gridjit. Built with libgridjit (lib/CMakeLists.txt). It includes
// the public headers and then declares, in namespace llvm, a class template
// under the name of each LLVM IR class (and a class under IRBuilder, which
// is a template). Were any of those names already declared, even forward,
// by something the public headers include, the redeclaration is "a
// different kind of symbol" and this file fails to compile: the public API
// (docs/Architecture.md) must stay free of LLVM IR types. When it fails,
// move what needs the LLVM type behind an internal header (as CodegenTarget
// and LoweringTarget are) rather than adding it to a public one.
//
//===----------------------------------------------------------------------===//

// Every public header: Compiler.h and what it includes, and the rest of
// the API that tools and users include beside it.
#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Cache/CacheKey.h"
#include "gridjit/Cache/DiskCache.h"
#include "gridjit/Cache/RemoteCache.h"
#include "gridjit/Cache/RemoteCacheConfig.h"
#include "gridjit/Cache/RemoteStore.h"
#include "gridjit/Cache/TieredCache.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/IR/AST.h"
#include "gridjit/IR/Builder.h"
#include "gridjit/IR/Builtins.h"
#include "gridjit/IR/PrintFormat.h"
#include "gridjit/IR/Printer.h"
#include "gridjit/IR/Type.h"
#include "gridjit/Lower/Op.h"
#include "gridjit/Parse/Lexer.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Runtime/CudaDevices.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Runtime/LaunchChecks.h"
#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Support/ByteCount.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Support/Environment.h"
#include "gridjit/Support/Errors.h"
#include "gridjit/Support/ForkSafety.h"
#include "gridjit/Support/HMAC.h"
#include "gridjit/Support/HalfFloat.h"
#include "gridjit/Support/Limits.h"
#include "gridjit/Support/SourceLoc.h"
#include "gridjit/Support/TimeSource.h"
#include "gridjit/Target/HostABI.h"
#include "gridjit/Target/Target.h"

namespace llvm {
template <typename> class Module;
template <typename> class LLVMContext;
template <typename> class Value;
template <typename> class Function;
template <typename> class BasicBlock;
template <typename> class Instruction;
template <typename> class Type;
template <typename> class TargetMachine;
template <typename> class DataLayout;
class IRBuilder;
class IRBuilderBase;
} // namespace llvm
