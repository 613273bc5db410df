#include "ktree/internal/diagnostics.h"

#include <algorithm>

#include "ktree/internal/fs.h"
#include "ktree/internal/text.h"

namespace vdsolab::ktree::internal {
namespace {

bool EndsPath(char c) {
  return IsSpace(c) || c == ':' || c == '\'' || c == '"' || c == ')' ||
         c == '(' || c == ',' || c == '`';
}

}  // namespace

std::string RewritePaths(std::string_view text,
                         std::vector<PathPrefix> prefixes) {
  std::sort(prefixes.begin(), prefixes.end(),
            [](const PathPrefix& a, const PathPrefix& b) {
              return a.from.size() > b.from.size();
            });
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    bool replaced = false;
    for (const PathPrefix& p : prefixes) {
      if (p.from.empty() || text.compare(i, p.from.size(), p.from) != 0) {
        continue;
      }
      const size_t after = i + p.from.size();
      if (after < text.size() && text[after] != '/' && !EndsPath(text[after])) {
        continue;  // A longer directory name that starts the same.
      }
      size_t end = after;
      while (end < text.size() && !EndsPath(text[end])) ++end;
      std::string rel(text.substr(after, end - after));
      while (!rel.empty() && rel[0] == '/') rel.erase(0, 1);
      rel = rel.empty() ? "" : NormalizePath(rel);
      out += p.to.empty() ? rel : (rel.empty() ? p.to : p.to + "/" + rel);
      i = end;
      replaced = true;
      break;
    }
    if (!replaced) out.push_back(text[i++]);
  }
  return out;
}

std::string FirstError(std::string_view text) {
  for (std::string_view line : Split(text, '\n')) {
    if (Contains(line, ": error: ") || Contains(line, ": fatal error: ")) {
      return std::string(Trim(line));
    }
  }
  for (std::string_view line : Split(text, '\n')) {
    if (Contains(line, "error:")) return std::string(Trim(line));
  }
  return "";
}

std::vector<std::string> ParseDepFile(std::string_view text) {
  std::vector<std::string> deps;
  std::string cur;
  bool first = true;  // The target ("x.o:") is not a dependency.
  auto flush = [&] {
    if (cur.empty()) return;
    if (first) {
      first = false;
      if (cur.back() == ':') {
        cur.clear();
        return;
      }
    }
    if (cur.back() == ':') cur.pop_back();  // Phony targets (-MP).
    if (!cur.empty()) deps.push_back(cur);
    cur.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] == '\n') {
        ++i;
        flush();
        continue;
      }
      if (text[i + 1] == ' ') {
        cur.push_back(' ');
        ++i;
        continue;
      }
    }
    if (IsSpace(c)) {
      flush();
    } else {
      cur.push_back(c);
    }
  }
  flush();
  // -MD lists each file once, but phony targets repeat them.
  std::vector<std::string> unique;
  for (const std::string& d : deps) {
    if (std::find(unique.begin(), unique.end(), d) == unique.end()) {
      unique.push_back(d);
    }
  }
  return unique;
}

}  // namespace vdsolab::ktree::internal
