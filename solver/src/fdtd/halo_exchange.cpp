// The default split-phase exchange (halo_exchange.h): the planes go through exchange() with
// copies, in finish_exchange(), so an exchange that only implements exchange() serves every
// engine.
#include "vem/fdtd/halo_exchange.h"

#include <algorithm>

#include "vem/core/error.h"

namespace vem {

void HaloExchange::start_exchange(bool electric, const std::vector<HaloBuffer>& send,
                                  const std::vector<HaloBuffer>& recv, void* stream) {
  (void)stream;
  if (device_buffers())
    fail("HaloExchange: an exchange of device buffers must implement start_exchange / finish_exchange");
  pending_electric_ = electric;
  pending_send_.clear();
  for (const HaloBuffer& b : send) {
    HaloPlane p;
    p.face = b.face;
    p.values.assign(b.values, b.values + b.count);
    pending_send_.push_back(std::move(p));
  }
  pending_recv_ = recv;
}

void HaloExchange::finish_exchange() {
  std::vector<HaloPlane> incoming = exchange(pending_electric_, std::move(pending_send_));
  pending_send_.clear();
  for (const HaloPlane& p : incoming) {
    auto it = std::find_if(pending_recv_.begin(), pending_recv_.end(),
                           [&](const HaloBuffer& b) { return b.face == p.face; });
    if (it == pending_recv_.end())
      fail("halo exchange returned a plane for face ", p.face, ", on which the engine receives none");
    if (p.values.size() != it->count)
      fail("halo plane for face ", p.face, " has ", p.values.size(), " values, expected ", it->count);
    std::copy(p.values.begin(), p.values.end(), it->values);
  }
  pending_recv_.clear();
}

}  // namespace vem
