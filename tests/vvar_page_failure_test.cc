// The vvar area's creation under every failure of the system calls it
// makes: each step (memfd_create, ftruncate, mmap) is made to fail in
// turn, through the linker's --wrap, and every failure must come back as
// an error that leaves no file descriptor and no mapping behind, as must
// a page created and destroyed. A leak per failed or freed page is what a
// long fuzzing or property run (thousands of pages) dies of.

#include <dirent.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "vdso/vvar_page.h"

namespace {

// -1: count calls only; n >= 0: the call with that index fails.
int g_fail_at = -1;
int g_calls = 0;

bool FailHere() { return g_calls++ == g_fail_at; }

}  // namespace

extern "C" {
int __real_memfd_create(const char* name, unsigned int flags);
int __real_ftruncate(int fd, off_t length);
void* __real_mmap(void* addr, size_t length, int prot, int flags, int fd,
                  off_t offset);

int __wrap_memfd_create(const char* name, unsigned int flags) {
  if (FailHere()) {
    errno = EMFILE;
    return -1;
  }
  return __real_memfd_create(name, flags);
}
int __wrap_ftruncate(int fd, off_t length) {
  if (FailHere()) {
    errno = ENOSPC;
    return -1;
  }
  return __real_ftruncate(fd, length);
}
void* __wrap_mmap(void* addr, size_t length, int prot, int flags, int fd,
                  off_t offset) {
  if (FailHere()) {
    errno = ENOMEM;
    return MAP_FAILED;
  }
  return __real_mmap(addr, length, prot, flags, fd, offset);
}
}

namespace vdsolab::vdso {
namespace {

int OpenFds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (readdir(d) != nullptr) ++n;
  closedir(d);
  return n;
}

int Mappings() {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) ++n;
  return n;
}

using Factory = absl::StatusOr<std::unique_ptr<VvarPage>> (*)();

// The number of wrapped calls a successful creation makes.
int StepsOf(Factory make) {
  g_fail_at = -1;
  g_calls = 0;
  {
    auto page = make();
    EXPECT_TRUE(page.ok()) << page.status();
  }
  return g_calls;
}

void CheckEveryFailure(Factory make, const char* name) {
  const int steps = StepsOf(make);
  // memfd_create, ftruncate and mmap at least once each.
  ASSERT_GE(steps, 3) << name;
  for (int k = 0; k < steps; ++k) {
    SCOPED_TRACE(testing::Message()
                 << name << ", step " << k << " of " << steps << " fails");
    const int fds = OpenFds();
    const int maps = Mappings();
    g_fail_at = k;
    g_calls = 0;
    absl::StatusOr<std::unique_ptr<VvarPage>> page = make();
    g_fail_at = -1;
    EXPECT_FALSE(page.ok());
    if (!page.ok()) {
      EXPECT_EQ(page.status().code(), absl::StatusCode::kResourceExhausted);
    }
    page = absl::UnknownError("released");
    EXPECT_EQ(OpenFds(), fds) << "a file descriptor leaked";
    EXPECT_EQ(Mappings(), maps) << "a mapping leaked";
  }
}

TEST(VvarPageFailure, CreateLeaksNothingWhicheverStepFails) {
  CheckEveryFailure(&VvarPage::Create, "Create()");
}

TEST(VvarPageFailure, TimensViewLeaksNothingWhicheverStepFails) {
  CheckEveryFailure(&VvarPage::CreateWithTimensView, "CreateWithTimensView()");
}

// A process whose standard input is closed (a daemon's): the area's first
// descriptor is then 0, which every failure path must close too.
TEST(VvarPageFailure, LeaksNothingWhenItsDescriptorIsZero) {
  const int saved = dup(0);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(close(0), 0);
  CheckEveryFailure(&VvarPage::Create, "Create() on fd 0");
  CheckEveryFailure(&VvarPage::CreateWithTimensView,
                    "CreateWithTimensView() on fd 0");
  ASSERT_EQ(dup2(saved, 0), 0);
  close(saved);
}

// Created and destroyed, many times: the destructor returns everything.
TEST(VvarPageFailure, DestroyedPagesLeaveNothing) {
  for (Factory make : {&VvarPage::Create, &VvarPage::CreateWithTimensView}) {
    {
      auto warm = make();
      ASSERT_TRUE(warm.ok());
    }
    const int fds = OpenFds();
    const int maps = Mappings();
    for (int i = 0; i < 64; ++i) {
      auto page = make();
      ASSERT_TRUE(page.ok()) << page.status();
      EXPECT_EQ(VvarPage::Find((*page)->data()), page->get());
    }
    EXPECT_EQ(OpenFds(), fds) << "a file descriptor leaked";
    EXPECT_EQ(Mappings(), maps) << "a mapping leaked";
  }
}

}  // namespace
}  // namespace vdsolab::vdso
