/*===- gridjit-c/gridjit.h - gridjit's stable C API ---------------*- C -*-===*\
|*                                                                            *|
|* Part of gridjit. The C ABI that embedders (the Python package, other       *|
|* languages, frameworks that do not want C++ in their ABI) use: compile KIR  *|
|* for the host or nvptx target, synchronously or not; read a kernel's        *|
|* parameters; run kernels through a runtime (host CPU or a CUDA device)      *|
|* on buffers it owns or on memory the caller owns. docs/CAPI.md has the      *|
|* complete guide and examples.                                               *|
|*                                                                            *|
|* Rules that hold for every function:                                        *|
|*  - It returns a gj_status (GJ_OK = 0) unless it is documented otherwise;   *|
|*    on failure gj_last_error() holds the full message (gridjit's located    *|
|*    diagnostics included) for the calling thread, and every out-parameter   *|
|*    is left unchanged.                                                      *|
|*  - It is thread-safe: any object may be used from any thread at once,      *|
|*    except that an object must not be destroyed while another thread is     *|
|*    using it.                                                               *|
|*  - It never prints, exits or aborts on bad input (a null handle or         *|
|*    pointer is GJ_ERROR_INVALID_ARGUMENT), and holds no lock of its own     *|
|*    across a compile or a launch.                                           *|
|*  - Strings passed in are NUL-terminated UTF-8 and only read during the     *|
|*    call. Strings returned are owned by the object they come from and       *|
|*    live as long as it does (gj_last_error: until the thread's next         *|
|*    failing call).                                                          *|
|*  - Structs grow as Linux's extensible system-call structs do               *|
|*    (copy_struct_from_user, clone3, openat2): each starts with              *|
|*    `struct_size`, the caller's sizeof, which the *_init functions set.     *|
|*    A smaller struct (a caller built against an older header) is            *|
|*    accepted and the fields it lacks take their defaults; a larger one (a   *|
|*    newer header) is accepted when every byte this library does not know    *|
|*    is zero, and refused with GJ_ERROR_INVALID_ARGUMENT naming the first    *|
|*    byte that is not. The library writes no more than struct_size bytes     *|
|*    of a caller's struct. Fields are fixed-width integers, never enums.     *|
|*  - Every size, count and offset passed in is checked before it is used,    *|
|*    without arithmetic that could wrap: a struct_size or arg_size above     *|
|*    GJ_MAX_STRUCT_BYTES, a buffer above GJ_MAX_BUFFER_BYTES, a source       *|
|*    above GJ_MAX_SOURCE_BYTES, a copy outside its buffer, a launch's        *|
|*    argument count other than the kernel's is an error naming the value     *|
|*    and the limit (docs/CAPI.md, "Sizes").                                  *|
|*  - Functions whose arguments changed in API version 2 (the *_init          *|
|*    functions, gj_launch) are macros naming their version-2 symbols         *|
|*    (gj_launch is gj_launch_v2), as CUDA's header does; the version-1       *|
|*    symbols stay, with their version-1 behaviour, for programs built        *|
|*    against that header. docs/CAPI.md, "Versions and growth".               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef GRIDJIT_C_GRIDJIT_H
#define GRIDJIT_C_GRIDJIT_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define GJ_API __attribute__((visibility("default")))
#else
#define GJ_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===-- Versions, status, errors ------------------------------------------===*/

/** The most bytes a struct_size (or gj_launch's arg_size) may say: more
 *  than any version of any struct will have, as clone3 bounds its own. */
#define GJ_MAX_STRUCT_BYTES 4096
/** The most bytes one buffer may have (gj_buffer_alloc): 2^62, more than
 *  any machine's memory and small enough that no size computed from it
 *  overflows 64 bits. */
#define GJ_MAX_BUFFER_BYTES ((uint64_t)1 << 62)
/** The most bytes of source gj_compile takes (lines and columns are
 *  32-bit). */
