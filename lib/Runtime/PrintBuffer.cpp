//===- PrintBuffer.cpp - The records of one host launch's print calls -----===//
//
// Part of gridjit. See PrintBuffer.h. A record is a header (u64 block, u32
// thread, u32 text bytes) and its text, padded to 8 bytes.
//
//===----------------------------------------------------------------------===//

#include "PrintBuffer.h"

#include "gridjit/IR/PrintFormat.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <tuple>
#include <vector>

using namespace gridjit;
namespace abi = gridjit::hostabi;

namespace {

struct RecordHeader {
  uint64_t Block;
  uint32_t Thread;
  uint32_t Bytes;
};
static_assert(sizeof(RecordHeader) == 16);

/// The text of one print call: the format with each `{}` replaced by its
/// value, and a newline. The conversions are those of the nvptx target's
/// vprintf format (Target/NVPTX/PrintLowering.cpp), so both targets print
/// the same text.
void formatRecord(const abi::PrintSite &Site, const uint64_t *Values,
                  llvm::SmallVectorImpl<char> &Text) {
  llvm::raw_svector_ostream OS(Text);
  PrintFormat F;
  PrintFormatError Err;
  if (!parsePrintFormat(Site.Format, F, Err) || F.numArgs() != Site.NumArgs) {
    OS << "<print: bad format>\n"; // the compiler verified it: not reached
    return;
  }
  for (uint32_t I = 0; I <= Site.NumArgs; ++I) {
    OS << F.Pieces[I];
    if (I == Site.NumArgs)
      break;
    uint64_t V = Values[I];
    switch (Site.Kinds[I]) {
    case abi::PrintSigned:
      OS << static_cast<int64_t>(V);
      break;
    case abi::PrintUnsigned:
      OS << V;
      break;
    case abi::PrintBool:
      OS << (V ? "true" : "false");
      break;
    case abi::PrintFloat: {
      double D;
      std::memcpy(&D, &V, sizeof D);
      char Buf[64];
      std::snprintf(Buf, sizeof Buf, "%g", D);
      OS << Buf;
      break;
    }
    default: // abi::PrintPointer
      OS << "0x" << llvm::format("%llx", static_cast<unsigned long long>(V));
      break;
    }
  }
  OS << '\n';
}

} // namespace

PrintBuffer::PrintBuffer(uint64_t Bytes) {
  Size = Bytes ? Bytes : LaunchOptions::DefaultPrintBufferBytes;
  Data.reset(new (std::nothrow) char[Size]);
}

void PrintBuffer::record(void *State, const abi::PrintSite *Site, const uint64_t *Values,
                         uint64_t Block, uint32_t Thread) {
  auto &Buf = *static_cast<PrintBuffer *>(State);
  llvm::SmallString<256> Text;
  formatRecord(*Site, Values, Text);
  uint64_t Need = llvm::alignTo(sizeof(RecordHeader) + Text.size(), 8);
  uint64_t At = Buf.Reserved.fetch_add(Need, std::memory_order_relaxed);
  if (At > Buf.Size || Need > Buf.Size - At) {
    Buf.DroppedRecords.fetch_add(1, std::memory_order_relaxed);
    Buf.DroppedBytes.fetch_add(Text.size(), std::memory_order_relaxed);
    return;
  }
  RecordHeader H{Block, Thread, static_cast<uint32_t>(Text.size())};
  std::memcpy(Buf.Data.get() + At, &H, sizeof H);
  std::memcpy(Buf.Data.get() + At + sizeof H, Text.data(), Text.size());
  Buf.Committed.fetch_add(Need, std::memory_order_relaxed);
}

void PrintBuffer::flush(const PrintHandler &Out, const std::string &Kernel,
                        LaunchStats &Stats) const {
  struct Entry {
    uint64_t Block;
    uint32_t Thread;
    uint64_t At;
    llvm::StringRef Text;
  };
  std::vector<Entry> Entries;
  uint64_t End = Committed.load(std::memory_order_relaxed);
  for (uint64_t At = 0; At < End;) {
    RecordHeader H;
    std::memcpy(&H, Data.get() + At, sizeof H);
    Entries.push_back({H.Block, H.Thread, At, {Data.get() + At + sizeof H, H.Bytes}});
    At += llvm::alignTo(sizeof H + H.Bytes, 8);
  }
  // Within a thread, buffer order (At) is the order it printed in.
  std::sort(Entries.begin(), Entries.end(), [](const Entry &A, const Entry &B) {
    return std::tie(A.Block, A.Thread, A.At) < std::tie(B.Block, B.Thread, B.At);
  });
  auto Write = [&](llvm::StringRef Text) {
    if (Out) {
      Out(Text);
    } else {
      std::fwrite(Text.data(), 1, Text.size(), stdout);
    }
  };
  for (const Entry &E : Entries)
    Write(E.Text);
  uint64_t Records = DroppedRecords.load(std::memory_order_relaxed);
  uint64_t Bytes = DroppedBytes.load(std::memory_order_relaxed);
  if (Records)
    Write("gridjit: the print buffer of kernel '" + Kernel + "' (" + std::to_string(Size) +
          " bytes) is full: " + std::to_string(Records) + " record" + (Records == 1 ? "" : "s") +
          " (" + std::to_string(Bytes) +
          " bytes of text) dropped; raise the launch's print buffer size (LaunchOptions::"
          "PrintBufferBytes, gj_launch_config.print_buffer_bytes, print_buffer_bytes= in "
          "Python, jit-run --print-buffer)\n");
  if (!Out)
    std::fflush(stdout);
  Stats.PrintRecords = Entries.size();
  Stats.PrintDroppedRecords = Records;
  Stats.PrintDroppedBytes = Bytes;
}
