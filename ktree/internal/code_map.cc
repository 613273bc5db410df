#include "ktree/internal/code_map.h"

#include <deque>
#include <map>
#include <string>

#include "common/sha256.h"
#include "ktree/internal/text.h"

namespace vdsolab::ktree::internal {
namespace {

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$';
}

// The identifiers of a line, in order (".L12", "call", "do_hres", ...).
std::vector<std::string_view> Identifiers(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    if (!IsIdentChar(line[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < line.size() && IsIdentChar(line[j])) ++j;
    out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

// `line` with each local label (".L<letters><digits>") replaced by its
// number in `labels`' order of first appearance.
std::string Renumbered(std::string_view line,
                       std::map<std::string, int>* labels) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    if (line.substr(i, 2) == ".L" && (i == 0 || !IsIdentChar(line[i - 1]))) {
      size_t j = i + 2;
      while (j < line.size() && IsIdentChar(line[j])) ++j;
      const std::string label(line.substr(i, j - i));
      const auto [it, added] =
          labels->emplace(label, static_cast<int>(labels->size()));
      out += ".L#" + std::to_string(it->second);
      i = j;
      continue;
    }
    out += line[i++];
  }
  return out;
}

// "NAME" of "\t.type\tNAME, @function" (or "%function"), else "".
std::string_view FunctionType(std::string_view t) {
  if (!t.starts_with(".type")) return "";
  std::vector<std::string_view> ids = Identifiers(t.substr(5));
  if (ids.size() < 2 || ids[1] != "function") return "";
  return ids[0];
}

// A data directive whose operands may name a function (a table of
// function pointers); other directives (.globl, .set, .size) only declare.
bool IsDataDirective(std::string_view t) {
  for (std::string_view d : {".quad", ".long", ".8byte", ".4byte", ".dc.a"}) {
    if (t.starts_with(d)) return true;
  }
  return false;
}

struct Body {
  Sha256 hash;
  std::map<std::string, int> labels;
  std::set<std::string> refs;
};

}  // namespace

CodeMap MapCode(std::string_view assembly,
                const std::vector<std::string>& entries) {
  std::vector<std::string_view> lines = Split(assembly, '\n');
  std::set<std::string, std::less<>> names;
  for (std::string_view line : lines) {
    const std::string_view name = FunctionType(TrimLeft(line));
    if (!name.empty()) names.emplace(name);
  }
  std::map<std::string, Body> bodies;
  std::string current = kOutsideFunctions;
  for (std::string_view line : lines) {
    const std::string_view t = Trim(line);
    if (t.empty() || t.starts_with("#") || t.starts_with(".file") ||
        t.starts_with(".ident")) {
      continue;
    }
    // "NAME:" (GCC), "NAME:    # @NAME" (Clang).
    const std::string_view head = t.substr(0, t.find_first_of(" \t#"));
    if (head.size() > 1 && head.back() == ':' &&
        names.count(head.substr(0, head.size() - 1)) != 0) {
      current = std::string(head.substr(0, head.size() - 1));
    }
    Body& body = bodies[current];
    body.hash.Update(Renumbered(t, &body.labels));
    body.hash.Update("\n");
    if (current != kOutsideFunctions || IsDataDirective(t)) {
      for (std::string_view id : Identifiers(t)) {
        if (id != current && names.count(id) != 0) body.refs.emplace(id);
      }
    }
    if (t.starts_with(".size") && current != kOutsideFunctions) {
      std::vector<std::string_view> ids = Identifiers(t.substr(5));
      if (!ids.empty() && ids[0] == current) current = kOutsideFunctions;
    }
  }
  CodeMap map;
  for (auto& [name, body] : bodies) {
    map.functions[name] = Sha256::Hex(body.hash.Finish()).substr(0, 16);
  }
  std::deque<std::string> todo(entries.begin(), entries.end());
  todo.push_back(kOutsideFunctions);
  while (!todo.empty()) {
    const std::string f = todo.front();
    todo.pop_front();
    if (!map.reached.insert(f).second) continue;
    auto it = bodies.find(f);
    if (it == bodies.end()) continue;
    for (const std::string& r : it->second.refs) todo.push_back(r);
  }
  // A function's cold part (GCC's "NAME.cold") is entered by local jumps,
  // not by name: reached with its function.
  for (const auto& [name, hash] : map.functions) {
    const size_t cold = name.find(".cold");
    if (cold != std::string::npos && map.reached.count(name.substr(0, cold))) {
      map.reached.insert(name);
    }
  }
  // Only what the assembly defines: the entry or data may be absent.
  for (auto it = map.reached.begin(); it != map.reached.end();) {
    it = map.functions.count(*it) != 0 ? std::next(it) : map.reached.erase(it);
  }
  return map;
}

std::vector<std::string> ChangedFunctions(const CodeMap& base,
                                          const CodeMap& patched) {
  std::set<std::string> changed;
  for (const auto& [name, hash] : patched.functions) {
    auto it = base.functions.find(name);
    if (it == base.functions.end() || it->second != hash) changed.insert(name);
  }
  for (const auto& [name, hash] : base.functions) {
    if (patched.functions.count(name) == 0) changed.insert(name);
  }
  return {changed.begin(), changed.end()};
}

std::string FormatFunctions(const CodeMap& map) {
  std::string out;
  for (const auto& [name, hash] : map.functions) {
    out += (out.empty() ? "" : " ") + name + ":" + hash;
  }
  return out;
}

std::string FormatReached(const CodeMap& map) {
  std::string out;
  for (const std::string& name : map.reached) {
    out += (out.empty() ? "" : " ") + name;
  }
  return out;
}

CodeMap ParseCodeMap(std::string_view functions, std::string_view reached) {
  CodeMap map;
  for (std::string_view item : Split(functions, ' ')) {
    const size_t colon = item.rfind(':');
    if (item.empty() || colon == std::string_view::npos) continue;
    map.functions[std::string(item.substr(0, colon))] =
        std::string(item.substr(colon + 1));
  }
  for (std::string_view name : Split(reached, ' ')) {
    if (!name.empty()) map.reached.emplace(name);
  }
  return map;
}

}  // namespace vdsolab::ktree::internal
