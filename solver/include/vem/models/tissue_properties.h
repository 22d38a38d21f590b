// Dielectric properties and mass density of biological tissues (no VTK).
//
// Model: the four-pole Cole-Cole dispersion of
//   S. Gabriel, R. W. Lau and C. Gabriel, "The dielectric properties of biological tissues: III.
//   Parametric models for the dielectric spectrum of tissues", Phys. Med. Biol. 41 (1996)
//   2271-2293, doi:10.1088/0031-9155/41/11/003,
// whose complex relative permittivity at angular frequency w = 2 pi f is
//
//   eps*(w) = eps_inf + sum_{n=1..4} d_eps_n / (1 + (j w tau_n)^(1 - alpha_n)) + sigma_i / (j w eps0)
//
// and whose real part is the relative permittivity eps_r, while the conductivity is
// sigma = -Im(eps*) w eps0 (S/m). The parameters (built-in table in tissue_properties.cpp) are
// those of the paper's Table 1 as republished in C. Gabriel's report AL/OE-TR-1996-0037,
// Appendix C ("Summary of fitting parameters"), which the IT'IS Foundation database and the
// IFAC-CNR calculator also use. The model is fitted from 10 Hz to 100 GHz.
//
// A TissueTable maps integer labels of a segmented image to tissues. Each entry carries either
// Cole-Cole parameters (evaluated at the requested frequency) or fixed eps_r / sigma, and a mass
// density (kg/m^3). Tables can be read from CSV text (format below), which overrides or extends
// a table entry by entry. Every failure throws vem::Error naming the row, label and value.
//
// CSV format (one tissue per line; blank lines and lines starting with '#' are ignored; an optional
// header line whose first field is not an integer is skipped; fields separated by ',' or ';'):
//   label, name, fixed,     eps_r, sigma_S_per_m, density_kg_per_m3
//   label, name, colecole,  ef, del1, tau1_ps, alf1, del2, tau2_ns, alf2, sig,
//                           del3, tau3_us, alf3, del4, tau4_ms, alf4, density_kg_per_m3
//   label, name, gabriel,   <built-in model name, e.g. muscle>, density_kg_per_m3
// The Cole-Cole columns follow Gabriel's table order and units (tau1 in ps, tau2 in ns, tau3 in
// us, tau4 in ms) so rows can be copied from it. Names may not contain ',' or ';'.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

namespace vem {

struct ColeColeParameters {
  double eps_inf = 1.0;
  std::array<double, 4> delta_eps{0, 0, 0, 0};
  std::array<double, 4> tau{1e-12, 1e-9, 1e-6, 1e-3};  // s
  std::array<double, 4> alpha{0, 0, 0, 0};
  double sigma_ionic = 0.0;  // S/m

  // Throws vem::Error (prefixed by `where`) when a parameter is non-finite or non-physical:
  // eps_inf >= 1, d_eps >= 0, tau > 0, 0 <= alpha < 1, sigma_ionic >= 0.
  void validate(const std::string& where) const;
};

struct DielectricProperties {
  double eps_r = 1.0;   // relative permittivity
  double sigma = 0.0;   // S/m
};

// Complex relative permittivity eps' - j eps'' (the e^{+j w t} convention of Gabriel et al.).
std::complex<double> cole_cole_permittivity(const ColeColeParameters& p, double frequency_hz);
DielectricProperties cole_cole_properties(const ColeColeParameters& p, double frequency_hz);

// Frequency range over which the Gabriel parametric models were fitted.
constexpr double kGabrielMinFrequency = 10.0;     // Hz
constexpr double kGabrielMaxFrequency = 100e9;    // Hz

// The built-in Gabriel (1996) models, by lower-case name with '_' for spaces
// (e.g. "muscle", "brain_grey_matter", "bone_cortical"). Throws listing the names when unknown.
const ColeColeParameters& gabriel_model(const std::string& name);
std::vector<std::string> gabriel_model_names();

struct TissueEntry {
  enum class Model { cole_cole, fixed };
  int label = 0;
  std::string name;
  Model model = Model::fixed;
  ColeColeParameters cole_cole;   // Model::cole_cole
  DielectricProperties fixed;     // Model::fixed
  double density = 1000.0;        // kg/m^3
  std::string origin;             // where the entry came from ("built-in: Gabriel 1996 muscle", "file.csv line 4")

  DielectricProperties at(double frequency_hz) const;
  void validate() const;          // throws naming origin, label and name
};

// Properties of each label present in an image, in the order of the labels given.
struct LabelProperties {
  std::vector<std::int64_t> labels;
  std::vector<DielectricProperties> dielectric;
  std::vector<double> density;
  std::vector<std::string> names;
};

class TissueTable {
 public:
  // Adds the entry, replacing one with the same label. Validates it first.
  void set(const TissueEntry& e);
  const TissueEntry* find(std::int64_t label) const;
  const std::vector<TissueEntry>& entries() const { return entries_; }  // sorted by label
  bool empty() const { return entries_.empty(); }

  // Parses CSV text (format in the file comment) and sets each row; `origin` names the text in
  // messages (a file name). A malformed row, a non-physical value or a duplicated label within
  // the text throws, naming the line and label. Returns the number of rows read.
  int merge_csv(const std::string& text, const std::string& origin);
  int merge_csv_file(const std::string& path);  // reads the file; throws if it cannot be read

  // Evaluates the table at `frequency_hz` for the given labels. Labels absent from the table
  // throw one error listing all of them (with voxel counts when `counts` is given) and the
  // labels the table has.
  LabelProperties lookup(const std::vector<std::int64_t>& labels, double frequency_hz,
                         const std::vector<std::int64_t>* counts = nullptr) const;
  // lookup() of the labels present in a label image (any order), with their voxel counts.
  LabelProperties lookup_image(const std::vector<std::uint16_t>& image, double frequency_hz) const;

 private:
  std::vector<TissueEntry> entries_;
};

// Throws vem::Error unless the frequency is finite and > 0.
void validate_frequency(double frequency_hz);

}  // namespace vem
