// Errors are values the user can read: every failure in the solver is thrown as vem::Error with a
// message naming what was wrong (array, material, value, limit). The VTK layer catches it and
// reports it in ParaView's output window; nothing in the solver aborts the process.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace vem {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Builds a message from any streamable pieces: fail("material '", name, "': eps_r = ", v).
template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Error(os.str());
}

}  // namespace vem