#define GJ_MAX_SOURCE_BYTES ((size_t)0xffffffffu)

/** The C API's version: GJ_API_VERSION of the library. Bumped when a
 *  function, a field or a status is added; a function whose arguments
 *  change gets a new symbol (NAME_v2), and the old symbol keeps working
 *  for the programs built against it. */
#define GJ_API_VERSION 3
GJ_API uint32_t gj_api_version(void);
/** gridjit's version, e.g. "0.4.0". */
GJ_API const char *gj_version_string(void);

/** What a call returns. Each error status is one kind of error of the
 *  library (include/gridjit/Support/ErrorKinds.def); the values never
 *  change, new ones are appended. */
typedef enum gj_status {
  GJ_OK = 0,
  /** The API used wrongly: a null handle or pointer, an unknown enum
   *  value, a struct_size that does not fit, an unknown option or an
   *  option out of range, an out-of-range index, a module of another
   *  target, a buffer of another runtime. */
  GJ_ERROR_INVALID_ARGUMENT = 1,
  /** The KIR source did not parse or verify (the message is the located
   *  diagnostic: `NAME:LINE:COL: error: ...` with the source line), or the
   *  target cannot compile the module. */
  GJ_ERROR_COMPILE = 2,
  /** No such kernel, target or device. */
  GJ_ERROR_NOT_FOUND = 3,
  /** API version 1's status of every launch failure. Version 2 returns
   *  the finer statuses below instead (ARGUMENT, CONFIGURATION,
   *  DIVERGENCE, FAULT, TIMEOUT, CANCELLED); only version 1's symbol of gj_launch,
   *  for the programs built against it, still returns this one. */
  GJ_ERROR_LAUNCH = 4,
  /** gj_compile_job_poll: the compile has not finished yet. */
  GJ_ERROR_NOT_READY = 5,
  /** The CUDA runtime cannot start: no driver library, no device. */
  GJ_ERROR_NO_DEVICE = 6,
  /** Any other failure: memory that cannot be allocated, an internal error
   *  of gridjit. */
  GJ_ERROR_FAILED = 7,
  /** A kernel argument does not fit its parameter: their number, a
   *  scalar's type or value, a pointer's pointee or memory. */
  GJ_ERROR_ARGUMENT = 8,
  /** A launch configuration the kernel or the device cannot run: grid and
   *  block sizes, shared memory, a cooperative grid that cannot be
   *  resident, a stream on the host. */
  GJ_ERROR_CONFIGURATION = 9,
  /** A synchronisation point (sync_threads, a warp operation, grid_sync)
   *  reached by only part of its block, warp or grid, found while the
   *  launch ran (a located message). */
  GJ_ERROR_DIVERGENCE = 10,
  /** A kernel accessed memory it may not: a host kernel's SIGSEGV or
   *  SIGBUS (caught unless the runtime was made with catch_faults = 0), a
   *  GPU's illegal address or failed launch as the driver reports it. */
  GJ_ERROR_FAULT = 11,
  /** A launch stopped by a watchdog. */
  GJ_ERROR_TIMEOUT = 12,
  /** A CUDA driver call failed (the message names the call and the
   *  driver's error). */
  GJ_ERROR_DRIVER = 13,
  /** A file, directory or cache that cannot be read or written. */
  GJ_ERROR_IO = 14,
  /** A launch stopped because its gj_cancel_token was cancelled (the
   *  blocks that had started finished; the rest never ran). Added in API
   *  version 2. */
  GJ_ERROR_CANCELLED = 15,
  /** A checked launch (gj_compiler_options' check) found what the kernel
   *  must not do: an out-of-bounds access, a data race, a read of
   *  uninitialised shared memory, an operation CUDA leaves undefined, a size
   *  a GPU could not run (docs/Check.md). Added in API version 3. */
  GJ_ERROR_CHECK = 16,
} gj_status;

/** The name of \p s ("GJ_OK", "GJ_ERROR_COMPILE", ...; "GJ_STATUS_UNKNOWN"
 *  for a value that is none); never null. */
