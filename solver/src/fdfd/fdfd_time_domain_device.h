// Internal: moving vectors between the FDFD layout and the FDTD engine for the time-domain
// preconditioner (fdfd_time_domain.h). Host loops (fdfd_time_domain.cpp) for the CPU engine and
// their CUDA twins (fdfd_time_domain_cuda.cu; only with VEM_WITH_CUDA) for the CUDA engine.
// Layouts: FDFD vector entry q = a N + i + nx (j + ny k) (fdfd_problem.h); FDTD field-layout
// offset o = origin + i + j sy + k sz (field_layout.h), amplitudes interleaved (re, im); DFT box =
// the compact layout i + (nx+1)(j + (ny+1) k).
#pragma once

#include <complex>
#include <cstddef>

#include "vem/fdfd/fdfd_time_domain.h"  // fdfd_td::LayoutMap

namespace vem {
namespace fdfd_td {

// s_a[o(i,j,k)] = g[q] v[q] for every FDFD entry q = (a, i, j, k) (g: 3 N complex64 factors).
void scatter_host(const LayoutMap& m, const std::complex<float>* g, const std::complex<double>* v,
                  float* const s[3]);
// z[q] = v[q] on the PEC wall rows, else the phasor p_a at (i,j,k) of the compact layout.
void gather_host(const LayoutMap& m, const std::complex<float>* const p[3], const std::complex<double>* v,
                 std::complex<double>* z);

// The same on the device (pointers to device memory); gather synchronizes the device.
void scatter(const LayoutMap& m, const void* g, const void* v, float* const s[3]);
void gather(const LayoutMap& m, const std::complex<float>* const p[3], const void* v, void* z);
// Device buffers: a copy of host data, the way back, and release.
void* upload(const void* host, std::size_t bytes);
void download(const void* device, void* host, std::size_t bytes);
void release(void* device);

}  // namespace fdfd_td
}  // namespace vem
