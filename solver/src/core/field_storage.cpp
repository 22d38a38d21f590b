#include "vem/core/field_storage.h"

#include "vem/core/error.h"

namespace vem {

const char* field_storage_name(FieldStorage s) {
  switch (s) {
    case FieldStorage::float16: return "float16";
    case FieldStorage::bfloat16: return "bfloat16";
    default: return "float32";
  }
}

FieldStorage field_storage_from_name(const std::string& name) {
  for (FieldStorage s : {FieldStorage::float32, FieldStorage::float16, FieldStorage::bfloat16})
    if (name == field_storage_name(s)) return s;
  fail("unknown field storage '", name, "' (expected float32, float16 or bfloat16)");
}

}  // namespace vem