GJ_API const char *gj_status_name(gj_status s);
/** The message of the calling thread's last failed call (empty when there
 *  was none; successful calls leave it as it is). Valid until the thread's
 *  next failing gridjit call. Never null. */
GJ_API const char *gj_last_error(void);

/*===-- Types --------------------------------------------------------------===*/

/** KIR's scalar types (gridjit::ScalarKind, same order). */
typedef enum gj_scalar_type {
  GJ_BOOL = 0,
  GJ_I8 = 1,
  GJ_I16 = 2,
  GJ_I32 = 3,
  GJ_I64 = 4,
  GJ_U8 = 5,
  GJ_U16 = 6,
  GJ_U32 = 7,
  GJ_U64 = 8,
  GJ_F32 = 9,
  GJ_F64 = 10,
  /** IEEE binary16, a storage type. A scalar argument of it is given in
      gj_arg_value::f32 and rounded to nearest even. (API version 2.) */
  GJ_F16 = 11,
  /** bfloat16, a storage type; arguments as for GJ_F16. (API version 2.) */
  GJ_BF16 = 12,
  /** For a pointer argument: the pointee is not checked. */
  GJ_ANY = 255,
} gj_scalar_type;

/** The spelling of \p t ("i32", "f64", ...; "any"); never null. */
GJ_API const char *gj_scalar_type_name(gj_scalar_type t);

/*===-- Compiler -----------------------------------------------------------===*/

typedef struct gj_compiler_s *gj_compiler;
typedef struct gj_module_s *gj_module;
typedef struct gj_compile_job_s *gj_compile_job;

typedef struct gj_compiler_options {
  size_t struct_size;
  /** Comma-separated targets, each NAME or NAME:ARCH ("host",
   *  "nvptx:sm_80", "host,nvptx"; "cuda" is another name of "nvptx"); the
   *  first is the default target. NULL or empty: "host" (this machine's
   *  CPU). */
  const char *targets;
  /** Default optimisation level, 0..3 (default 3). */
  uint32_t opt_level;
  /** Threads for gj_compile_async; 0: the CPUs this process may run on.
   *  At most 1024: more is GJ_ERROR_INVALID_ARGUMENT. */
  uint32_t threads;
  /** Non-zero (default): use the disk cache. */
  int32_t use_disk_cache;
  /** The disk cache directory; NULL: the default (GRIDJIT_CACHE_DIR,
   *  XDG_CACHE_HOME, HOME; docs/Cache.md). */
  const char *cache_dir;
  /** Non-zero: every gj_compile, gj_compile_async and gj_emit of this
   *  compiler makes checked code (docs/Check.md): its launches report
   *  out-of-bounds accesses, data races, reads of uninitialised shared
   *  memory and operations CUDA leaves undefined as GJ_ERROR_CHECK. It has
   *  its own cache entries. Only the host target has checked code: a
   *  compile for nvptx is then GJ_ERROR_INVALID_ARGUMENT. 0 (default):
   *  unchecked code. (API version 3.) */
  int32_t check;
  /** With check: the GPU architecture (80 for sm_80; 70 to 90) whose
   *  limits checked code is held to (static and dynamic shared memory,
   *  block and grid sizes); another value makes gj_compile fail with
   *  GJ_ERROR_INVALID_ARGUMENT. Default 80. (API version 3.) */
  uint32_t check_arch;
} gj_compiler_options;

/** Fills the \p size bytes at \p o (pass sizeof *o) with the defaults,
 *  and struct_size with \p size; writes nothing else. A size below the
 *  struct's version-1 size or not a multiple of 8 writes nothing. */
