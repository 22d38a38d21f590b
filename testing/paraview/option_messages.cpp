// option_messages: the messages the solver's option checks give, for test_option_messages.py,
// which compares them with what the FDTD filters print in pvpython for the same bad values
// (issue 12: a C++ user and a ParaView user get the same message). No VTK: vem_solver only.
//
//   option_messages CASE...
//
// A case sets members of one option type from its defaults, then validates it:
//   domain.<member>=<value>      vem::VoxelDomainOptions::validate()
//   transient.<member>=<value>   vem::TransientOptions::validate()
//   harmonic.<member>=<value>    vem::HarmonicOptions::validate() (frequencies = {900e6} unless set)
//   point.<member>=<value>       vem::point_source_as_dipole() on a 10^3 grid of 2 mm
// Several assignments of one group are joined by ';':
//   harmonic.source=dipole;harmonic.dipole.feed_current=0;harmonic.dipole.accepted_power=0
// Members: the C++ names (nested ones as dipole.length, plane_wave.amplitude); lists and vectors
// are comma-separated ("harmonic.frequencies=900e6,900.0000001e6", "transient.source_polarization=1,0,1");
// enums by their C++ names (boundaries=periodic,cpml,...; source=dipole; illumination=plane_wave;
// source_kind / point.kind=hard_e). Values as the filters pass them (plane-wave angles in radians).
//
// Prints one line per case, in order: the vem::Error message, or "(valid)" when the options pass.
// Exit status: 0 when every case gave an error, 1 when one validated, 2 for a case it cannot read
// (the reason on stderr).
#include "vem/core/error.h"
#include "vem/core/yee_grid.h"
#include "vem/fdtd/boundary.h"
#include "vem/fdtd/fdtd_harmonic.h"
#include "vem/fdtd/fdtd_transient.h"
#include "vem/fdtd/schemes/fdtd_scheme.h"
#include "vem/fdtd/voxel_domain.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct BadCase : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream is(s);
  while (std::getline(is, part, sep)) out.push_back(part);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

double Double(const std::string& v) {
  errno = 0;
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0') throw BadCase("not a number: '" + v + "'");
  return d;
}

int Int(const std::string& v) {
  errno = 0;
  char* end = nullptr;
  const long i = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE || i < INT_MIN || i > INT_MAX)
    throw BadCase("not an int: '" + v + "'");
  return int(i);
}

bool Bool(const std::string& v) {
  if (v == "1" || v == "true") return true;
  if (v == "0" || v == "false") return false;
  throw BadCase("not a bool: '" + v + "'");
}

std::vector<double> Doubles(const std::string& v) {
  std::vector<double> out;
  if (v.empty()) return out;  // "harmonic.frequencies=" is the empty list
  for (const std::string& p : Split(v, ',')) out.push_back(Double(p));
  return out;
}

std::array<double, 3> Vec3(const std::string& v) {
  const std::vector<double> d = Doubles(v);
  if (d.size() != 3) throw BadCase("not 3 numbers: '" + v + "'");
  return {d[0], d[1], d[2]};
}

vem::PointSource::Kind Kind(const std::string& v) {
  try {
    return vem::source_kind_from_name(v);
  } catch (const vem::Error&) {
    throw BadCase("not a source kind: '" + v + "'");
  }
}

bool SetPlaneWave(vem::HarmonicPlaneWave& w, const std::string& k, const std::string& v) {
  if (k == "theta") w.theta = Double(v);
  else if (k == "phi") w.phi = Double(v);
  else if (k == "psi") w.psi = Double(v);
  else if (k == "amplitude") w.amplitude = Double(v);
  else if (k == "tfsf_margin") w.tfsf_margin = Int(v);
  else return false;
  return true;
}

bool SetDipole(vem::HarmonicDipole& d, const std::string& k, const std::string& v) {
  if (k == "centre") d.centre = Vec3(v);
  else if (k == "axis") d.axis = Int(v);
  else if (k == "length") d.length = Double(v);
  else if (k == "feed_current") d.feed_current = Double(v);
  else if (k == "accepted_power") d.accepted_power = Double(v);
  else if (k == "radiated_power") d.radiated_power = Double(v);
  else return false;
  return true;
}

