// File: variants/gtod/gtod_testing.h
//
// For gtod_test: a gtod variant by name (the test bed itself is the kit's,
// testing/publish_bed.h).

#ifndef VDSOLAB_VARIANTS_GTOD_GTOD_TESTING_H_
#define VDSOLAB_VARIANTS_GTOD_GTOD_TESTING_H_

#include <string_view>

#include "testing/publish_bed.h"
#include "variants/gtod/gtod.h"
#include "variants/variant.h"

namespace vdsolab::variants::gtod {

inline const Variant& GetVariant(std::string_view name) {
  return testing::VariantNamed(GtodVariants(), name);
}

}  // namespace vdsolab::variants::gtod

#endif  // VDSOLAB_VARIANTS_GTOD_GTOD_TESTING_H_