GJ_API void gj_compiler_options_init_v2(gj_compiler_options *o, size_t size);
#define gj_compiler_options_init gj_compiler_options_init_v2
/** A compiler; \p o may be NULL for the defaults. */
GJ_API gj_status gj_compiler_create(const gj_compiler_options *o, gj_compiler *out);
/** The warnings the compiler has given, in order: what jit-run prints as
 *  `gridjit: warning: ...` and a library inside someone else's process
 *  never prints (today: the disk cache could not be used, so compiled
 *  kernels are cached in memory only; once). 0 for NULL. */
GJ_API size_t gj_compiler_warning_count(gj_compiler c);
/** Warning \p index (from 0) of \p c; owned by the compiler. NULL for an
 *  index out of range or a NULL compiler. */
GJ_API const char *gj_compiler_warning(gj_compiler c, size_t index);
/** Waits for its asynchronous compiles, then frees it. Modules it made
 *  stay valid. NULL is fine. */
GJ_API void gj_compiler_destroy(gj_compiler c);

/** Compiles \p source (\p size bytes, at most GJ_MAX_SOURCE_BYTES; need
 *  not be NUL-terminated) for
 *  \p target (a target name of the compiler, "cuda" standing for "nvptx";
 *  NULL: its default), or finds it
 *  in the cache. \p buffer_name names the source in diagnostics (NULL:
 *  "<source>"). */
GJ_API gj_status gj_compile(gj_compiler c, const char *source, size_t size, const char *buffer_name,
                            const char *target, gj_module *out);
/** The same on one of the compiler's threads: returns at once with a job. */
GJ_API gj_status gj_compile_async(gj_compiler c, const char *source, size_t size,
                                  const char *buffer_name, const char *target, gj_compile_job *out);
/** GJ_OK when the job has finished (successfully or not),
 *  GJ_ERROR_NOT_READY while it runs. Never blocks. */
GJ_API gj_status gj_compile_job_poll(gj_compile_job j);
/** Blocks until the job finishes; then returns what gj_compile would have
 *  (the module, or the error). May be called more than once; each
 *  successful call returns a new reference to the module. */
GJ_API gj_status gj_compile_job_wait(gj_compile_job j, gj_module *out);
/** Frees the job (waiting for it first if it still runs). NULL is fine. */
GJ_API void gj_compile_job_destroy(gj_compile_job j);
/** One stage of \p source as gj_compile compiles it (the compiler's target
 *  \p target, NULL: its default; its optimisation level), as text to read:
 *  \p stage "llvm" (the LLVM IR after optimisation) or "asm" (the target's
 *  assembly: PTX for nvptx). Nothing is cached: every call compiles. On
 *  success *text is a NUL-terminated string of *text_size bytes (the NUL
 *  not counted) that the caller frees with gj_text_free. (Added in API
 *  version 2, as gj_text_free.) */
GJ_API gj_status gj_emit(gj_compiler c, const char *source, size_t size, const char *buffer_name,
                         const char *target, const char *stage, char **text, size_t *text_size);
/** Frees a text of gj_emit. NULL is fine. */
GJ_API void gj_text_free(char *text);

/*===-- Compiled modules and kernels ---------------------------------------===*/

/** Releases a reference to a compiled module. NULL is fine. */
GJ_API void gj_module_release(gj_module m);
/** "host" or "nvptx". */
GJ_API const char *gj_module_target(gj_module m);
/** The module's architecture ("sm_80", or the host CPU name). */
GJ_API const char *gj_module_arch(gj_module m);
/** The payload: PTX text (nvptx) or a relocatable object (host). */
GJ_API gj_status gj_module_payload(gj_module m, const char **data, size_t *size);
/** The number of kernels (0 for NULL). */
GJ_API size_t gj_module_kernel_count(gj_module m);
/** The index of the kernel named \p name (GJ_ERROR_NOT_FOUND: none; the
 *  message lists the module's kernels). */
GJ_API gj_status gj_module_find_kernel(gj_module m, const char *name, size_t *index);
/** The number of constant memory arrays (`constant NAME: [T; N];`) the
 *  module declares (0 for NULL). Since API version 2. */
