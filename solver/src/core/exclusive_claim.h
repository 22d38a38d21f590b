// A process-wide resource that one live engine at a time may hold: a __constant__ material table
// (one per translation unit and process). The slot is an atomic owner pointer beside the table;
// ExclusiveClaim is the holder's member. take() claims the slot for `owner` (true where it was
// free or already the owner's); the member gives it back when destroyed: with the engine, and
// also when the engine's constructor throws after the claim (its members are destroyed then, its
// destructor does not run). Until session 31 the engines gave their tables back in their
// destructors, so an engine refused after its claim kept the table from every later engine of the
// process.
#pragma once

#include <atomic>

namespace vem {

class ExclusiveClaim {
 public:
  ExclusiveClaim() = default;
  ExclusiveClaim(const ExclusiveClaim&) = delete;
  ExclusiveClaim& operator=(const ExclusiveClaim&) = delete;
  ~ExclusiveClaim() {
    if (!slot_) return;
    const void* self = owner_;
    slot_->compare_exchange_strong(self, nullptr);
  }
  bool take(std::atomic<const void*>& slot, const void* owner) {
    const void* none = nullptr;
    if (!slot.compare_exchange_strong(none, owner) && none != owner) return false;
    slot_ = &slot;
    owner_ = owner;
    return true;
  }

 private:
  std::atomic<const void*>* slot_ = nullptr;
  const void* owner_ = nullptr;
};

}  // namespace vem
