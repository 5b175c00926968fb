//===- PrivateParams.h - Parameters each thread reaches at its own index -*- C++ -*-===//
//
// Part of gridjit (internal header of the host target).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_PRIVATEPARAMS_H
#define GRIDJIT_LIB_TARGET_HOST_PRIVATEPARAMS_H

#include "llvm/ADT/SmallBitVector.h"

namespace gridjit {
class FunctionDecl;
namespace host {

/// By parameter index: the pointer parameters that kernel \p Kernel uses
/// only as `p[i]` (or `&p[i]` as an atomic's address) with i the thread's
/// global index of a one-dimensional launch or a grid-stride loop's index
/// from there (PrivateParams.cpp). In a one-dimensional launch of fewer
/// than 2^31 threads no two threads reach the same element of such a
/// parameter.
llvm::SmallBitVector privateParams(const FunctionDecl &Kernel);

} // namespace host
} // namespace gridjit

#endif // GRIDJIT_LIB_TARGET_HOST_PRIVATEPARAMS_H