GJ_API size_t gj_module_constant_count(gj_module m);
/** Constant memory \p index of \p m: its name (valid while \p m lives),
 *  its element type (a gj_scalar_type) and its size in bytes; each output
 *  may be NULL. An index out of range is GJ_ERROR_INVALID_ARGUMENT.
 *  Since API version 2. */
GJ_API gj_status gj_module_constant(gj_module m, size_t index, const char **name,
                                    int32_t *elem_type, uint64_t *bytes);

typedef struct gj_kernel_info {
  size_t struct_size;
  const char *name;
  size_t num_params;
  /** Calls grid_sync(): launched cooperatively, whole grid resident. */
  int32_t cooperative;
  /** Declares `shared NAME: [T];`: dynamic_shared_bytes must be non-zero. */
  int32_t uses_dynamic_shared;
  /** Bytes of its static shared arrays as laid out (each 16-byte aligned,
   *  in declaration order, the total rounded up to 16): what a block
   *  needs besides the dynamic shared memory. */
  uint64_t static_shared_bytes;
} gj_kernel_info;

typedef struct gj_param_info {
  size_t struct_size;
  const char *name;
  /** Non-zero: a pointer (ptr<T>); \p type is then its pointee. */
  int32_t is_pointer;
  /** A gj_scalar_type. */
  uint32_t type;
  /** Bytes and alignment of the value as passed (8 for pointers). */
  uint32_t size, align;
} gj_param_info;

/** Sets info->struct_size to \p size (pass sizeof *info) and zeroes the
 *  rest of the \p size bytes; as gj_compiler_options_init for bad sizes. */
GJ_API void gj_kernel_info_init_v2(gj_kernel_info *info, size_t size);
#define gj_kernel_info_init gj_kernel_info_init_v2
/** Kernel \p index of \p m, into the info->struct_size bytes at \p info
 *  (set it first, with gj_kernel_info_init): the fields that fit; a tail
 *  this library does not know is zeroed. */
GJ_API gj_status gj_module_kernel(gj_module m, size_t index, gj_kernel_info *info);
GJ_API void gj_param_info_init_v2(gj_param_info *info, size_t size);
#define gj_param_info_init gj_param_info_init_v2
/** Parameter \p param of kernel \p kernel, as gj_module_kernel fills. */
GJ_API gj_status gj_module_kernel_param(gj_module m, size_t kernel, size_t param,
                                        gj_param_info *info);
/** For bindings that check arguments of their own types before gj_launch
 *  (the Python package): records the error gridjit reports when argument
 *  \p index (from 0) of kernel \p kernel of \p m does not fit its
 *  parameter, `kernel 'K': argument N ('p: T') PROBLEM` (N from 1), and
 *  returns GJ_ERROR_ARGUMENT, so that the binding's messages and statuses
 *  are gridjit's own. \p problem says what is wrong, e.g. "must point to
 *  f32, but numpy.ndarray of float64 was given". A NULL module or problem,
 *  or an index out of range: GJ_ERROR_INVALID_ARGUMENT. */
GJ_API gj_status gj_kernel_argument_error(gj_module m, size_t kernel, size_t index,
                                          const char *problem);

/*===-- Runtimes, buffers --------------------------------------------------===*/

typedef struct gj_runtime_s *gj_runtime;
typedef struct gj_loaded_module_s *gj_loaded_module;
typedef struct gj_buffer_s *gj_buffer;

