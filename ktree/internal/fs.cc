#include "ktree/internal/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "ktree/internal/text.h"

namespace vdsolab::ktree::internal {
namespace {

absl::Status Errno(const std::string& what, const std::string& path, int err) {
  return absl::InternalError(
      absl::StrFormat("%s %s: %s", what, path, std::strerror(err)));
}

// A unique name next to `path` for a temporary.
std::string TempName(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return absl::StrFormat("%s.tmp.%d.%d", path, getpid(), ++counter);
}

absl::Status WriteAll(int fd, const char* p, size_t n,
                      const std::string& path) {
  while (n != 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Errno("writing", path, errno);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

absl::Status WriteNew(const std::string& path, const std::string& content,
                      mode_t mode) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Errno("creating", path, errno);
  absl::Status s = WriteAll(fd, content.data(), content.size(), path);
  if (close(fd) != 0 && s.ok()) s = Errno("closing", path, errno);
  return s;
}

absl::Status CopyEntry(const std::string& from, const std::string& to,
                       const struct stat& st) {
  if (S_ISLNK(st.st_mode)) {
    char buf[PATH_MAX];
    const ssize_t n = readlink(from.c_str(), buf, sizeof(buf) - 1);
    if (n < 0) return Errno("reading link", from, errno);
    buf[n] = '\0';
    if (symlink(buf, to.c_str()) != 0) return Errno("linking", to, errno);
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> content = ReadFile(from);
  if (!content.ok()) return content.status();
  return WriteNew(to, *content, st.st_mode & 0777);
}

}  // namespace

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) {
      return absl::NotFoundError(absl::StrFormat("%s: no such file", path));
    }
    return Errno("opening", path, e);
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      close(fd);
      return Errno("reading", path, e);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

absl::Status WriteFileAtomic(const std::string& path,
                             const std::string& content) {
  const std::string tmp = TempName(path);
  if (absl::Status s = WriteNew(tmp, content, 0644); !s.ok()) {
    unlink(tmp.c_str());
    return s;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    unlink(tmp.c_str());
    return Errno("renaming into", path, e);
  }
  return absl::OkStatus();
}

absl::Status CopyFileAtomic(const std::string& from, const std::string& to) {
  struct stat st;
  if (stat(from.c_str(), &st) != 0) return Errno("reading", from, errno);
  absl::StatusOr<std::string> content = ReadFile(from);
  if (!content.ok()) return content.status();
  const std::string tmp = TempName(to);
  if (absl::Status s = WriteNew(tmp, *content, st.st_mode & 0777); !s.ok()) {
    unlink(tmp.c_str());
    return s;
  }
  if (rename(tmp.c_str(), to.c_str()) != 0) {
    const int e = errno;
    unlink(tmp.c_str());
    return Errno("renaming into", to, e);
  }
  return absl::OkStatus();
}

absl::Status MakeDirs(const std::string& path) {
  if (path.empty() || IsDirectory(path)) return absl::OkStatus();
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash != 0) {
    if (absl::Status s = MakeDirs(path.substr(0, slash)); !s.ok()) return s;
  }
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return Errno("creating directory", path, errno);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> MakeTempDir(const std::string& parent,
                                        const std::string& prefix) {
  if (absl::Status s = MakeDirs(parent); !s.ok()) return s;
  std::string tmpl = JoinPath(parent, prefix + "XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) {
    return Errno("creating a directory in", parent, errno);
  }
  return tmpl;
}

void RemoveTree(const std::string& path) {
  if (!Exists(path)) return;
  nftw(
      path.c_str(),
      [](const char* p, const struct stat*, int, struct FTW*) {
        remove(p);
        return 0;
      },
      64, FTW_DEPTH | FTW_PHYS);
}

absl::StatusOr<std::string> RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf) == nullptr) {
    const int e = errno;
    if (e == ENOENT) {
      return absl::NotFoundError(
          absl::StrFormat("%s: no such file or directory", path));
    }
    return Errno("resolving", path, e);
  }
  return std::string(buf);
}

std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return NormalizePath(path);
  char buf[PATH_MAX];
  if (getcwd(buf, sizeof(buf)) == nullptr) return path;
  return NormalizePath(JoinPath(buf, path));
}

std::string NormalizePath(const std::string& path) {
  std::vector<std::string> parts;
  for (std::string_view p : Split(path, '/')) {
    if (p.empty() || p == ".") continue;
    if (p == ".." && !parts.empty() && parts.back() != "..") {
      parts.pop_back();
    } else {
      parts.emplace_back(p);
    }
  }
  const std::string joined = Join(parts, "/");
  if (!path.empty() && path[0] == '/') return "/" + joined;
  return joined.empty() ? "." : joined;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string JoinPath(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  if (a.back() == '/') return a + b;
  return a + "/" + b;
}

absl::StatusOr<int> MirrorTree(const std::string& from_root,
                               const std::string& to_root,
                               const std::string& rel) {
  const std::string from = JoinPath(from_root, rel);
  const std::string to = JoinPath(to_root, rel);
  struct stat st;
  if (lstat(from.c_str(), &st) != 0) return Errno("reading", from, errno);
  if (S_ISDIR(st.st_mode)) {
    if (absl::Status s = MakeDirs(to); !s.ok()) return s;
    absl::StatusOr<std::vector<std::string>> names = ListDir(from);
    if (!names.ok()) return names.status();
    int copied = 0;
    for (const std::string& n : *names) {
      absl::StatusOr<int> c = MirrorTree(from_root, to_root, JoinPath(rel, n));
      if (!c.ok()) return c.status();
      copied += *c;
    }
    return copied;
  }
  if (const size_t slash = to.find_last_of('/'); slash != std::string::npos) {
    if (absl::Status s = MakeDirs(to.substr(0, slash)); !s.ok()) return s;
  }
  if (linkat(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), 0) == 0) return 0;
  if (errno != EXDEV && errno != EPERM && errno != EMLINK) {
    return Errno("linking", to, errno);
  }
  if (absl::Status s = CopyEntry(from, to, st); !s.ok()) return s;
  return 1;
}

absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return Errno("listing", dir, errno);
  std::vector<std::string> out;
  while (struct dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  return out;
}

absl::StatusOr<bool> RenameIntoPlace(const std::string& from,
                                     const std::string& to) {
  if (Exists(to)) {
    RemoveTree(from);
    return false;
  }
  if (rename(from.c_str(), to.c_str()) != 0) {
    const int e = errno;
    if (e == ENOTEMPTY || e == EEXIST) {
      RemoveTree(from);
      return false;
    }
    return Errno("renaming into", to, e);
  }
  return true;
}

}  // namespace vdsolab::ktree::internal
