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

#include <vector>

namespace vem {

struct HaloPlane {
  int face = 0;               // the sending or receiving face of this engine (boundary.h numbering)
  std::vector<float> values;  // 2 (N_b+1)(N_c+1) values
};

class HaloExchange {
 public:
  virtual ~HaloExchange() = default;
  // Called by an engine once after its H update (electric == false) and once after its E update
  // (electric == true) of every step, with the planes it sends; returns the planes for the faces
  // on which it receives. An MPI implementation posts sends/receives to the face neighbours.
  virtual std::vector<HaloPlane> exchange(bool electric, std::vector<HaloPlane> outgoing) = 0;
};

}  // namespace vem