typedef struct gj_runtime_options {
  size_t struct_size;
  /** "host" (default) or "cuda" (also "nvptx"). */
  const char *target;
  /** host: threads that run blocks; 0: the CPUs this process may run on;
   *  at most 1024 (more is GJ_ERROR_INVALID_ARGUMENT). gridjit's own pool: no OpenMP or other
   * library setting is read or changed. */
  uint32_t threads;
  /** cuda: the device's ordinal. */
  uint32_t device;
  /** cuda: keep the driver's cubins in the disk cache (default non-zero). */
  int32_t use_cubin_cache;
  /** cuda: the cache directory for cubins; NULL: the default. */
  const char *cache_dir;
  /** host: non-zero (default) to catch a kernel's memory faults (a launch
   *  then fails with GJ_ERROR_FAULT; the first launch installs SIGSEGV and
   *  SIGBUS handlers that pass every other fault on). 0: the runtime
   *  installs no signal handler and a kernel's fault is the process's, as
   *  without gridjit. (API version 2.) */
  int32_t catch_faults;
  /** Must be 0. (API version 2.) */
  uint32_t reserved;
  /** cuda: keep the cubins in this compiler's cache tiers (its directory
   *  and remote server; gj_compiler_options's cache_dir and
   *  $GRIDJIT_REMOTE_CACHE), so that a directory has one pruning policy
   *  and a server one circuit breaker; cache_dir is then not used. The
   *  runtime keeps the tiers alive: the compiler may be destroyed first.
   *  NULL (default): tiers of the runtime's own, in cache_dir and on the
   *  server $GRIDJIT_REMOTE_CACHE names. (API version 2.) */
  gj_compiler compiler;
} gj_runtime_options;

/** As gj_compiler_options_init. */
GJ_API void gj_runtime_options_init_v2(gj_runtime_options *o, size_t size);
#define gj_runtime_options_init gj_runtime_options_init_v2
/** A runtime; \p o may be NULL for the host defaults. cuda without a
 *  driver or device: GJ_ERROR_NO_DEVICE. */
GJ_API gj_status gj_runtime_create(const gj_runtime_options *o, gj_runtime *out);
/** The warnings the runtime has given, in order (today: the directory of
 *  its own cubin cache cannot be written, so cubins are not kept; once),
 *  as gj_compiler_warning's. 0 for NULL. */
GJ_API size_t gj_runtime_warning_count(gj_runtime r);
/** Warning \p index (from 0) of \p r; owned by the runtime. NULL for an
 *  index out of range or a NULL runtime. */
GJ_API const char *gj_runtime_warning(gj_runtime r, size_t index);
/** Releases it. Its loaded modules and buffers hold references to it, so
 *  it is freed when the last of them is destroyed: any order is fine.
 *  NULL is fine. */
GJ_API void gj_runtime_destroy(gj_runtime r);
/** The number of CUDA devices this process can use (0 without a driver;
 *  never an error: a driver library that loads but cannot be used also
 *  gives 0, and gj_last_error says why). */
GJ_API int32_t gj_cuda_device_count(void);
/** Waits for every launch and copy the runtime queued; returns the first
 *  error. */
GJ_API gj_status gj_runtime_synchronize(gj_runtime r);

/** Loads compiled module \p m (of the runtime's target) into \p r. The
 *  loaded module keeps its own reference to \p m. */
GJ_API gj_status gj_runtime_load(gj_runtime r, gj_module m, gj_loaded_module *out);
GJ_API void gj_loaded_module_destroy(gj_loaded_module lm);
/** Sets constant memory \p name of \p lm to the \p bytes bytes at \p data
 *  (the array's bytes, row-major). The contents belong to the loaded
 *  module and start as zero; the set waits for the module's launches in
 *  progress to return, and every launch after it reads the new contents
 *  (docs/Runtime.md, "Constant memory"). No such constant memory:
 *  GJ_ERROR_NOT_FOUND, naming those the module has; \p bytes not its
 *  size: GJ_ERROR_INVALID_ARGUMENT. Since API version 2. */
GJ_API gj_status gj_loaded_module_set_constant(gj_loaded_module lm, const char *name,
                                               const void *data, uint64_t bytes);

/** \p bytes of device memory (zeroed on the host target). More than
 *  GJ_MAX_BUFFER_BYTES is GJ_ERROR_INVALID_ARGUMENT, naming the limit;
 *  memory the runtime cannot have, GJ_ERROR_FAILED (host) or the driver's
 *  GJ_ERROR_DRIVER (CUDA). */
