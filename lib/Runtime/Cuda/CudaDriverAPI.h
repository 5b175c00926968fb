//===- CudaDriverAPI.h - The part of the CUDA driver API gridjit uses -*- C++ -*-===//
//
// Part of gridjit. A hand-written declaration of the few CUDA driver types,
// constants and entry points gridjit calls, so that gridjit builds without a
// CUDA toolkit and loads libcuda.so.1 at run time (CudaDriver.h). The
// numeric values are the driver's ABI (cuda.h of CUDA 12); only the values
// gridjit uses are declared. This header is plain C++ with no LLVM or
// gridjit dependency, so that the test suite's fake driver
// (unittests/FakeCuda/FakeCuda.cpp) defines its entry points against the
// very same types.
//
// The entry points are one table, GRIDJIT_CUDA_ENTRY_POINTS: each row is
// X(Name, Resolution, (Parameters)); from it come the function-pointer
// types PFN_<Name>, the members of cuda::DriverAPI and the symbol lookup.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_RUNTIME_CUDA_CUDADRIVERAPI_H
#define GRIDJIT_RUNTIME_CUDA_CUDADRIVERAPI_H

#include <cstddef>

extern "C" {

/// The result of every driver call. The underlying type is fixed (int, as
/// the driver's ABI has it), so that a code this header does not list is
/// still a valid value (a newer driver returns codes we have not named).
typedef enum CUresult_enum : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
  CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
  CUDA_ERROR_MISALIGNED_ADDRESS = 716,
  CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
  CUDA_ERROR_INVALID_PC = 718,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999,
} CUresult;

typedef int CUdevice;                       ///< a device ordinal's handle
typedef unsigned long long CUdeviceptr;     ///< a device address (64-bit)
typedef struct CUctx_st *CUcontext;         ///< a context
typedef struct CUmod_st *CUmodule;          ///< a loaded module
typedef struct CUfunc_st *CUfunction;       ///< a kernel of a module
typedef struct CUstream_st *CUstream;       ///< a stream (null: the default)
typedef struct CUlinkState_st *CUlinkState; ///< a pending cuLink* link
typedef struct CUevent_st *CUevent;         ///< an event

/// cuEventCreate's flag for an event that records no time (cheaper).
constexpr unsigned int CU_EVENT_DISABLE_TIMING = 0x2;

/// Device attributes (cuDeviceGetAttribute).
typedef enum CUdevice_attribute_enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
} CUdevice_attribute;

/// Function attributes (cuFuncGetAttribute, cuFuncSetAttribute).
typedef enum CUfunction_attribute_enum {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
} CUfunction_attribute;

/// Options of the driver's PTX JIT and linker (cuModuleLoadDataEx, cuLink*).
typedef enum CUjit_option_enum {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_LOG_VERBOSE = 12,
} CUjit_option;

/// What cuLinkAddData is given.
typedef enum CUjitInputType_enum {
  CU_JIT_INPUT_CUBIN = 0,
  CU_JIT_INPUT_PTX = 1,
} CUjitInputType;

} // extern "C"

