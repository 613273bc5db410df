// File: vdso/vvar_page.h
//
// The simulated vvar area as bytes, and a vvar update as the ordered list of
// stores the kernel's writer makes (design rules 1 and 3).
//
// A VvarUpdate is built by the writer (timekeeper/vsyscall.h) and applied by
// whoever owns the page: all at once, or one store at a time with reader
// loads in between. On x86 (TSO) stores become visible in program order, so
// applying a prefix of the list is exactly what a concurrent reader can see.

#ifndef VDSOLAB_VDSO_VVAR_PAGE_H_
#define VDSOLAB_VDSO_VVAR_PAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace vdsolab::vdso {

// One store to the page: `size` bytes (1, 2, 4 or 8) of `value` at `offset`.
struct VvarStore {
  uint32_t offset = 0;
  uint8_t size = 0;
  uint64_t value = 0;
  // An smp_wmb() precedes this store. A compiler barrier on x86; kept so
  // that weakly ordered models can reorder only within barrier groups.
  bool wmb_before = false;

  friend bool operator==(const VvarStore&, const VvarStore&) = default;
};

// The stores of one writer critical section, in program order.
struct VvarUpdate {
  std::vector<VvarStore> stores;
};

// The vvar area in the x86-64 6.13+ arrangement (vdso/datapage.h): four
// data pages, the time data page first, then the pvclock and Hyper-V pages;
// page-aligned, zero-filled, writable only through Store()/Apply(): the
// readers' mapping (data(), timens_data()) is read-only, as the kernel's
// vvar pages are to user space; the writer stores through its own mapping
// of the same memory.
//
// The area is a memfd mapped shared, so that another process can map the
// same pages (the compiled vDSO's child process maps them next to its
// copy of the vDSO text, with its own protections: hostvdso/). Nothing is
// copied: a store here is visible there at once.
class VvarPage {
 public:
  static constexpr size_t kPages = 6;  // kVvarDataPages + kVvarVclockPages

  static absl::StatusOr<std::unique_ptr<VvarPage>> Create();
  // The same area, plus the view a task in a time namespace has of it
  // (lib/vdso/datastore.c's vvar_fault()): the namespace's page first, then
  // this area's time data page and the rest, mapped a second time, so the
  // writer's stores show through both. The namespace page starts zeroed.
  static absl::StatusOr<std::unique_ptr<VvarPage>> CreateWithTimensView();
  ~VvarPage();

  // The memfd behind this area (owned by the page; valid while it lives).
  int fd() const { return fd_; }
  // A number no other page of this process has had: another process that
  // mapped this page's fd can tell whether it still maps the current one.
  uint64_t id() const { return id_; }
  // The live page whose data() is `data`, or nullptr (readers get only the
  // data pointer; this finds the fd behind it).
  static const VvarPage* Find(const uint8_t* data);
  // Unmapped bytes on each side of every page's readers' area: a reader
  // that loads past its vvar area faults there (SIGSEGV, a crash finding),
  // as it would past the kernel's vvar and vDSO mappings, instead of
  // reading whatever vdsolab has mapped next to it.
  static constexpr size_t kGuardBytes = size_t{64} << 20;
  // An address in a live page's readers' area or its guards, as a signed
  // offset from the area's start (data()); nullopt elsewhere. Takes a lock:
  // not from a signal handler.
  static std::optional<int64_t> OffsetInGuardedArea(uintptr_t address);
  // Whether [lo, hi) reaches a live page's readers' area or its guards.
  // Takes the same lock; the call guard's SIGSYS handler asks, on a thread
  // that never holds it while foreign code runs (no VvarPage method calls
  // any).
  static bool OverlapsGuardedArea(uintptr_t lo, uintptr_t hi);
  VvarPage(const VvarPage&) = delete;
  VvarPage& operator=(const VvarPage&) = delete;

  // The first byte of the time data page, where readers start.
  const uint8_t* data() const { return base_; }
  // Where a time namespace task's readers start (its namespace page), or
  // nullptr without CreateWithTimensView(). Its time page is at +4096.
  const uint8_t* timens_data() const { return timens_; }
  // A store to the namespace page (timens_setup_vdso_clock_data()).
  void StoreTimens(uint32_t offset, uint8_t size, uint64_t value);
  void ApplyTimens(const VvarUpdate& update);
  size_t size() const { return kPages * 4096; }
  // Writes raw bytes (copying a live page in, for example).
  void CopyIn(uint32_t offset, const uint8_t* bytes, size_t n);

  // A single-copy-atomic store of `size` bytes, as the kernel's writer
  // makes it (plain mov on x86).
  void Store(uint32_t offset, uint8_t size, uint64_t value);
  void Apply(const VvarStore& store) {
    Store(store.offset, store.size, store.value);
  }
  void Apply(const VvarUpdate& update);

  // Writer-side reads (the writer reads its own seq, for example).
  uint64_t Load(uint32_t offset, uint8_t size) const;

 private:
  VvarPage(uint8_t* base, uint8_t* write, int fd, uint64_t id)
      : base_(base), write_(write), fd_(fd), id_(id) {}
  static void StoreSized(uint8_t* p, uint8_t size, uint64_t value);
  // The readers' mapping's length: the area, and the namespace view after
  // it when there is one.
  size_t ReadersBytes() const;
  // The data() of the live page whose readers' mapping or guards [lo, hi)
  // reaches, or 0.
  static uintptr_t GuardedAreaReaching(uintptr_t lo, uintptr_t hi);
  uint8_t* base_;   // The readers' mapping (read-only), inside its guards.
  uint8_t* write_;  // The writer's mapping of the same pages.
  int fd_;          // The area's memfd.
  uint64_t id_;
  uint8_t* timens_ = nullptr;        // kPages of view, when there is one.
  uint8_t* timens_write_ = nullptr;  // The writer's mapping of its page.
  int timens_fd_ = -1;               // The namespace page's memfd.
};

// "clock_data[0].basetime[CLOCK_MONOTONIC].nsec" for a page offset in the
// time data page; "+0x1234" for bytes no field covers.
std::string DescribeVvarOffset(uint32_t offset);

// "clock_data[0].seq = 0x1f (u32)".
std::string DescribeVvarStore(const VvarStore& store);

}  // namespace vdsolab::vdso

#endif  // VDSOLAB_VDSO_VVAR_PAGE_H_