GJ_API gj_status gj_buffer_alloc(gj_runtime r, uint64_t bytes, gj_buffer *out);
/** Frees it; NULL is fine. */
GJ_API void gj_buffer_free(gj_buffer b);
/** The buffer's device address (0 for NULL): a host pointer on the host
 *  target, a CUdeviceptr on CUDA. */
GJ_API uint64_t gj_buffer_address(gj_buffer b);
GJ_API uint64_t gj_buffer_size(gj_buffer b);
/** Copies \p bytes from host memory \p src into \p b at \p offset. */
GJ_API gj_status gj_buffer_write(gj_buffer b, uint64_t offset, const void *src, uint64_t bytes);
/** Copies \p bytes of \p b from \p offset into host memory \p dst, after
 *  every earlier launch of the runtime has finished. */
GJ_API gj_status gj_buffer_read(gj_buffer b, uint64_t offset, void *dst, uint64_t bytes);

/*===-- Launches -----------------------------------------------------------===*/

typedef enum gj_arg_kind {
  /** A scalar of type gj_arg::type, in the matching union member. */
  GJ_ARG_SCALAR = 0,
  /** value.buffer: a gj_buffer of the runtime. */
  GJ_ARG_BUFFER = 1,
  /** value.address: caller-owned device memory (a CUdeviceptr from
   *  another framework; on the host target, any host address), or 0 for
   *  KIR's null. */
  GJ_ARG_DEVICE_POINTER = 2,
  /** value.pointer: caller-owned host memory (host target only). */
  GJ_ARG_HOST_POINTER = 3,
} gj_arg_kind;

/** One kernel argument, an element of gj_launch's array (whose element
 *  size the caller gives: gj_arg grows like the structs, without a
 *  struct_size of its own). For pointers, \p type is the pointee the
 *  caller claims (checked against the parameter), or GJ_ANY. */
typedef struct gj_arg {
  /** A gj_arg_kind. */
  uint32_t kind;
  /** A gj_scalar_type. */
  uint32_t type;
  union {
    int64_t i;  /**< bool and signed integers (i8..i64) */
    uint64_t u; /**< unsigned integers (u8..u64) */
    float f32;
    double f64;
    gj_buffer buffer;
    uint64_t address;
    void *pointer;
  } value;
  /** A pointer argument: the bytes the kernel may reach from its address
   *  (a buffer's size); 0: unknown. A checked launch (gj_compiler_options'
   *  check) reports an access beyond it, and any access through a pointer
   *  whose extent is unknown. A GJ_ARG_BUFFER with 0 takes the size of its
   *  buffer (one larger than that is GJ_ERROR_INVALID_ARGUMENT).
   *  (API version 2.) */
  uint64_t extent;
} gj_arg;

/** A cancellation token: a flag that any thread may set to stop the host
 *  launches that name it (gj_launch_config's cancel). */
typedef struct gj_cancel_token_s *gj_cancel_token;

/** Receives the output of a host launch's print calls (gj_launch_config's
 *  print_callback): one record, a line ending in '\n', of \p size bytes
 *  at \p text (not NUL-terminated, valid during the call), and the
 *  config's print_user_data. Added in API version 2. */
typedef void (*gj_print_callback)(const char *text, size_t size, void *user_data);