// "plane_wave.amplitude" / "dipole.length" into the nested structs.
bool SetNested(vem::HarmonicPlaneWave& w, vem::HarmonicDipole& d, const std::string& k, const std::string& v) {
  const std::string pw = "plane_wave.", dp = "dipole.";
  if (k.compare(0, pw.size(), pw) == 0) return SetPlaneWave(w, k.substr(pw.size()), v);
  if (k.compare(0, dp.size(), dp) == 0) return SetDipole(d, k.substr(dp.size()), v);
  return false;
}

void SetDomain(vem::VoxelDomainOptions& o, const std::string& k, const std::string& v) {
  if (k == "cpml_thickness") o.cpml_thickness = Int(v);
  else if (k == "air_padding") o.air_padding = Int(v);
  else if (k == "courant_factor") o.courant_factor = Double(v);
  else if (k == "boundaries") {
    const std::vector<std::string> b = Split(v, ',');
    if (b.size() != 6) throw BadCase("boundaries needs 6 names: '" + v + "'");
    for (int f = 0; f < 6; ++f) {
      try {
        o.boundaries[f] = vem::boundary_from_name(b[f]);
      } catch (const vem::Error&) {
        throw BadCase("not a boundary: '" + b[f] + "'");
      }
    }
  } else if (k == "scheme") {
    try {
      o.scheme = vem::scheme_from_name(v);
    } catch (const vem::Error&) {
      throw BadCase("not a scheme: '" + v + "'");
    }
  } else if (k == "field_storage") {
    try {
      o.field_storage = vem::field_storage_from_name(v);
    } catch (const vem::Error&) {
      throw BadCase("not a field storage: '" + v + "'");
    }
  } else if (k == "subpixel_smoothing") o.subpixel_smoothing = Bool(v);
  else if (k == "subpixel.full_tensor") o.subpixel.full_tensor = Bool(v);
  else throw BadCase("no VoxelDomainOptions member '" + k + "'");
}

void SetTransient(vem::TransientOptions& o, const std::string& k, const std::string& v) {
  if (k == "illumination") {
    if (v == "point_source") o.illumination = vem::Illumination::point_source;
    else if (v == "plane_wave") o.illumination = vem::Illumination::plane_wave;
    else if (v == "dipole") o.illumination = vem::Illumination::dipole;
    else throw BadCase("not an illumination: '" + v + "'");
  } else if (k == "frequency") o.frequency = Double(v);
  else if (k == "bandwidth") o.bandwidth = Double(v);
  else if (k == "source_kind") o.source_kind = Kind(v);
  else if (k == "source_position") o.source_position = Vec3(v);
  else if (k == "source_polarization") o.source_polarization = Vec3(v);
  else if (k == "source_amplitude") o.source_amplitude = Double(v);
  else if (k == "stop_at_time") o.stop_at_time = Bool(v);
  else if (k == "steps") o.steps = Int(v);
  else if (k == "simulated_time") {
    o.simulated_time = Double(v);
    o.stop_at_time = true;  // as StopMode "Simulated time"
  } else if (k == "snapshot_interval") o.snapshot_interval = Int(v);
  else if (k == "probe_positions") {
    const std::vector<double> d = Doubles(v);
    if (d.size() % 3) throw BadCase("probe_positions needs 3 numbers per probe: '" + v + "'");
    for (std::size_t q = 0; q < d.size(); q += 3) o.probe_positions.push_back({d[q], d[q + 1], d[q + 2]});
  } else if (k == "probe_at_source") o.probe_at_source = Bool(v);
  else if (!SetNested(o.plane_wave, o.dipole, k, v)) throw BadCase("no TransientOptions member '" + k + "'");
}

