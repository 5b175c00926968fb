//===- GuardedMemory.cpp - Kernel memory between guard regions ------------===//
//
// Part of gridjit. See GuardedMemory.h.
//
//===----------------------------------------------------------------------===//

#include "GuardedMemory.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

using namespace gridjit;

uint64_t gridjit::pageBytes() {
  static const uint64_t Page = uint64_t(sysconf(_SC_PAGESIZE));
  return Page;
}

uint64_t gridjit::bufferGuardBytes() {
  static const uint64_t Guard = llvm::alignTo(64u << 10, pageBytes());
  return Guard;
}

bool GuardedLayout::compute(uint64_t Asked, uint64_t GuardBytes) {
  uint64_t Page = pageBytes();
  Guard = GuardBytes;
  if (Asked > UINT64_MAX / 2)
    return false;
  Bytes = llvm::alignTo(std::max<uint64_t>(Asked, 64), 64);
  DataBytes = llvm::alignTo(Bytes, Page);
  // Far below what any address space holds: mmap refuses it cleanly.
  if (DataBytes > UINT64_MAX / 4)
    return false;
  Length = DataBytes + 2 * Guard;
  return true;
}

namespace {
/// Regions mapped by mapGuarded (guardedMappingsMade).
std::atomic<uint64_t> MappingsMade{0};
} // namespace

uint64_t gridjit::guardedMappingsMade() { return MappingsMade.load(std::memory_order_relaxed); }

char *gridjit::mapGuarded(const GuardedLayout &L) {
  // Reserved as one inaccessible mapping, then the data pages opened: the
  // guards cost address space, not memory.
  void *P = mmap(nullptr, L.Length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (P == MAP_FAILED)
    return nullptr;
  char *Base = static_cast<char *>(P);
  if (mprotect(Base + L.Guard, L.DataBytes, PROT_READ | PROT_WRITE) != 0) {
    int Saved = errno;
    munmap(Base, L.Length);
    errno = Saved;
    return nullptr;
  }
  MappingsMade.fetch_add(1, std::memory_order_relaxed);
  return L.memory(Base);
}

void gridjit::unmapGuarded(const GuardedLayout &L, char *Memory) {
  munmap(L.base(Memory), L.Length);
}

//===----------------------------------------------------------------------===//
// GuardedBufferPool
//===----------------------------------------------------------------------===//

GuardedBufferPool::GuardedBufferPool(uint64_t Guard, unsigned MaxKeptPages, uint64_t MaxKeptBytes)
    : Guard(Guard), MaxKeptBytes(MaxKeptBytes), Kept(MaxKeptPages) {}

GuardedBufferPool::~GuardedBufferPool() {
  for (size_t C = 0; C < Kept.size(); ++C) {
    GuardedLayout L = layout((C + 1) * pageBytes());
    for (char *Base : Kept[C])
      munmap(Base, L.Length);
  }
}

GuardedLayout GuardedBufferPool::layout(uint64_t Bytes) const {
  GuardedLayout L;
  L.compute(Bytes, Guard);
  return L;
}

char *GuardedBufferPool::allocate(uint64_t Bytes) {
  GuardedLayout L;
  if (!L.compute(Bytes, Guard)) {
    errno = ENOMEM;
    return nullptr;
  }
  uint64_t Class = L.DataBytes / pageBytes() - 1;
  if (Class < Kept.size()) {
    char *Base = nullptr;
    {
      std::lock_guard<std::mutex> G(M);
      if (!Kept[Class].empty()) {
        Base = Kept[Class].back();
        Kept[Class].pop_back();
        KeptNow -= L.DataBytes;
      }
    }
    if (Base) {
      // The bytes before the region's start, in its first page, may keep
      // an earlier region's data: no other region can see them.
      char *Memory = L.memory(Base);
      std::memset(Memory, 0, L.Bytes);
      return Memory;
    }
  }
  return mapGuarded(L);
}

void GuardedBufferPool::free(char *Memory, uint64_t Bytes) {
  GuardedLayout L = layout(Bytes); // it fitted when the region was allocated
  uint64_t Class = L.DataBytes / pageBytes() - 1;
  if (Class < Kept.size()) {
    std::lock_guard<std::mutex> G(M);
    if (Kept[Class].size() < KeptPerClass && KeptNow + L.DataBytes <= MaxKeptBytes) {
      Kept[Class].push_back(L.base(Memory));
      KeptNow += L.DataBytes;
      return;
    }
  }
  unmapGuarded(L, Memory);
}

void GuardedBufferPool::discard(char *Memory, uint64_t Bytes) {
  unmapGuarded(layout(Bytes), Memory);
}

//===----------------------------------------------------------------------===//
// BlockMemory
//===----------------------------------------------------------------------===//

BlockMemory::~BlockMemory() {
  if (!Mem)
    return;
  if (Discard)
    Pool.discard(Mem, Bytes);
  else
    Pool.free(Mem, Bytes);
}

bool BlockMemory::allocate(uint64_t Asked) {
  Mem = Pool.allocate(Asked);
  Bytes = Asked;
  return Mem != nullptr;
}
