#include "vdso/vvar_page.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/bytes.h"
#include "common/clockid.h"
#include "vdso/datapage.h"

static_assert(vdsolab::vdso::VvarPage::kPages ==
              vdsolab::vdso::kVvarDataPages + vdsolab::vdso::kVvarVclockPages);

namespace vdsolab::vdso {

namespace {

// Every live page by data(), for VvarPage::Find().
struct Registry {
  std::mutex mu;
  std::map<const uint8_t*, const VvarPage*> pages;
};
Registry& Pages() {
  static auto* registry = new Registry;
  return *registry;
}
std::atomic<uint64_t> g_next_id{1};

constexpr size_t kGuard = VvarPage::kGuardBytes;

// Reserves `bytes` of address space between two guards, none of it
// accessible, and returns where the `bytes` start; nullptr if it cannot.
uint8_t* ReserveGuarded(size_t bytes) {
  void* r = mmap(nullptr, bytes + 2 * kGuard, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return r == MAP_FAILED ? nullptr : static_cast<uint8_t*>(r) + kGuard;
}

void ReleaseGuarded(uint8_t* start, size_t bytes) {
  munmap(start - kGuard, bytes + 2 * kGuard);
}

// Maps `pages` pages of `fd` from page `from` at `at` (MAP_FIXED), read
// only: the readers' view.
bool MapAt(uint8_t* at, int fd, size_t from, size_t pages) {
  return mmap(at, pages * kPageSize, PROT_READ, MAP_SHARED | MAP_FIXED, fd,
              static_cast<off_t>(from * kPageSize)) == at;
}

// Makes the pages of the readers' mapping at `at` that the kernel does not
// map (VvarUnreadablePage()) inaccessible, so that a reader's load there
// faults as it would (SIGBUS there, SIGSEGV here). In a namespace view
// (`view`), page 1 is the real time page, which stays readable.
bool ProtectUnreadable(uint8_t* at, bool view) {
  for (size_t page = 0; page < VvarPage::kPages; ++page) {
    if (VvarUnreadablePage(page * kPageSize) == nullptr) continue;
    if (view && page == 1) continue;
    if (mprotect(at + page * kPageSize, kPageSize, PROT_NONE) != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<VvarPage>> VvarPage::Create() {
  // A memfd mapped shared gives page alignment and zeroed memory, lets later
  // tools change the protection of their own mapping of it (to trap loads of
  // unmodified vDSO code), and lets another process map the same pages.
  // MFD_CLOEXEC: programs this process runs do not inherit it.
  const int fd = memfd_create("vdsolab-vvar", MFD_CLOEXEC);
  if (fd < 0) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "memfd_create for the vvar area failed: %s", strerror(errno)));
  }
  const size_t bytes = kPages * kPageSize;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    close(fd);
    return absl::ResourceExhaustedError(
        absl::StrFormat("sizing the vvar area failed: %s", strerror(err)));
  }
  // The writer's mapping, and the readers' read-only one: user space cannot
  // write the kernel's vvar pages, so a reader that stores to its page
  // faults here too (a crash finding, for foreign code).
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mem == MAP_FAILED) {
    const int err = errno;
    close(fd);
    return absl::ResourceExhaustedError(
        absl::StrFormat("mmap of the vvar area failed: %s", strerror(err)));
  }
  uint8_t* ro = ReserveGuarded(bytes);
  if (ro == nullptr || !MapAt(ro, fd, 0, kPages) ||
      !ProtectUnreadable(ro, false)) {
    const int err = errno;
    if (ro != nullptr) ReleaseGuarded(ro, bytes);
    munmap(mem, bytes);
    close(fd);
    return absl::ResourceExhaustedError(
        absl::StrFormat("mmap of the vvar area failed: %s", strerror(err)));
  }
  std::unique_ptr<VvarPage> page(
      new VvarPage(ro, static_cast<uint8_t*>(mem), fd,
                   g_next_id.fetch_add(1, std::memory_order_relaxed)));
  Registry& r = Pages();
  std::lock_guard<std::mutex> lock(r.mu);
  r.pages[page->data()] = page.get();
  return page;
}

namespace {

// A shared, zeroed memory object of `pages` pages, or -1.
int SharedPages(const char* name, size_t pages) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (ftruncate(fd, static_cast<off_t>(pages * kPageSize)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<VvarPage>> VvarPage::CreateWithTimensView() {
  const int fd = SharedPages("vdsolab-vvar", kPages);
  const int ns_fd = SharedPages("vdsolab-timens", 1);
  auto fail = [&](const char* what) {
    const int err = errno;
    if (fd >= 0) close(fd);
    if (ns_fd >= 0) close(ns_fd);
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s for the time namespace view failed: %s", what, strerror(err)));
  };
  if (fd < 0 || ns_fd < 0) return fail("memfd_create");
  // Reserve both areas, then map the shared pages over them.
  uint8_t* base = ReserveGuarded(2 * kPages * kPageSize);
  if (base == nullptr) return fail("mmap");
  uint8_t* view = base + kPages * kPageSize;
  // The namespace task's view (vvar_fault() in a time namespace): page 0
  // the namespace's page, page 1 the real time page, then the random and
  // arch pages and the vclock pages where they always are.
  const bool mapped = MapAt(base, fd, 0, kPages) && MapAt(view, ns_fd, 0, 1) &&
                      MapAt(view + kPageSize, fd, 0, 1) &&
                      MapAt(view + 2 * kPageSize, fd, 2, kPages - 2) &&
                      ProtectUnreadable(base, false) &&
                      ProtectUnreadable(view, true);
  if (!mapped) {
    ReleaseGuarded(base, 2 * kPages * kPageSize);
    return fail("mmap");
  }
  // The writer's mappings of both.
  void* write = mmap(nullptr, kPages * kPageSize, PROT_READ | PROT_WRITE,
                     MAP_SHARED, fd, 0);
  if (write == MAP_FAILED) {
    ReleaseGuarded(base, 2 * kPages * kPageSize);
    return fail("mmap");
  }
  void* ns_write =
      mmap(nullptr, kPageSize, PROT_READ | PROT_WRITE, MAP_SHARED, ns_fd, 0);
  if (ns_write == MAP_FAILED) {
    munmap(write, kPages * kPageSize);
    ReleaseGuarded(base, 2 * kPages * kPageSize);
    return fail("mmap");
  }
  std::unique_ptr<VvarPage> page(
      new VvarPage(base, static_cast<uint8_t*>(write), fd,
                   g_next_id.fetch_add(1, std::memory_order_relaxed)));
  page->timens_ = view;
  page->timens_write_ = static_cast<uint8_t*>(ns_write);
  page->timens_fd_ = ns_fd;
  Registry& r = Pages();
  std::lock_guard<std::mutex> lock(r.mu);
  r.pages[page->data()] = page.get();
  return page;
}

VvarPage::~VvarPage() {
  {
    Registry& r = Pages();
    std::lock_guard<std::mutex> lock(r.mu);
    r.pages.erase(base_);
  }
  // With a namespace view, base_ starts the reservation of both areas.
  ReleaseGuarded(base_, ReadersBytes());
  munmap(write_, kPages * kPageSize);
  if (timens_write_ != nullptr) munmap(timens_write_, kPageSize);
  close(fd_);
  if (timens_fd_ >= 0) close(timens_fd_);
}

size_t VvarPage::ReadersBytes() const {
  return (timens_ == nullptr ? 1 : 2) * kPages * kPageSize;
}

uintptr_t VvarPage::GuardedAreaReaching(uintptr_t lo, uintptr_t hi) {
  Registry& r = Pages();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& [data, page] : r.pages) {
    const auto base = reinterpret_cast<uintptr_t>(data);
    if (lo < base + page->ReadersBytes() + kGuard && hi > base - kGuard) {
      return base;
    }
  }
  return 0;
}

std::optional<int64_t> VvarPage::OffsetInGuardedArea(uintptr_t address) {
  const uintptr_t base = GuardedAreaReaching(address, address + 1);
  if (base == 0) return std::nullopt;
  return static_cast<int64_t>(address - base);
}

bool VvarPage::OverlapsGuardedArea(uintptr_t lo, uintptr_t hi) {
  return GuardedAreaReaching(lo, hi) != 0;
}

const VvarPage* VvarPage::Find(const uint8_t* data) {
  Registry& r = Pages();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.pages.find(data);
  return it == r.pages.end() ? nullptr : it->second;
}

void VvarPage::StoreTimens(uint32_t offset, uint8_t size, uint64_t value) {
  if (timens_ == nullptr || offset + size > kPageSize) return;
  StoreSized(timens_write_ + offset, size, value);
}

void VvarPage::ApplyTimens(const VvarUpdate& update) {
  for (const VvarStore& s : update.stores) {
    StoreTimens(s.offset, s.size, s.value);
  }
}

void VvarPage::Store(uint32_t offset, uint8_t size, uint64_t value) {
  StoreSized(write_ + offset, size, value);
}

void VvarPage::StoreSized(uint8_t* p, uint8_t size, uint64_t value) {
  // Relaxed atomic stores are plain movs on x86 and keep a concurrent native
  // reader (benchmarks) free of data races.
  switch (size) {
    case 1:
      __atomic_store_n(p, static_cast<uint8_t>(value), __ATOMIC_RELAXED);
      break;
    case 2:
      __atomic_store_n(reinterpret_cast<uint16_t*>(p),
                       static_cast<uint16_t>(value), __ATOMIC_RELAXED);
      break;
    case 4:
      __atomic_store_n(reinterpret_cast<uint32_t*>(p),
                       static_cast<uint32_t>(value), __ATOMIC_RELAXED);
      break;
    default:
      __atomic_store_n(reinterpret_cast<uint64_t*>(p), value, __ATOMIC_RELAXED);
      break;
  }
}

void VvarPage::CopyIn(uint32_t offset, const uint8_t* bytes, size_t n) {
  std::memcpy(write_ + offset, bytes, n);
}

void VvarPage::Apply(const VvarUpdate& update) {
  for (const VvarStore& store : update.stores) Apply(store);
}

uint64_t VvarPage::Load(uint32_t offset, uint8_t size) const {
  // The writer's mapping: the readers' leaves the pages the kernel does not
  // map unreadable.
  return LoadSized(write_ + offset, size);
}

namespace {

constexpr uint32_t kClockSize = sizeof(VdsoClock);
constexpr uint32_t kTimestampSize = sizeof(VdsoTimestamp);

std::string DescribeClockField(uint32_t rel) {
  switch (rel) {
    case kVcSeq:
      return "seq";
    case kVcClockMode:
      return "clock_mode";
    case kVcCycleLast:
      return "cycle_last";
    case kVcMaxCycles:
      return "max_cycles";
    case kVcMask:
      return "mask";
    case kVcMult:
      return "mult";
    case kVcShift:
      return "shift";
    default:
      break;
  }
  if (rel >= VcBasetimeSec(0) && rel < kClockSize) {
    const uint32_t idx = (rel - VcBasetimeSec(0)) / kTimestampSize;
    const uint32_t part = (rel - VcBasetimeSec(0)) % kTimestampSize;
    return absl::StrFormat("basetime[%s].%s",
                           ClockName(static_cast<ClockId>(idx)),
                           part == 0 ? "sec" : "nsec");
  }
  return absl::StrFormat("+%u", rel);
}

}  // namespace

std::string DescribeVvarOffset(uint32_t offset) {
  if (offset >= kPvclockPageOffset && offset < kHvclockPageOffset) {
    switch (offset - kPvclockPageOffset) {
      case kPvtiVersion:
        return "pvti.version";
      case kPvtiTscTimestamp:
        return "pvti.tsc_timestamp";
      case kPvtiSystemTime:
        return "pvti.system_time";
      case kPvtiMul:
        return "pvti.tsc_to_system_mul";
      case kPvtiShift:
        return "pvti.tsc_shift";
      case kPvtiFlags:
        return "pvti.flags";
      default:
        return absl::StrFormat("pvclock page +0x%x",
                               offset - kPvclockPageOffset);
    }
  }
  if (offset < AuxClockDataOffset(0)) {
    return absl::StrFormat("clock_data[%u].%s", offset / kClockSize,
                           DescribeClockField(offset % kClockSize));
  }
  if (offset < kTzMinuteswest) {
    const uint32_t rel = offset - AuxClockDataOffset(0);
    return absl::StrFormat("aux_clock_data[%u].%s", rel / kClockSize,
                           DescribeClockField(rel % kClockSize));
  }
  switch (offset) {
    case kTzMinuteswest:
      return "tz_minuteswest";
    case kTzDsttime:
      return "tz_dsttime";
    case kHrtimerRes:
      return "hrtimer_res";
    default:
      return absl::StrFormat("+0x%x", offset);
  }
}

std::string DescribeVvarStore(const VvarStore& store) {
  return absl::StrFormat("%s%s = %#x (u%d)", store.wmb_before ? "wmb; " : "",
                         DescribeVvarOffset(store.offset), store.value,
                         store.size * 8);
}

}  // namespace vdsolab::vdso
