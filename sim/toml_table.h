// File: sim/toml_table.h
//
// A TOML file as one table of fields per struct. A field names its key,
// where its value lives (a member pointer), how the value is spelled
// (sim/toml_values.h: type, unit, limits) and whether it is left out of a
// file while it holds the struct's default. ReadTable() and WriteTable()
// walk the same fields, so a key is read and written from one line of a
// table (sim/scenario_fields.cc).
//
// Messages say where: "FILE:LINE:COLUMN: PATH: what", e.g.
// "a.toml:3:6: kernel.hz: want an integer".

#ifndef VDSOLAB_SIM_TOML_TABLE_H_
#define VDSOLAB_SIM_TOML_TABLE_H_

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "third_party/tomlplusplus/hardened.h"

namespace vdsolab::sim::toml_table {

// Where a value stands: the file and the value's path in it.
class Where {
 public:
  Where(const std::string* source, std::string path)
      : source_(source), path_(std::move(path)) {}

  Where Key(const std::string& key) const {
    return Where(source_, path_.empty() ? std::string(key)
                                        : absl::StrCat(path_, ".", key));
  }
  Where Index(size_t i) const {
    return Where(source_, absl::StrFormat("%s[%d]", path_, i));
  }
  const std::string& path() const { return path_; }

  // "FILE:LINE:COLUMN: PATH: what" (without the line where the parser
  // knows none, without the path at the top level).
  absl::Status Bad(const toml::source_region& at,
                   absl::string_view what) const {
    std::string where = *source_;
    if (at.begin.line != 0) {
      absl::StrAppendFormat(&where, ":%d:%d", at.begin.line, at.begin.column);
    }
    if (!path_.empty()) absl::StrAppend(&where, ": ", path_);
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
  }
  absl::Status Bad(const toml::node& at, absl::string_view what) const {
    return Bad(at.source(), what);
  }

 private:
  const std::string* source_;
  std::string path_;
};

// One key of a struct `S`. Made by the functions of sim/toml_values.h (a
// value) or below (a table of fields: a section, an array of tables).
template <class S>
struct Field {
  std::string key;
  // What the value must be ("want an integer"): the message for a value
  // of another type, or for a required key that is missing.
  std::string want;
  // Reads the key's value into `s`; `where` is the key's path.
  std::function<absl::Status(const toml::node& node, const Where& where, S& s)>
      read;
  // A value: its TOML text ("250", "\"1.5s\""). Written as `key = text`.
  std::function<std::string(const S& s)> text;
  // A table: appends its [path] or [[path]] sections. Written after every
  // value of the struct, as TOML requires.
  std::function<void(const S& s, const std::string& path, std::string* out)>
      tables;
  // Whether `s` holds what a default-constructed S holds here.
  std::function<bool(const S& s)> is_default;
  // Set: the key belongs only to structs for which it returns true (an
  // event kind's own parameter); elsewhere it is an error to give it.
  std::function<bool(const S& s)> applies;
  bool required = false;      // A missing key is an error.
  bool omit_default = false;  // Not written while it holds the default.
  bool decides = false;       // Its value decides which keys apply.

  Field Required() const {
    Field f = *this;
    f.required = true;
    return f;
  }
  Field OmitDefault() const {
    Field f = *this;
    f.omit_default = true;
    return f;
  }
  Field Decides() const {
    Field f = *this;
    f.decides = true;
    return f;
  }
  Field When(std::function<bool(const S& s)> predicate) const {
    Field f = *this;
    f.applies = std::move(predicate);
    return f;
  }

