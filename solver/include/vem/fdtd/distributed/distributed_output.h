// Output of a distributed run's fields on its pieces (issue 17), for callers that sample each
// rank's piece themselves (the ParaView filter's cell-centred output). VTK-free.
//
// A piece's engine holds the node planes on both ends of each cut axis: the top one (sample index
// n along the axis) is a copy of the upper neighbour's plane 0, which that neighbour owns
// (decomposition.h). The halo exchange keeps the copies that the updates read exact; where two or
// three cuts meet, the copy of a sample on the edge (e.g. E_z at the corner of an x and a y cut) is
// read by no update and may be a step old (distributed_fdtd.h). piece_field_with_owner_planes()
// replaces the top planes with the owners' values, axis by axis (x, then y, then z: a plane sent
// along y carries the x-top column just received, so edge and corner samples arrive from their
// owner too). Every sample of the returned array then equals the single-domain run's.
#pragma once

#include <vector>

#include "vem/fdtd/distributed/distributed_fdtd.h"

namespace vem {

// Collective. This rank's compact array of component c (FdtdEngine::field() layout of its piece,
// (n_x+1)(n_y+1)(n_z+1), x fastest) with the top plane of every cut axis taken from its owner.
std::vector<float> piece_field_with_owner_planes(const DistributedFdtd& run, Component c);

}  // namespace vem
