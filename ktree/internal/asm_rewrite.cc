#include "ktree/internal/asm_rewrite.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "ktree/internal/text.h"

namespace vdsolab::ktree::internal {
namespace {

constexpr char kAltReplacement[] = ".altinstr_replacement";
constexpr char kUnusedReplacement[] = ".vdsolab_unused_altinstr_replacement";

// One statement of a line: [begin, end) of its text in the line.
struct Statement {
  size_t begin = 0;
  size_t end = 0;
};

// The code part of `line` (before an unquoted '#') split at unquoted ';'.
std::vector<Statement> SplitStatements(std::string_view line) {
  std::vector<Statement> out;
  bool quoted = false;
  size_t start = 0;
  size_t i = 0;
  for (; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == '#') {
      break;
    } else if (c == ';') {
      out.push_back({start, i});
      start = i + 1;
    }
  }
  out.push_back({start, i});
  return out;
}

bool IsLabelChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' ||
         c == '.' || c == '$';
}

// Splits a leading "label:" off `s` (trimmed); returns the label.
std::optional<std::string_view> TakeLabel(std::string_view& s) {
  size_t i = 0;
  while (i < s.size() && IsLabelChar(s[i])) ++i;
  if (i == 0 || i >= s.size() || s[i] != ':') return std::nullopt;
  const std::string_view label = s.substr(0, i);
  s = TrimLeft(s.substr(i + 1));
  return label;
}

bool IsPrefix(std::string_view m) {
  return m == "lock" || m == "rep" || m == "repe" || m == "repz" ||
         m == "repne" || m == "repnz" || m == "notrack" || m == "data16" ||
         m == "addr32";
}

// The mnemonic (lowercase, prefixes skipped) and the operand text.
std::pair<std::string, std::string_view> Mnemonic(std::string_view s) {
  for (;;) {
    const size_t sp = s.find_first_of(" \t");
    std::string m(s.substr(0, sp));
    for (char& c : m) c = static_cast<char>(std::tolower(c));
    const std::string_view rest = sp == std::string_view::npos
                                      ? std::string_view()
                                      : TrimLeft(s.substr(sp));
    if (!IsPrefix(m) || rest.empty()) return {m, rest};
    s = rest;
  }
}

struct Section {
  std::string name = ".text";
  bool exec = true;
  bool replacement = false;
};

enum class Kind { kOrdered, kPlain, kRdtscp, kSyscall, kPending };

struct Site {
  size_t line = 0;
  Statement stmt;
  Kind kind = Kind::kPending;
};

class Rewriter {
 public:
  absl::StatusOr<AsmRewrite> Run(std::string_view assembly) {
    for (std::string_view l : Split(assembly, '\n')) {
      lines_.emplace_back(l);
    }
    for (size_t l = 0; l < lines_.size(); ++l) {
      if (absl::Status s = Line(l); !s.ok()) return s;
    }
    EndBlock();
    return Emit();
  }

 private:
  absl::Status Line(size_t l) {
    std::string& line = lines_[l];
    const std::string_view trimmed = Trim(line);
    if (trimmed == "#APP") {
      in_app_ = true;
      block_ordered_ = false;
      return absl::OkStatus();
    }
    if (trimmed == "#NO_APP") {
      EndBlock();
      return absl::OkStatus();
    }
    for (const Statement& st : SplitStatements(line)) {
      std::string_view s =
          Trim(std::string_view(line).substr(st.begin, st.end - st.begin));
      if (s.empty()) continue;
      if (std::optional<std::string_view> label = TakeLabel(s)) {
        fence_ = false;
        if (!label->starts_with(".L") &&
            !std::isdigit(static_cast<unsigned char>((*label)[0]))) {
          function_ = std::string(*label);
        }
        if (s.empty()) continue;
      }
      const size_t at = static_cast<size_t>(s.data() - line.data());
      const Statement stmt{at, at + s.size()};
      if (s[0] == '.') {
        fence_ = false;
        Directive(l, stmt, s);
        continue;
      }
      if (absl::Status r = Instruction(l, stmt, s); !r.ok()) return r;
    }
    return absl::OkStatus();
  }

  // Section bookkeeping; .altinstr_replacement is renamed (non-executable).
  void Directive(size_t l, Statement stmt, std::string_view s) {
    const auto [d, args] = Mnemonic(s);
    if (d == ".section" || d == ".pushsection") {
      if (d == ".pushsection") stack_.push_back({cur_, prev_});
      prev_ = cur_;
      cur_ = Named(args);
      if (cur_.replacement) {
        replacement_directives_.push_back(
            {l, stmt, d + " " + kUnusedReplacement + ",\"a\",@progbits"});
      }
    } else if (d == ".popsection") {
      if (!stack_.empty()) {
        cur_ = stack_.back().first;
        prev_ = stack_.back().second;
        stack_.pop_back();
      }
    } else if (d == ".previous") {
      std::swap(cur_, prev_);
    } else if (d == ".text" || d == ".data" || d == ".bss") {
      prev_ = cur_;
      cur_ = Named(d);
    } else if (d == ".type" && Contains(args, "@function")) {
      function_ = std::string(Trim(args.substr(0, args.find(','))));
    }
  }

