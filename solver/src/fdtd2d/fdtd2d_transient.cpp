// A 2D voxel model and its transient / CW steady-state runs (fdtd2d_transient.h).
#include "vem/fdtd2d/fdtd2d_transient.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "vem/core/error.h"
#include "vem/fdtd2d/extensions/dft_monitor2d.h"

namespace vem {

namespace {

const char* axis_name(int a) { return a == 0 ? "x" : (a == 1 ? "y" : "z"); }

// Whether component c (2D) sits half a cell off the nodes along 2D axis b (0 = x, 1 = y).
bool half_along(Component c, int b) {
  const int a = axis_of(c);
  return is_electric(c) ? a == b : a != b;
}

// The nearest sample of 2D component c to world point p (2D coordinates).
std::array<int, 2> nearest_2d(const YeeGrid2D& g, Component c, const std::array<double, 2>& p) {
  const double d[2] = {g.dx, g.dy};
  std::array<int, 2> idx{};
  for (int b = 0; b < 2; ++b) {
    const double p0 = g.origin[b] + (half_along(c, b) ? 0.5 * d[b] : 0.0);
    idx[b] = int(std::lround((p[b] - p0) / d[b]));
  }
  return idx;
}

// Sample of c nearest to p, checked against the grid (and the CPML when `outside_cpml`).
std::array<int, 2> sample_2d(const VoxelDomain2D& d, Component c, const std::array<double, 3>& p,
                             const std::string& what, bool outside_cpml) {
  const YeeGrid2D g = d.grid();
  const std::array<int, 2> idx = nearest_2d(g, c, d.in_plane(p));
  const std::array<int, 2> n = g.samples(c);
  const VoxelDomain& v = d.domain;
  for (int b = 0; b < 2; ++b) {
    const int a = d.plane.axis3(b);
    if (idx[b] < 0 || idx[b] >= n[b])
      fail(what, " at (", p[0], ", ", p[1], ", ", p[2], ") m is outside the computational domain ", v.bounds());
    if (outside_cpml && (idx[b] < v.pml[2 * a] || idx[b] > v.n_total[a] - v.pml[2 * a + 1]))
      fail(what, " at (", p[0], ", ", p[1], ", ", p[2], ") m lies in the CPML layer; move it inside the padded ",
           "model (the absorbing layer is the outer ", v.options.cpml_thickness, " cells of ", v.bounds(), ")");
  }
  return idx;
}

template <typename T>
std::vector<T> permute_cells(const std::vector<T>& a3, const VoxelDomain2D& d) {
  if (a3.empty()) return a3;
  std::vector<T> a2(std::size_t(d.nx()) * d.ny());
  for (int q = 0; q < d.ny(); ++q)
    for (int p = 0; p < d.nx(); ++p) a2[std::size_t(p) + std::size_t(d.nx()) * q] = a3[std::size_t(d.total_index(p, q))];
  return a2;
}

std::vector<std::vector<float>> permute_medium(const std::vector<std::vector<float>>& m3, const VoxelDomain2D& d) {
  std::vector<std::vector<float>> m2;
  if (m3.size() == 3) {
    for (int b = 0; b < 3; ++b) m2.push_back(permute_cells(m3[std::size_t(d.plane.axis3(b))], d));
  } else {
    for (const auto& a : m3) m2.push_back(permute_cells(a, d));
  }
  return m2;
}

std::array<double, 3> permute_axes(const std::array<double, 3>& v3, const Plane2D& pl) {
  return {v3[std::size_t(pl.u)], v3[std::size_t(pl.v)], v3[std::size_t(pl.normal)]};
}

// Average of compact samples around cell (p, q) for 2D component c; `at(i, j)` reads a sample.
template <typename T, typename At>
T centre(Component c, int p, int q, const At& at) {
  const bool hx = half_along(c, 0), hy = half_along(c, 1);
  if (hx && hy) return at(p, q);
  if (hx) return (at(p, q) + at(p, q + 1)) * 0.5f;
  if (hy) return (at(p, q) + at(p + 1, q)) * 0.5f;
  return (at(p, q) + at(p + 1, q) + at(p, q + 1) + at(p + 1, q + 1)) * 0.25f;
}

template <typename T>
std::vector<T> centred(const std::array<const std::vector<T>*, 3>& slots, const VoxelDomain2D& d, Polarization2D pol,
                       bool electric) {
  const VoxelDomain& v = d.domain;
  const std::array<Component, 3> comps = polarization_components(pol);
  const std::int64_t NX = d.nx() + 1;
  std::vector<T> out(std::size_t(3 * v.out_cells()), T(0));
  for (int s = 0; s < 3; ++s) {
    if (is_electric(comps[std::size_t(s)]) != electric) continue;
    const std::vector<T>& f = *slots[std::size_t(s)];
    if (std::int64_t(f.size()) != NX * (d.ny() + 1))
      fail("internal: a 2D field of ", f.size(), " values for a grid of ", d.nx(), " x ", d.ny(), " cells");
    const Component c = comps[std::size_t(s)];
    const int comp3 = axis_of(d.plane.to_3d(c));
    auto at = [&](int i, int j) { return f[std::size_t(i + NX * j)]; };
    std::int64_t o = 0;
    for (int K = 0; K < v.n_out[2]; ++K)
      for (int J = 0; J < v.n_out[1]; ++J)
        for (int I = 0; I < v.n_out[0]; ++I, ++o) {
          const int idx[3] = {I + v.pml[0], J + v.pml[2], K + v.pml[4]};
          out[std::size_t(3 * o + comp3)] = centre<T>(c, idx[d.plane.u], idx[d.plane.v], at);
        }
  }
  return out;
}

}  // namespace

void Transient2dOptions::validate() const {
  const int p = int(polarization);
  if (p != int(Polarization2D::tm) && p != int(Polarization2D::te))
    fail("Transient2dOptions::polarization (Polarization2D) = ", p, ": must be 0 (TM: Ez, Hx, Hy) or 1 (TE: Hz, Ex, Ey)");
  if (!std::isfinite(incident_angle))
    fail("Transient2dOptions::incident_angle (IncidentAngle2D) = ", incident_angle, " rad: must be finite");
}

int flat_axis(const std::array<int, 3>& voxels) {
  int found = -1, count = 0;
  for (int a = 0; a < 3; ++a)
    if (voxels[std::size_t(a)] == 1) {
      found = a;
      ++count;
    }
  return count == 1 ? found : -1;  // a line or a single voxel stays a 3D model
}

Plane2D Plane2D::for_normal(int normal) {
  if (normal < 0 || normal > 2) fail("internal: the plane's normal axis ", normal, " is not 0, 1 or 2");
  Plane2D p;
  p.normal = normal;
  p.u = (normal + 1) % 3;
  p.v = (normal + 2) % 3;
  return p;
}

Component Plane2D::to_3d(Component c2) const {
  return Component((is_electric(c2) ? 0 : 3) + axis3(axis_of(c2)));
}

Component Plane2D::to_2d(Component c3) const {
  return Component((is_electric(c3) ? 0 : 3) + axis2(axis_of(c3)));
}

YeeGrid2D VoxelDomain2D::grid() const {
  YeeGrid2D g;
  g.nx = nx();
  g.ny = ny();
  g.dx = domain.spacing[std::size_t(plane.u)];
  g.dy = domain.spacing[std::size_t(plane.v)];
  g.origin = {domain.origin_total[std::size_t(plane.u)], domain.origin_total[std::size_t(plane.v)]};
  return g;
}

BoundarySpec2D VoxelDomain2D::boundaries() const {
  BoundarySpec2D b;
  const int faces[4] = {2 * plane.u, 2 * plane.u + 1, 2 * plane.v, 2 * plane.v + 1};
  for (int f = 0; f < 4; ++f) {
    b.face[std::size_t(f)] = domain.options.boundaries[std::size_t(faces[f])];
    b.cpml[std::size_t(f)].thickness = domain.options.cpml_thickness;
  }
  return b;
}

std::int64_t VoxelDomain2D::total_index(int p, int q) const {
  std::array<std::int64_t, 3> idx{0, 0, 0};
  idx[std::size_t(plane.u)] = p;
  idx[std::size_t(plane.v)] = q;
  return idx[0] + std::int64_t(domain.n_total[0]) * (idx[1] + std::int64_t(domain.n_total[1]) * idx[2]);
}

VoxelDomainOptions domain_options_2d(const VoxelDomainOptions& o, int normal) {
  VoxelDomainOptions r = o;
  r.boundaries[std::size_t(2 * normal)] = BoundaryType::periodic;
  r.boundaries[std::size_t(2 * normal + 1)] = BoundaryType::periodic;
  return r;
}

VoxelDomain2D make_voxel_domain_2d(const std::array<int, 3>& voxels, const std::array<double, 3>& spacing,
                                   const std::array<double, 3>& voxel_origin, const VoxelDomainOptions& options,
                                   int normal) {
  options.validate();  // the user's options, named as in 3D
  VoxelDomain2D d;
  d.plane = Plane2D::for_normal(normal);
  if (voxels[std::size_t(normal)] != 1)
    fail("internal: a 2D domain with ", voxels[std::size_t(normal)], " voxels along its normal ", axis_name(normal));
  if (options.subpixel_smoothing)
    fail("VoxelDomainOptions::subpixel_smoothing (SubpixelSmoothing) is for 3D models: this model is 2D (one voxel ",
         "along ", axis_name(normal), "), where the dual cells of the smoothing would reach past the single layer; ",
         "turn it off, or run the model in 3D (Dimension 3)");
  d.domain = make_voxel_domain(voxels, spacing, voxel_origin, domain_options_2d(options, normal));
  const YeeGrid2D g = d.grid();
  g.validate();
  d.domain.dt = options.courant_factor * g.courant_limit();
  return d;
}

Fdtd2dSetup setup_2d(const FdtdSetup& s3, const VoxelDomain2D& d, Polarization2D p) {
  Fdtd2dSetup s;
  s.grid = d.grid();
  s.polarization = p;
  s.courant_factor = d.domain.options.courant_factor;
  s.boundaries = d.boundaries();
  s.material_mode = s3.material_mode;
  for (const Material& m3 : s3.materials) {
    Material m = m3;
    m.eps_r = permute_axes(m3.eps_r, d.plane);
    m.mu_r = permute_axes(m3.mu_r, d.plane);
    m.sigma_e = permute_axes(m3.sigma_e, d.plane);
    m.sigma_m = permute_axes(m3.sigma_m, d.plane);
    s.materials.push_back(m);
  }
  s.material_index = permute_cells(s3.material_index, d);
  s.medium.average_at_edges = s3.medium.average_at_edges;
  s.medium.eps_r = permute_medium(s3.medium.eps_r, d);
  s.medium.sigma_e = permute_medium(s3.medium.sigma_e, d);
  s.medium.mu_r = permute_medium(s3.medium.mu_r, d);
  s.medium.sigma_m = permute_medium(s3.medium.sigma_m, d);
  return s;
}

TransientExcitation2D add_transient_excitation_2d(Fdtd2dSetup& setup, const VoxelDomain2D& d,
                                                  const TransientOptions& o, const Transient2dOptions& o2) {
  o.validate();
  o2.validate();
  const Plane2D& pl = d.plane;
  const std::array<Component, 3> comps = polarization_components(o2.polarization);
  TransientExcitation2D x;
  x.waveform = o.make_waveform();
  switch (o.illumination) {
    case Illumination::dipole:
      fail("TransientOptions::illumination (Illumination) = half-wave dipole: a thin wire is a 3D object; a 2D image ",
           "(one voxel along ", axis_name(pl.normal), ") takes a point source (a line source in 2D) or a plane wave");
    case Illumination::plane_wave:
      x.plane_wave = true;
      x.wave.phi = o2.incident_angle;
      x.wave.amplitude = o.plane_wave.amplitude;
      x.wave.waveform = x.waveform;
      x.wave.design_frequency = o.frequency;
      x.box = automatic_tfsf_box_2d(setup.grid, setup.boundaries, o.plane_wave.tfsf_margin);
      break;
    case Illumination::point_source: {
      const std::array<double, 3> dir = permute_axes(o.source_polarization, pl);  // 2D (x, y, z)
      // The electric components the polarization drives: TM the normal (Ez), TE the in-plane ones.
      Component main = Component::Ez;
      if (o2.polarization == Polarization2D::tm) {
        if (dir[2] == 0)
          fail("TransientOptions::source_polarization (SourcePolarization) = (", o.source_polarization[0], ", ",
               o.source_polarization[1], ", ", o.source_polarization[2], "): has no component along the image's normal ",
               axis_name(pl.normal), ", which a TM line source (E along the normal) needs; give it one, or choose ",
               "Polarization2D TE");
      } else {
        if (dir[0] == 0 && dir[1] == 0)
          fail("TransientOptions::source_polarization (SourcePolarization) = (", o.source_polarization[0], ", ",
               o.source_polarization[1], ", ", o.source_polarization[2], "): has no component in the image's plane (",
               axis_name(pl.u), ", ", axis_name(pl.v), "), which a TE source (E in the plane) needs; give it one, or ",
               "choose Polarization2D TM");
        main = std::fabs(dir[0]) >= std::fabs(dir[1]) ? Component::Ex : Component::Ey;
      }
      const std::array<int, 2> s =
          sample_2d(d, main, o.source_position, "the source position (SourcePosition)", true);
      PointSource src;
      src.kind = o.source_kind;
      src.i = s[0];
      src.j = s[1];
      src.k = 0;
      src.direction = dir;
      src.amplitude = o.source_amplitude;
      src.waveform = x.waveform;
      setup.sources.push_back(src);
      break;
    }
  }
  std::vector<std::pair<std::string, std::array<double, 3>>> points;
  if (o.probe_at_source && o.illumination == Illumination::point_source) points.push_back({"source", o.source_position});
  for (std::size_t q = 0; q < o.probe_positions.size(); ++q)
    points.push_back({"probe" + std::to_string(q), o.probe_positions[q]});
  for (const auto& p : points)
    for (const Component c : comps) {
      const std::array<int, 2> idx = sample_2d(d, c, p.second, "probe '" + p.first + "' (ProbePositions, ProbeAtSource)", false);
      setup.probes.push_back({p.first + "_" + component_name(pl.to_3d(c)), c, idx[0], idx[1], 0});
    }
  return x;
}

std::vector<float> cell_centred_2d(const Fdtd2dEngine& engine, const VoxelDomain2D& d, bool electric) {
  const Polarization2D pol = engine.op().polarization();
  const std::array<Component, 3> comps = polarization_components(pol);
  std::array<std::vector<float>, 3> f;
  for (int s = 0; s < 3; ++s)
    if (is_electric(comps[std::size_t(s)]) == electric) f[std::size_t(s)] = engine.field(comps[std::size_t(s)]);
  return centred<float>({&f[0], &f[1], &f[2]}, d, pol, electric);
}

std::vector<std::complex<float>> cell_centred_phasor_2d(const std::array<std::vector<std::complex<float>>, 3>& slots,
                                                        const VoxelDomain2D& d, Polarization2D p, bool electric) {
  return centred<std::complex<float>>({&slots[0], &slots[1], &slots[2]}, d, p, electric);
}

SteadyState2dResult run_steady_state_2d(Fdtd2dEngine& engine, double frequency, double tolerance, int max_steps,
                                        const std::function<bool(int, int, double)>& progress) {
  if (!(frequency > 0) || !std::isfinite(frequency))
    fail("HarmonicOptions::frequencies (DFTFrequencies) = ", frequency, " Hz: must be finite and > 0");
  if (!(tolerance > 0) || !std::isfinite(tolerance))
    fail("HarmonicOptions::steady_state_tolerance (SteadyStateTolerance) = ", tolerance, ": must be finite and > 0");
  const std::array<Component, 3> comps = engine.op().components();
  DftMonitor2d mon(engine, {frequency}, {comps[0], comps[1], comps[2]});
  const double spp = mon.steps_per_period(0);
  // Windows of a whole number of periods to a small fraction of a step.
  int win = std::max(1, int(std::lround(spp)));
  double best = 1;
  for (int k = 1; k <= 40; ++k) {
    const double frac = std::fabs(k * spp - std::round(k * spp));
    if (frac < best - 1e-9 && k * spp >= 8) {
      best = frac;
      win = int(std::lround(k * spp));
    }
  }
  if (max_steps <= 0) max_steps = std::max(20 * win, int(std::ceil(400 * spp)));
  SteadyState2dResult r;
  auto step = [&](int n) {
    const int done0 = engine.steps_completed();
    const int ran = engine.run(std::min(n, max_steps - done0),
                               [&](int k, int) { return !progress || progress(done0 + k, max_steps, r.relative_change); },
                               std::max(1, win / 4));
    return ran;
  };
  const int warm = std::min(max_steps, std::max(win, int(std::ceil(10 * spp))));
  if (step(warm) < warm) {
    r.aborted = true;
    return r;
  }
  SteadyStateCheck c = mon.check_steady_state();
  while (engine.steps_completed() + win <= max_steps) {
    if (step(win) < win) {
      r.aborted = true;
      return r;
    }
    c = mon.check_steady_state();
    r.relative_change = c.relative_change;
    if (progress && !progress(engine.steps_completed(), max_steps, c.relative_change)) {
      r.aborted = true;
      return r;
    }
    if (c.has_previous && c.relative_change < tolerance) {
      r.converged = true;
      break;
    }
  }
  r.steps = engine.steps_completed();
  // A sin(wt) source has the phasor -j: normalize to cos(wt) (multiply by j).
  const std::complex<float> j(0.0f, 1.0f);
  for (int s = 0; s < 3; ++s) {
    r.phasors[std::size_t(s)] = c.has_previous ? mon.phasor(comps[std::size_t(s)], 0)
                                               : mon.spectrum(comps[std::size_t(s)], 0);
    for (auto& v : r.phasors[std::size_t(s)]) v *= j;
  }
  return r;
}

}  // namespace vem
