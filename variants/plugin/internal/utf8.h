// File: variants/plugin/internal/utf8.h
//
// Whether a plugin record's string is well-formed UTF-8: the loader
// refuses one that is not (the strings go into JSON, TOML replay files
// and terminals as they are).

#ifndef VDSOLAB_VARIANTS_PLUGIN_INTERNAL_UTF8_H_
#define VDSOLAB_VARIANTS_PLUGIN_INTERNAL_UTF8_H_

#include <string>

namespace vdsolab::variants::plugin_internal {

// Well-formed UTF-8: no overlong forms, surrogates, code points past
// U+10FFFF or sequences cut short.
bool IsUtf8(const std::string& s);

}  // namespace vdsolab::variants::plugin_internal

#endif  // VDSOLAB_VARIANTS_PLUGIN_INTERNAL_UTF8_H_