typedef struct gj_launch_config {
  size_t struct_size;
  uint32_t grid[3];  /**< blocks; each at least 1 */
  uint32_t block[3]; /**< threads per block; each at least 1 */
  uint32_t dynamic_shared_bytes;
  /** cuda: a CUstream of the caller's (e.g. a CuPy or PyTorch stream), as
   *  an opaque handle; NULL: the runtime's stream. host: must be NULL. */
  void *stream;
  /** host: a watchdog, in milliseconds (0, the default: none), checked
   *  between blocks: once it has passed no more blocks start and the
   *  launch returns GJ_ERROR_TIMEOUT (the blocks already running finish;
   *  what they wrote stays written). cuda: must be 0 (a GPU kernel cannot
   *  be stopped once queued; GJ_ERROR_INVALID_ARGUMENT). (API version 2.) */
  uint64_t timeout_ms;
  /** host: a token another thread may cancel (gj_cancel_token_cancel),
   *  checked between blocks as timeout_ms is: once cancelled no more
   *  blocks start and the launch returns GJ_ERROR_CANCELLED; a token
   *  already cancelled runs no block. It must outlive the launch. NULL
   *  (default): none. cuda: must be NULL. (API version 2.) */
  gj_cancel_token cancel;
  /** host, a kernel that prints: the bytes of the launch's print buffer
   *  (0, the default: 1 MiB; at most 1 GiB, else GJ_ERROR_CONFIGURATION).
   *  Records that do not fit are dropped, and the output ends with a line
   *  saying how many. cuda: ignored (the driver's printf FIFO).
   *  (API version 2.) */
  uint64_t print_buffer_bytes;
  /** host: where the output of print goes after the launch (also one that
   *  failed: what was printed until then), ordered by block, then thread,
   *  on the launching thread. NULL (default): the process's stdout.
   *  (API version 2.) */
  gj_print_callback print_callback;
  /** Passed to print_callback. (API version 2.) */
  void *print_user_data;
  /** A checked launch (gj_compiler_options' check): the distinct findings
   *  (told apart by their pair of source positions) to collect before it
   *  stops with GJ_ERROR_CHECK, whose message has them all. 0 or 1 (the
   *  default): stop at the first. Ignored by unchecked code. (API version 3.) */
  uint32_t check_max_findings;
  /** A checked launch: non-zero also reports two writes of the same bytes
   *  that store the same value, which the race check filters out by
   *  default (0). (API version 3.) */
  int32_t check_same_value_writes;
} gj_launch_config;

/** grid = block = {1, 1, 1}, no shared memory, no stream, no timeout, no
 *  cancel token, the default print buffer and output; as
 *  gj_compiler_options_init. */
GJ_API void gj_launch_config_init_v2(gj_launch_config *c, size_t size);
#define gj_launch_config_init gj_launch_config_init_v2
/** Launches kernel \p kernel of \p lm with the \p num_args arguments at
 *  \p args, each \p arg_size bytes (pass sizeof(gj_arg): an element of an
 *  older, smaller gj_arg is read as such; a larger one must have zeros
 *  beyond what this library knows), after checking the configuration and
 *  every argument against the kernel's parameters (count, scalar type and
 *  value, pointee). A \p num_args other than the kernel's parameter count
 *  is GJ_ERROR_ARGUMENT before any argument is read. The host target returns when the kernel has
 * finished; CUDA when it is queued. */
GJ_API gj_status gj_launch_v2(gj_loaded_module lm, const char *kernel, const gj_launch_config *c,
                              const gj_arg *args, size_t num_args, size_t arg_size);
#define gj_launch gj_launch_v2

/** A new cancellation token, not cancelled, into \p out. (Added in API
 *  version 2, as the three below.) */
GJ_API gj_status gj_cancel_token_create(gj_cancel_token *out);
/** Cancels \p t: every host launch naming it stops at its next check
 *  between blocks with GJ_ERROR_CANCELLED, and so does every later one (a
 *  token stays cancelled: make a new one for new launches). Callable from
 *  any thread, and from a signal handler (for a non-NULL token it is one
 *  atomic store). NULL: GJ_ERROR_INVALID_ARGUMENT. */
GJ_API gj_status gj_cancel_token_cancel(gj_cancel_token t);
/** Non-zero once \p t has been cancelled; 0 for NULL. */
GJ_API int32_t gj_cancel_token_is_cancelled(gj_cancel_token t);
/** Frees \p t; no launch may still name it. NULL is fine. */
GJ_API void gj_cancel_token_destroy(gj_cancel_token t);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GRIDJIT_C_GRIDJIT_H */