  Section Named(std::string_view args) {
    const std::vector<std::string_view> parts = Split(args, ',');
    Section s;
    s.name = std::string(Trim(parts[0]));
    std::optional<std::string_view> flags;
    if (parts.size() > 1) {
      std::string_view f = Trim(parts[1]);
      if (f.starts_with('"')) {
        f.remove_prefix(1);
        flags = f.substr(0, f.find('"'));
      }
    }
    s.replacement = s.name == kAltReplacement;
    if (s.replacement) {
      s.exec = false;
    } else if (flags) {
      s.exec = flags->find('x') != std::string_view::npos;
      exec_[s.name] = s.exec;
    } else if (auto it = exec_.find(s.name); it != exec_.end()) {
      s.exec = it->second;
    } else {
      s.exec = s.name.starts_with(".text");
    }
    return s;
  }

  absl::Status Instruction(size_t l, Statement stmt, std::string_view s) {
    const auto [m, operands] = Mnemonic(s);
    const bool was_fence = fence_;
    fence_ = m == "lfence" || m == "mfence";
    if (!cur_.exec) {
      // Inside an alternative's replacements: what the site would become.
      if (in_app_ && cur_.replacement &&
          ((m == "rdtsc" && was_fence) || m == "rdtscp")) {
        block_ordered_ = true;
      }
      return absl::OkStatus();
    }
    if (m == "rdtsc") {
      Kind k = was_fence ? Kind::kOrdered
                         : (in_app_ ? Kind::kPending : Kind::kPlain);
      sites_.push_back({l, stmt, k});
      if (k == Kind::kPending) block_sites_.push_back(sites_.size() - 1);
    } else if (m == "rdtscp") {
      sites_.push_back({l, stmt, Kind::kRdtscp});
    } else if (m == "syscall") {
      sites_.push_back({l, stmt, Kind::kSyscall});
    } else if (m == "sysenter" || m == "int80" ||
               (m == "int" && (operands == "$0x80" || operands == "$128"))) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "`%s` in %s: a system call vdsolab cannot answer (only the x86-64 "
          "`syscall` instruction is rewritten)",
          std::string(s), function_.empty() ? "the object" : function_));
    }
    return absl::OkStatus();
  }

  // An inline asm block ends: its bare rdtsc sites are rdtsc_ordered() if
  // the block's alternatives replace them with an ordered read.
  void EndBlock() {
    for (size_t i : block_sites_) {
      sites_[i].kind = block_ordered_ ? Kind::kOrdered : Kind::kPlain;
    }
    block_sites_.clear();
    in_app_ = false;
    block_ordered_ = false;
  }

  // A replacement of a statement's text.
  struct Edit {
    size_t line;
    Statement stmt;
    std::string text;
  };

  absl::StatusOr<AsmRewrite> Emit() {
    AsmRewrite out;
    std::vector<Edit> edits;
    for (const Site& s : sites_) {
      const char* thunk = kThunkPlain;
      switch (s.kind) {
        case Kind::kOrdered:
          thunk = kThunkOrdered;
          ++out.ordered;
          break;
        case Kind::kPlain:
        case Kind::kPending:
          ++out.plain;
          break;
        case Kind::kRdtscp:
          thunk = kThunkRdtscp;
          ++out.rdtscp;
          break;
        case Kind::kSyscall:
          thunk = kThunkSyscall;
          ++out.syscalls;
          break;
      }
      edits.push_back({s.line, s.stmt, std::string("call ") + thunk});
    }
    for (const Edit& e : replacement_directives_) edits.push_back(e);
    out.replacement_sections = static_cast<int>(replacement_directives_.size());
    // Apply right to left within a line so earlier offsets stay valid.
    std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
      return a.line != b.line ? a.line < b.line : a.stmt.begin > b.stmt.begin;
    });
    for (const Edit& e : edits) {
      lines_[e.line].replace(e.stmt.begin, e.stmt.end - e.stmt.begin, e.text);
    }
    out.text = Join(lines_, "\n");
    return out;
  }

  std::vector<std::string> lines_;
  Section cur_;
  Section prev_;
  std::vector<std::pair<Section, Section>> stack_;
  std::map<std::string, bool> exec_;
  bool in_app_ = false;
  bool block_ordered_ = false;
  bool fence_ = false;
  std::string function_;
  std::vector<Site> sites_;
  std::vector<size_t> block_sites_;
  std::vector<Edit> replacement_directives_;
};

}  // namespace

absl::StatusOr<AsmRewrite> RewriteCounterAndSyscallSites(
    std::string_view assembly) {
  return Rewriter().Run(assembly);
}

}  // namespace vdsolab::ktree::internal
