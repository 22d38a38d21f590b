// Built without CUDA: the rounding self-check needs a device (vem/core/field_storage.h).
#include <string>

#include "vem/core/error.h"
#include "vem/core/field_storage.h"

namespace vem {

std::uint64_t field_storage_rounding_mismatches(FieldStorage s, std::string* first) {
  (void)s;
  (void)first;
  fail("field_storage_rounding_mismatches: VoxelEM was built without CUDA");
}

}  // namespace vem
