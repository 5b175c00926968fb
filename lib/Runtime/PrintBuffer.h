//===- PrintBuffer.h - The records of one host launch's print calls -*- C++ -*-===//
//
// Part of gridjit (internal header). A launch of a kernel that prints
// (KernelInfo::Prints) gets one PrintBuffer: the kernel's print calls, on
// any worker thread at once, append a record each (its text, formatted
// then, with the block and thread that printed it) by an atomic bump of
// the buffer's end, so no lock is taken while kernels run. After the
// launch, flush() hands the records to the output ordered by block, then
// thread, then the order in which the thread printed them, and ends with a
// line saying what did not fit, if anything (docs/HostTarget.md,
// "Printing").
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_RUNTIME_PRINTBUFFER_H
#define GRIDJIT_LIB_RUNTIME_PRINTBUFFER_H

#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Target/HostABI.h"

#include <atomic>
#include <cstdint>
#include <memory>

namespace gridjit {

class PrintBuffer {
public:
  /// A buffer of \p Bytes (0: LaunchOptions::DefaultPrintBufferBytes).
  /// Check valid(): the memory may not be available.
  explicit PrintBuffer(uint64_t Bytes);
  bool valid() const { return Data != nullptr; }
  uint64_t capacity() const { return Size; }

  /// hostabi::PrintFn, with \p State a PrintBuffer.
  static void record(void *State, const hostabi::PrintSite *Site, const uint64_t *Values,
                     uint64_t Block, uint32_t Thread);

  /// After the launch (no record() running): writes every record in order
  /// to \p Out (LaunchOptions::PrintOutput; the process's stdout when
  /// empty), then, when some did not fit, one line naming \p Kernel and how
  /// many records and bytes were dropped. Fills the Print* fields of
  /// \p Stats.
  void flush(const PrintHandler &Out, const std::string &Kernel, LaunchStats &Stats) const;

private:
  std::unique_ptr<char[]> Data;
  uint64_t Size = 0;
  /// The end of the space handed out (may pass Size: those records were
  /// dropped), and of the records written whole (records are contiguous
  /// from 0: every one that fits lies before every one that does not).
  std::atomic<uint64_t> Reserved{0}, Committed{0};
  std::atomic<uint64_t> DroppedRecords{0}, DroppedBytes{0};
};

} // namespace gridjit

#endif // GRIDJIT_LIB_RUNTIME_PRINTBUFFER_H
