//===- TestPaths.cpp - Where the checkout and the fake drivers are --------===//
//
// Part of gridjit. The only unit-test file compiled with the checkout's and
// the build's absolute paths (unittests/CMakeLists.txt); TestSupport.h
// declares these.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

const char *gridjit::test::sourceDir() { return GRIDJIT_TEST_SOURCE_DIR; }
const char *gridjit::test::fakeCudaPath() { return GRIDJIT_TEST_FAKE_CUDA; }
const char *gridjit::test::fakeCudaNoLaunchPath() { return GRIDJIT_TEST_FAKE_CUDA_NOLAUNCH; }
