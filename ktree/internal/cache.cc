#include "ktree/internal/cache.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/sha256.h"
#include "ktree/internal/fs.h"
#include "ktree/internal/text.h"

namespace vdsolab::ktree::internal {

std::string FormatManifest(const Manifest& m) {
  std::string s = "result " + m.result + "\n";
  for (const Dependency& d : m.files) s += d.sha256 + " " + d.path + "\n";
  return s;
}

absl::StatusOr<Manifest> ParseManifest(const std::string& text) {
  Manifest m;
  for (std::string_view line : Split(text, '\n')) {
    if (line.empty()) continue;
    const size_t sp = line.find(' ');
    if (sp == std::string_view::npos) {
      return absl::DataLossError("malformed manifest line");
    }
    const std::string a(line.substr(0, sp));
    const std::string b(line.substr(sp + 1));
    if (a == "result") {
      m.result = b;
    } else {
      m.files.push_back({b, a});
    }
  }
  if (m.result.empty()) return absl::DataLossError("manifest without result");
  return m;
}

std::string HashDependency(const std::string& root, const std::string& path) {
  const std::string file =
      path.starts_with("sys:") ? path.substr(4) : JoinPath(root, path);
  if (!IsRegularFile(file)) return "absent";
  absl::StatusOr<std::string> h = Sha256File(file);
  return h.ok() ? *h : "unreadable";
}

std::optional<std::string> FindValidManifest(const std::string& key_dir,
                                             const std::string& root,
                                             int* checked) {
  absl::StatusOr<std::vector<std::string>> names = ListDir(key_dir);
  if (!names.ok()) return std::nullopt;
  for (const std::string& n : *names) {
    if (!n.ends_with(".manifest")) continue;
    absl::StatusOr<std::string> text = ReadFile(JoinPath(key_dir, n));
    if (!text.ok()) continue;
    absl::StatusOr<Manifest> m = ParseManifest(*text);
    if (!m.ok()) continue;
    bool valid = true;
    for (const Dependency& d : m->files) {
      ++*checked;
      if (HashDependency(root, d.path) != d.sha256) {
        valid = false;
        break;
      }
    }
    if (valid) return m->result;
  }
  return std::nullopt;
}

absl::Status StoreManifest(const std::string& key_dir, const Manifest& m) {
  if (absl::Status s = MakeDirs(key_dir); !s.ok()) return s;
  return WriteFileAtomic(JoinPath(key_dir, m.result + ".manifest"),
                         FormatManifest(m));
}

std::string FormatMeta(const std::map<std::string, std::string>& meta) {
  std::string s;
  for (const auto& [k, v] : meta) {
    std::string value = v;
    for (char& c : value) {
      if (c == '\n') c = ' ';
    }
    s += k + " " + value + "\n";
  }
  return s;
}

std::map<std::string, std::string> ParseMeta(const std::string& text) {
  std::map<std::string, std::string> meta;
  for (std::string_view line : Split(text, '\n')) {
    const size_t sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    meta[std::string(line.substr(0, sp))] = std::string(line.substr(sp + 1));
  }
  return meta;
}

}  // namespace vdsolab::ktree::internal