/// How an entry point's symbol is found in the library:
///  - V2First: `<Name>_v2`, else `<Name>` (the unversioned symbol, where it
///    is the only one or has the same ABI);
///  - V2Only: `<Name>_v2` only (the unversioned symbol has another ABI,
///    e.g. 32-bit device pointers or sizes).
#define GRIDJIT_CUDA_ENTRY_POINTS(X)                                                               \
  X(cuInit, V2First, (unsigned int Flags))                                                         \
  X(cuDriverGetVersion, V2First, (int *Version))                                                   \
  X(cuGetErrorName, V2First, (CUresult Error, const char **Name))                                  \
  X(cuGetErrorString, V2First, (CUresult Error, const char **Text))                                \
  X(cuDeviceGetCount, V2First, (int *Count))                                                       \
  X(cuDeviceGet, V2First, (CUdevice * Device, int Ordinal))                                        \
  X(cuDeviceGetName, V2First, (char *Name, int Length, CUdevice Device))                           \
  X(cuDeviceGetAttribute, V2First, (int *Value, CUdevice_attribute Attribute, CUdevice Device))    \
  X(cuDeviceTotalMem, V2Only, (size_t *Bytes, CUdevice Device))                                    \
  X(cuDevicePrimaryCtxRetain, V2First, (CUcontext * Context, CUdevice Device))                     \
  X(cuDevicePrimaryCtxRelease, V2First, (CUdevice Device))                                         \
  X(cuCtxSetCurrent, V2First, (CUcontext Context))                                                 \
  X(cuCtxGetCurrent, V2First, (CUcontext * Context))                                               \
  X(cuCtxSynchronize, V2First, ())                                                                 \
  X(cuMemAlloc, V2Only, (CUdeviceptr * Ptr, size_t Bytes))                                         \
  X(cuMemFree, V2Only, (CUdeviceptr Ptr))                                                          \
  X(cuMemcpyHtoD, V2Only, (CUdeviceptr Dst, const void *Src, size_t Bytes))                        \
  X(cuMemcpyDtoH, V2Only, (void *Dst, CUdeviceptr Src, size_t Bytes))                              \
  X(cuMemcpyDtoD, V2Only, (CUdeviceptr Dst, CUdeviceptr Src, size_t Bytes))                        \
  X(cuMemsetD8, V2Only, (CUdeviceptr Dst, unsigned char Value, size_t Count))                      \
  X(cuModuleLoadDataEx, V2First,                                                                   \
    (CUmodule * Module, const void *Image, unsigned int NumOptions, CUjit_option *Options,         \
     void **OptionValues))                                                                         \
  X(cuModuleUnload, V2First, (CUmodule Module))                                                    \
  X(cuModuleGetFunction, V2First, (CUfunction * Function, CUmodule Module, const char *Name))      \
  X(cuModuleGetGlobal, V2Only,                                                                     \
    (CUdeviceptr * Ptr, size_t *Bytes, CUmodule Module, const char *Name))                         \
  X(cuLinkCreate, V2First,                                                                         \
    (unsigned int NumOptions, CUjit_option *Options, void **OptionValues, CUlinkState *State))     \
  X(cuLinkAddData, V2First,                                                                        \
    (CUlinkState State, CUjitInputType Type, void *Data, size_t Size, const char *Name,            \
     unsigned int NumOptions, CUjit_option *Options, void **OptionValues))                         \
  X(cuLinkComplete, V2First, (CUlinkState State, void **Cubin, size_t *Size))                      \
  X(cuLinkDestroy, V2First, (CUlinkState State))                                                   \
  X(cuFuncGetAttribute, V2First,                                                                   \
    (int *Value, CUfunction_attribute Attribute, CUfunction Function))                             \
  X(cuFuncSetAttribute, V2First, (CUfunction Function, CUfunction_attribute Attribute, int Value)) \
  X(cuLaunchKernel, V2First,                                                                       \
    (CUfunction Function, unsigned int GridX, unsigned int GridY, unsigned int GridZ,              \
     unsigned int BlockX, unsigned int BlockY, unsigned int BlockZ, unsigned int SharedBytes,      \
     CUstream Stream, void **Params, void **Extra))                                                \
  X(cuLaunchCooperativeKernel, V2First,                                                            \
    (CUfunction Function, unsigned int GridX, unsigned int GridY, unsigned int GridZ,              \
     unsigned int BlockX, unsigned int BlockY, unsigned int BlockZ, unsigned int SharedBytes,      \
     CUstream Stream, void **Params))                                                              \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, V2First,                                          \
    (int *NumBlocks, CUfunction Function, int BlockSize, size_t DynamicSharedBytes))               \
  X(cuMemsetD32Async, V2First,                                                                     \
    (CUdeviceptr Dst, unsigned int Value, size_t Count, CUstream Stream))                          \
  X(cuEventCreate, V2First, (CUevent * Event, unsigned int Flags))                                 \
  X(cuEventRecord, V2First, (CUevent Event, CUstream Stream))                                      \
  X(cuEventQuery, V2First, (CUevent Event))                                                        \
  X(cuEventDestroy, V2First, (CUevent Event))

/// PFN_<Name>: the type of a pointer to entry point <Name>.
#define GRIDJIT_CUDA_DECLARE_PFN(Name, Resolution, Params) using PFN_##Name = CUresult(*) Params;
GRIDJIT_CUDA_ENTRY_POINTS(GRIDJIT_CUDA_DECLARE_PFN)
#undef GRIDJIT_CUDA_DECLARE_PFN

#endif // GRIDJIT_RUNTIME_CUDA_CUDADRIVERAPI_H
