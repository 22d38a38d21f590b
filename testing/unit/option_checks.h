// Helpers for the option-validation tests: the message a call throws as vem::Error, and checks
// that a message names every expected piece (option, property, value, limit).
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <limits>
#include <string>

#include "vem/core/error.h"

namespace vem_test {

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// The message `f` throws as vem::Error ("" with a test failure when it throws nothing).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const vem::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no vem::Error thrown";
  return "";
}

inline void expect_parts(const std::string& msg, std::initializer_list<const char*> parts) {
  for (const char* p : parts)
    EXPECT_NE(msg.find(p), std::string::npos) << "message '" << msg << "' lacks '" << p << "'";
}

// validate() of `o` fails with a message containing every piece of `parts`.
template <typename T>
void expect_rejected(const T& o, std::initializer_list<const char*> parts) {
  SCOPED_TRACE(parts.size() ? *parts.begin() : "");
  expect_parts(error_of([&] { o.validate(); }), parts);
}

}  // namespace vem_test
