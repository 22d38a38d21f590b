// The one interface through which an engine's box meets a neighbouring subdomain (the hook for
// a one-GPU-per-rank MPI decomposition; single-domain runs never use it).
//
// A face of type BoundaryType::subdomain is shared with the neighbour across it. With A below
// and B above a shared node plane (A's index N = B's index 0 along the axis):
//  - B owns and updates the tangential E on the shared plane; A receives it after every E update
//    (A's E plane N  <- B's E plane 0);
//  - B's E update there needs the H half a cell below: after every H update B receives A's
//    tangential H plane N-1 into its ghost plane -1.
// So after the H update an engine sends through its high subdomain faces and receives through
// its low ones; after the E update the other way round. A plane message carries the two
// tangential components (in the order c = a+1, a+2 of the face axis a) over the full plane
// ((N_b + 1) x (N_c + 1) samples each, first transverse axis fastest).
#pragma once

#include <cstddef>
#include <vector>

namespace vem {

// The convention above, once: after the H update (electric false) a face sends when it is a high
// face, after the E update when it is a low face; the other faces receive.
inline bool halo_face_sends(int face, bool electric) { return (face % 2 == 1) != electric; }
// Node plane (index along the face's axis, n cells) that a face sends from or receives into.
inline int halo_send_plane(bool electric, int n) { return electric ? 0 : n - 1; }
inline int halo_receive_plane(bool electric, int n) { return electric ? n : -1; }
// The q-th (0, 1) component of a plane message through a face normal to `axis` (Component index).
inline int halo_component(bool electric, int axis, int q) { return (electric ? 0 : 3) + (axis + 1 + q) % 3; }

struct HaloPlane {
  int face = 0;               // the sending or receiving face of this engine (boundary.h numbering)
  std::vector<float> values;  // 2 (N_b+1)(N_c+1) values
};

// A plane message in memory the engine owns and keeps alive until finish_exchange() returns
// (the split-phase exchange below). Same contents as HaloPlane::values.
struct HaloBuffer {
  int face = 0;
  float* values = nullptr;
  std::size_t count = 0;
};

class HaloExchange {
 public:
  virtual ~HaloExchange() = default;
  // Called by an engine once after its H update (electric == false) and once after its E update
  // (electric == true) of every step, with the planes it sends; returns the planes for the faces
  // on which it receives. An MPI implementation posts sends/receives to the face neighbours.
  virtual std::vector<HaloPlane> exchange(bool electric, std::vector<HaloPlane> outgoing) = 0;

  // Split-phase exchange, for engines that update their interior while the planes travel (the
  // CUDA engine): start_exchange posts the sends of `send` and the receives into `recv` and
  // returns; finish_exchange waits until the planes of `recv` have arrived and those of `send`
  // may be reused. `recv` holds one buffer per receiving face, sized as above.
  // Where the buffers are: host memory (the default; the engine page-locks it), or, where
  // device_buffers() is true, the device memory of the engine's GPU: the exchange then moves
  // them itself (e.g. NCCL over NVLink), ordered on `stream` (a cudaStream_t): the sends read
  // after the work queued on it so far, and the received planes are complete for any work
  // queued on it after finish_exchange() returns.
  // The defaults go through exchange() (copies), so every HaloExchange supports them.
  virtual bool device_buffers() const { return false; }
  virtual void start_exchange(bool electric, const std::vector<HaloBuffer>& send,
                              const std::vector<HaloBuffer>& recv, void* stream);
  virtual void finish_exchange();

 private:
  // State of the default split-phase exchange.
  bool pending_electric_ = false;
  std::vector<HaloPlane> pending_send_;
  std::vector<HaloBuffer> pending_recv_;
};

}  // namespace vem