void SetHarmonic(vem::HarmonicOptions& o, const std::string& k, const std::string& v) {
  if (k == "source") {
    if (v == "plane_wave") o.source = vem::HarmonicSource::plane_wave;
    else if (v == "dipole") o.source = vem::HarmonicSource::dipole;
    else throw BadCase("not a harmonic source: '" + v + "'");
  } else if (k == "frequencies") o.frequencies = Doubles(v);
  else if (k == "steady_state_tolerance") o.steady_state_tolerance = Double(v);
  else if (k == "periods_per_check") o.periods_per_check = Int(v);
  else if (k == "max_steps") o.max_steps = Int(v);
  else if (k == "fixed_steps") o.fixed_steps = Int(v);
  else if (k == "dft_sample_interval") o.dft_sample_interval = Int(v);
  else if (k == "far_field") o.far_field = Bool(v);
  else if (k == "ntff_margin") o.ntff_margin = Int(v);
  else if (k == "far_field_step_deg") o.far_field_step_deg = Double(v);
  else if (k == "progress_interval") o.progress_interval = Int(v);
  else if (!SetNested(o.plane_wave, o.dipole, k, v)) throw BadCase("no HarmonicOptions member '" + k + "'");
}

struct PointCase {
  vem::PointSource::Kind kind = vem::PointSource::Kind::electric_current;
  std::array<double, 3> position{0, 0, 0};
  std::array<double, 3> polarization{0, 0, 1};
  double amplitude = 1.0;
};

void SetPoint(PointCase& p, const std::string& k, const std::string& v) {
  if (k == "kind") p.kind = Kind(v);
  else if (k == "position") p.position = Vec3(v);
  else if (k == "polarization") p.polarization = Vec3(v);
  else if (k == "amplitude") p.amplitude = Double(v);
  else throw BadCase("no point_source_as_dipole argument '" + k + "'");
}

// Runs one case; returns the message, or "(valid)". Throws BadCase.
std::string Run(const std::string& text) {
  std::string group;
  vem::VoxelDomainOptions domain;
  vem::TransientOptions transient;
  vem::HarmonicOptions harmonic;
  harmonic.frequencies = {900e6};
  PointCase point;
  for (const std::string& assign : Split(text, ';')) {
    const std::size_t eq = assign.find('='), dot = assign.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq)
      throw BadCase("'" + assign + "' is not <group>.<member>=<value>");
    const std::string g = assign.substr(0, dot), k = assign.substr(dot + 1, eq - dot - 1), v = assign.substr(eq + 1);
    if (!group.empty() && g != group) throw BadCase("one case mixes '" + group + "' and '" + g + "'");
    group = g;
    if (g == "domain") SetDomain(domain, k, v);
    else if (g == "transient") SetTransient(transient, k, v);
    else if (g == "harmonic") SetHarmonic(harmonic, k, v);
    else if (g == "point") SetPoint(point, k, v);
    else throw BadCase("unknown group '" + g + "' (domain, transient, harmonic, point)");
  }
  try {
    if (group == "domain") domain.validate();
    else if (group == "transient") transient.validate();
    else if (group == "harmonic") harmonic.validate();
    else {
      vem::YeeGrid g;
      g.nx = g.ny = g.nz = 10;
      g.dx = g.dy = g.dz = 0.002;
      g.origin = {-0.01, -0.01, -0.01};
      vem::point_source_as_dipole(point.kind, point.position, point.polarization, point.amplitude, g);
    }
  } catch (const vem::Error& e) {
    return e.what();
  }
  return "(valid)";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: option_messages CASE... (e.g. transient.steps=0); see option_messages.cpp\n";
    return 2;
  }
  int status = 0;
  for (int a = 1; a < argc; ++a) {
    try {
      const std::string m = Run(argv[a]);
      std::cout << m << '\n';
      if (m == "(valid)") status = std::max(status, 1);
    } catch (const BadCase& e) {
      std::cerr << "option_messages: case '" << argv[a] << "': " << e.what() << '\n';
      return 2;
    }
  }
  return status;
}