  bool AppliesTo(const S& s) const { return !applies || applies(s); }
};

template <class S>
using Fields = std::vector<Field<S>>;

template <class S>
absl::Status ReadTable(const toml::table& t, const Fields<S>& fields,
                       const Where& where, S& s);

namespace internal {

// `"tick" does not apply to kind "settime" (it takes "realtime")`.
template <class S>
std::string DoesNotApply(const Fields<S>& fields, const Field<S>& field,
                         const S& s) {
  std::vector<std::string> deciders, takes;
  for (const Field<S>& f : fields) {
    if (f.decides) deciders.push_back(absl::StrCat(f.key, " ", f.text(s)));
    if (f.applies && f.applies(s))
      takes.push_back(absl::StrCat("\"", f.key, "\""));
  }
  return absl::StrFormat("\"%s\" does not apply to %s (it takes %s)", field.key,
                         absl::StrJoin(deciders, ", "),
                         takes.empty() ? "none" : absl::StrJoin(takes, ", "));
}

template <class S>
bool Written(const Field<S>& f, const S& s) {
  return f.AppliesTo(s) && !(f.omit_default && f.is_default(s));
}

// Replaces `list` with the array's tables, each read into a default T;
// `not_a_table` is the message for an item of another type.
template <class T>
absl::Status ReadList(const toml::array& array, const Fields<T>& fields,
                      const Where& where, absl::string_view not_a_table,
                      std::vector<T>& list) {
  list.clear();
  for (size_t i = 0; i < array.size(); ++i) {
    const toml::table* t = array[i].as_table();
    if (t == nullptr) return where.Index(i).Bad(array[i], not_a_table);
    T item;
    if (absl::Status status = ReadTable(*t, fields, where.Index(i), item);
        !status.ok()) {
      return status;
    }
    list.push_back(std::move(item));
  }
  return absl::OkStatus();
}

}  // namespace internal

// Reads table `t` into `s`: each field in order (a missing key keeps the
// value `s` has), then refuses any key no field names, so a typo cannot
// silently change a run.
template <class S>
absl::Status ReadTable(const toml::table& t, const Fields<S>& fields,
                       const Where& where, S& s) {
  for (const Field<S>& f : fields) {
    const toml::node* node = t.get(f.key);
    if (node == nullptr) {
      if (f.required) return where.Key(f.key).Bad(t, "missing: " + f.want);
      continue;
    }
    if (!f.AppliesTo(s)) {
      return where.Bad(*node, internal::DoesNotApply(fields, f, s));
    }
    if (absl::Status status = f.read(*node, where.Key(f.key), s);
        !status.ok()) {
      return status;
    }
  }
  for (const auto& [key, value] : t) {
    bool known = false;
    for (const Field<S>& f : fields) known |= f.key == key.str();
    if (!known) {
      return where.Bad(key.source(), absl::StrFormat("unknown key \"%s\"",
                                                     std::string(key.str())));
    }
  }
  return absl::OkStatus();
}

// Appends `s` as the body of the table at `path`: `key = value` lines,
// then the tables below it.
template <class S>
void WriteTable(const S& s, const Fields<S>& fields, const std::string& path,
                std::string* out) {
  for (const Field<S>& f : fields) {
    if (f.text && internal::Written(f, s)) {
      absl::StrAppend(out, f.key, " = ", f.text(s), "\n");
    }
  }
  for (const Field<S>& f : fields) {
    if (f.tables && internal::Written(f, s)) {
      f.tables(
          s, path.empty() ? std::string(f.key) : absl::StrCat(path, ".", f.key),
          out);
    }
  }
}

// `[key]`: a struct member with fields of its own. A value of another type
// under a section's name (`kernel = 5`, `[[run]]`) is refused: ignored, it
// would leave the section's defaults in force without a word.
template <class S, class T>
Field<S> Section(const std::string& key, T S::*member,
                 const Fields<T>& fields) {
  Field<S> f;
  f.key = key;
  f.want = "want a table";
  f.read = [member, &fields](const toml::node& node, const Where& where, S& s) {
    const toml::table* t = node.as_table();
    return t == nullptr ? where.Bad(node, absl::StrFormat("want a [%s] table",
                                                          where.path()))
                        : ReadTable(*t, fields, where, s.*member);
  };
  f.tables = [member, &fields](const S& s, const std::string& path,
                               std::string* out) {
    absl::StrAppend(out, "\n[", path, "]\n");
    WriteTable(s.*member, fields, path, out);
  };
  f.is_default = [member](const S& s) { return s.*member == S{}.*member; };
  return f;
}

// `[key]` that may be absent: `present` says whether the file had it.
template <class S, class T>
Field<S> OptionalSection(const std::string& key, T S::*member, bool T::*present,
                         const Fields<T>& fields) {
  Field<S> f = Section(key, member, fields);
  f.read = [member, present, &fields](const toml::node& node,
                                      const Where& where, S& s) {
    const toml::table* t = node.as_table();
    if (t == nullptr) {
      return where.Bad(node,
                       absl::StrFormat("want a [%s] table", where.path()));
    }
    (s.*member).*present = true;
    return ReadTable(*t, fields, where, s.*member);
  };
  f.tables = [member, present, &fields](const S& s, const std::string& path,
                                        std::string* out) {
    if (!((s.*member).*present)) return;
    absl::StrAppend(out, "\n[", path, "]\n");
    WriteTable(s.*member, fields, path, out);
  };
  return f;
}

// `[[key]]`: a list of structs, one table each; replaces the default list.
template <class S, class T>
Field<S> Tables(const std::string& key, std::vector<T> S::*member,
                const Fields<T>& fields) {
  Field<S> f;
  f.key = key;
  f.want = "want [[tables]]";
  f.read = [member, &fields](const toml::node& node, const Where& where,
                             S& s) -> absl::Status {
    const toml::array* array = node.as_array();
    if (array == nullptr) {
      return where.Bad(node,
                       absl::StrFormat("want [[%s]] tables", where.path()));
    }
    return internal::ReadList(*array, fields, where, "want a table", s.*member);
  };
  f.tables = [member, &fields](const S& s, const std::string& path,
                               std::string* out) {
    for (const T& item : s.*member) {
      absl::StrAppend(out, "\n[[", path, "]]\n");
      WriteTable(item, fields, path, out);
    }
  };
  f.is_default = [member](const S& s) { return s.*member == S{}.*member; };
  return f;
}

// `key = [{ a = 1, b = 2 }, ...]`: a list of small structs written inline;
// `example` shows one in the message for an item that is not a table.
template <class S, class T>
Field<S> InlineTables(const std::string& key, std::vector<T> S::*member,
                      const Fields<T>& fields, const std::string& example) {
  Field<S> f;
  f.key = key;
  f.want = "want a list of tables";
  f.read = [member, &fields, example](const toml::node& node,
                                      const Where& where,
                                      S& s) -> absl::Status {
    const toml::array* array = node.as_array();
    if (array == nullptr) return where.Bad(node, "want a list of tables");
    return internal::ReadList(*array, fields, where,
                              absl::StrCat("want ", example), s.*member);
  };
  f.text = [member, &fields](const S& s) {
    std::vector<std::string> items;
    for (const T& item : s.*member) {
      std::vector<std::string> pairs;
      for (const Field<T>& field : fields) {
        if (internal::Written(field, item)) {
          pairs.push_back(absl::StrCat(field.key, " = ", field.text(item)));
        }
      }
      items.push_back(absl::StrCat("{ ", absl::StrJoin(pairs, ", "), " }"));
    }
    return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
  };
  f.is_default = [member](const S& s) { return s.*member == S{}.*member; };
  return f;
}

}  // namespace vdsolab::sim::toml_table

#endif  // VDSOLAB_SIM_TOML_TABLE_H_
