#include "vem/models/tissue_properties.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "vem/core/error.h"
#include "vem/core/yee_grid.h"

namespace vem {

namespace {

// Gabriel, Lau & Gabriel, Phys. Med. Biol. 41 (1996) 2271, Table 1, as tabulated in C. Gabriel,
// "Compilation of the dielectric properties of body tissues at RF and microwave frequencies",
// report AL/OE-TR-1996-0037 (Brooks AFB, 1996), Appendix C, "Summary Table". Columns in the
// table's own units: ef, del1, tau1 (ps), alf1, del2, tau2 (ns), alf2, sig (S/m), del3,
// tau3 (us), alf3, del4, tau4 (ms), alf4.
// Checked against the published evaluations (IT'IS database / IFAC-CNR calculator) at 900 MHz
// in testing/unit/test_tissue_properties.cpp: e.g. muscle 55.03 / 0.943 S/m, grey matter
// 52.73 / 0.942 S/m, CSF 68.64 / 2.413 S/m, cortical bone 12.45 / 0.143 S/m.
struct GabrielRow {
  const char* name;
  double v[14];
};
const GabrielRow kGabriel1996[] = {
    {"blood",                       {4.0, 56, 8.377, 0.10, 5200, 132.629, 0.10, 0.70, 0, 159.155, 0.20, 0, 15.915, 0.00}},
    {"bone_cancellous",             {2.5, 18, 13.263, 0.22, 300, 79.577, 0.25, 0.07, 2.0e4, 159.155, 0.20, 2.0e7, 15.915, 0.00}},
    {"bone_cortical",               {2.5, 10, 13.263, 0.20, 180, 79.577, 0.20, 0.02, 5.0e3, 159.155, 0.20, 1.0e5, 15.915, 0.00}},
    {"bone_marrow_infiltrated",     {2.5, 9, 14.469, 0.20, 80, 15.915, 0.10, 0.10, 1.0e4, 1591.549, 0.10, 2.0e6, 15.915, 0.10}},
    {"bone_marrow_not_infiltrated", {2.5, 3, 7.958, 0.20, 25, 15.915, 0.10, 0.001, 5.0e3, 1591.549, 0.10, 2.0e6, 15.915, 0.10}},
    {"brain_grey_matter",           {4.0, 45, 7.958, 0.10, 400, 15.915, 0.15, 0.02, 2.0e5, 106.103, 0.22, 4.5e7, 5.305, 0.00}},
    {"brain_white_matter",          {4.0, 32, 7.958, 0.10, 100, 7.958, 0.10, 0.02, 4.0e4, 53.052, 0.30, 3.5e7, 7.958, 0.02}},
    {"breast_fat",                  {2.5, 3, 17.680, 0.10, 15, 63.660, 0.10, 0.01, 5.0e4, 454.700, 0.10, 2.0e7, 13.260, 0.00}},
    {"cerebellum",                  {4.0, 40, 7.958, 0.10, 700, 15.915, 0.15, 0.04, 2.0e5, 106.103, 0.22, 4.5e7, 5.305, 0.00}},
    {"cerebro_spinal_fluid",        {4.0, 65, 7.958, 0.10, 40, 1.592, 0.00, 2.00, 0, 159.155, 0.00, 0, 15.915, 0.00}},
    {"dura",                        {4.0, 40, 7.958, 0.15, 200, 7.958, 0.10, 0.50, 1.0e4, 159.155, 0.20, 1.0e6, 15.915, 0.00}},
    {"fat_not_infiltrated",         {2.5, 3, 7.958, 0.20, 15, 15.915, 0.10, 0.01, 3.3e4, 159.155, 0.05, 1.0e7, 7.958, 0.01}},
    {"lens_cortex",                 {4.0, 42, 7.958, 0.10, 1500, 79.577, 0.10, 0.30, 2.0e5, 159.155, 0.10, 4.0e7, 15.915, 0.00}},
    {"lens_nucleus",                {3.0, 32, 8.842, 0.10, 100, 10.610, 0.20, 0.20, 1.0e3, 15.915, 0.20, 5.0e7, 15.915, 0.00}},
    {"muscle",                      {4.0, 50, 7.234, 0.10, 7000, 353.678, 0.10, 0.20, 1.2e6, 318.310, 0.10, 2.5e7, 2.274, 0.00}},
    {"skin_dry",                    {4.0, 32, 7.234, 0.00, 1100, 32.481, 0.20, 0.0002, 0, 159.155, 0.20, 0, 15.915, 0.20}},
    {"skin_wet",                    {4.0, 39, 7.958, 0.10, 280, 79.577, 0.00, 0.0004, 3.0e4, 1.592, 0.16, 3.0e4, 1.592, 0.20}},
    {"tongue",                      {4.0, 50, 7.958, 0.10, 4000, 159.155, 0.10, 0.25, 1.0e5, 159.155, 0.20, 4.0e7, 15.915, 0.00}},
    {"vitreous_humour",             {4.0, 65, 7.234, 0.00, 30, 159.155, 0.10, 1.50, 0, 159.155, 0.00, 0, 15.915, 0.00}},
};

ColeColeParameters from_gabriel_columns(const double* v) {
  ColeColeParameters p;
  p.eps_inf = v[0];
  p.delta_eps = {v[1], v[4], v[8], v[11]};
  p.tau = {v[2] * 1e-12, v[5] * 1e-9, v[9] * 1e-6, v[12] * 1e-3};
  p.alpha = {v[3], v[6], v[10], v[13]};
  p.sigma_ionic = v[7];
  return p;
}

const std::map<std::string, ColeColeParameters>& gabriel_map() {
  static const std::map<std::string, ColeColeParameters> m = [] {
    std::map<std::string, ColeColeParameters> r;
    for (const auto& row : kGabriel1996) r[row.name] = from_gabriel_columns(row.v);
    return r;
  }();
  return m;
}

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  std::string t = s.substr(b, e - b);
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
  return t;
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool parse_int(const std::string& s, long long* out) {
  if (s.empty()) return false;
  std::size_t pos = 0;
  try {
    *out = std::stoll(s, &pos);
  } catch (...) {
    return false;
  }
  return pos == s.size();
}

bool parse_double(const std::string& s, double* out) {
  if (s.empty()) return false;
  std::size_t pos = 0;
  try {
    *out = std::stod(s, &pos);
  } catch (...) {
    return false;
  }
  return pos == s.size();
}

std::string entry_where(const TissueEntry& e) {
  std::ostringstream os;
  if (!e.origin.empty()) os << e.origin << " ";
  os << "(label " << e.label;
  if (!e.name.empty()) os << ", '" << e.name << "'";
  os << ")";
  return os.str();
}

}  // namespace

void ColeColeParameters::validate(const std::string& where) const {
  auto bad = [](double v) { return !std::isfinite(v); };
  if (bad(eps_inf) || eps_inf < 1.0)
    fail(where, ": Cole-Cole eps_inf = ", eps_inf, " must be finite and >= 1");
  for (int n = 0; n < 4; ++n) {
    if (bad(delta_eps[n]) || delta_eps[n] < 0)
      fail(where, ": Cole-Cole del", n + 1, " = ", delta_eps[n], " must be finite and >= 0");
    if (bad(tau[n]) || tau[n] <= 0)
      fail(where, ": Cole-Cole tau", n + 1, " = ", tau[n], " s must be finite and > 0");
    if (bad(alpha[n]) || alpha[n] < 0 || alpha[n] >= 1)
      fail(where, ": Cole-Cole alf", n + 1, " = ", alpha[n], " must be in [0, 1)");
  }
  if (bad(sigma_ionic) || sigma_ionic < 0)
    fail(where, ": Cole-Cole sig = ", sigma_ionic, " S/m must be finite and >= 0");
}

std::complex<double> cole_cole_permittivity(const ColeColeParameters& p, double f) {
  validate_frequency(f);
  const double w = 2.0 * kPi * f;
  const std::complex<double> j(0.0, 1.0);
  std::complex<double> eps = p.eps_inf;
  for (int n = 0; n < 4; ++n) {
    if (p.delta_eps[n] == 0.0) continue;
    eps += p.delta_eps[n] / (1.0 + std::pow(j * w * p.tau[n], 1.0 - p.alpha[n]));
  }
  eps += p.sigma_ionic / (j * w * kEps0);
  return eps;
}

DielectricProperties cole_cole_properties(const ColeColeParameters& p, double f) {
  const std::complex<double> eps = cole_cole_permittivity(p, f);
  return {eps.real(), -eps.imag() * 2.0 * kPi * f * kEps0};
}

const ColeColeParameters& gabriel_model(const std::string& name) {
  const auto& m = gabriel_map();
  const auto it = m.find(lower(trim(name)));
  if (it == m.end()) {
    std::ostringstream os;
    for (const auto& kv : m) os << (os.tellp() > 0 ? ", " : "") << kv.first;
    fail("unknown Gabriel (1996) tissue model '", name, "'; built-in models: ", os.str());
  }
  return it->second;
}

std::vector<std::string> gabriel_model_names() {
  std::vector<std::string> names;
  for (const auto& kv : gabriel_map()) names.push_back(kv.first);
  return names;
}

void validate_frequency(double f) {
  if (!std::isfinite(f) || f <= 0) fail("frequency ", f, " Hz must be finite and > 0");
}

DielectricProperties TissueEntry::at(double f) const {
  if (model == Model::fixed) return fixed;
  return cole_cole_properties(cole_cole, f);
}

void TissueEntry::validate() const {
  const std::string where = "tissue table " + entry_where(*this);
  if (label < 0 || label > 65535) fail(where, ": label ", label, " must be in 0..65535");
  if (name.empty()) fail(where, ": the tissue name is empty");
  if (!std::isfinite(density) || density <= 0)
    fail(where, ": density ", density, " kg/m^3 must be finite and > 0");
  if (model == Model::fixed) {
    if (!std::isfinite(fixed.eps_r) || fixed.eps_r < 1.0)
      fail(where, ": relative permittivity ", fixed.eps_r, " must be finite and >= 1");
    if (!std::isfinite(fixed.sigma) || fixed.sigma < 0)
      fail(where, ": conductivity ", fixed.sigma, " S/m must be finite and >= 0");
  } else {
    cole_cole.validate(where);
  }
}

void TissueTable::set(const TissueEntry& e) {
  e.validate();
  auto it = std::lower_bound(entries_.begin(), entries_.end(), e.label,
                             [](const TissueEntry& a, int l) { return a.label < l; });
  if (it != entries_.end() && it->label == e.label)
    *it = e;
  else
    entries_.insert(it, e);
}

const TissueEntry* TissueTable::find(std::int64_t label) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), label,
                             [](const TissueEntry& a, std::int64_t l) { return a.label < l; });
  return (it != entries_.end() && it->label == label) ? &*it : nullptr;
}

int TissueTable::merge_csv(const std::string& text, const std::string& origin) {
  std::istringstream in(text);
  std::string line;
  int line_no = 0, rows = 0;
  std::map<long long, int> seen;  // label -> line
  std::vector<TissueEntry> parsed;
  bool first_content = true;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    std::vector<std::string> f;
    {
      std::string cur;
      for (char c : t) {
        if (c == ',' || c == ';') {
          f.push_back(trim(cur));
          cur.clear();
        } else {
          cur += c;
        }
      }
      f.push_back(trim(cur));
    }
    // Trailing empty fields (a trailing separator) are ignored.
    while (f.size() > 1 && f.back().empty()) f.pop_back();
    long long label = 0;
    const bool label_ok = parse_int(f[0], &label);
    if (first_content && !label_ok) {  // header
      first_content = false;
      continue;
    }
    first_content = false;
    std::ostringstream wh;
    wh << origin << " line " << line_no;
    const std::string where = wh.str();
    if (!label_ok)
      fail("tissue table ", where, ": the first field '", f[0], "' is not an integer label");
    const std::string lw = where + " (label " + std::to_string(label) +
                           (f.size() > 1 && !f[1].empty() ? ", '" + f[1] + "'" : "") + ")";
    if (label < 0 || label > 65535) fail("tissue table ", lw, ": label must be in 0..65535");
    if (f.size() < 3)
      fail("tissue table ", lw, ": expected 'label, name, model, ...' with model fixed, colecole or ",
           "gabriel; got ", f.size(), " field(s)");
    if (seen.count(label))
      fail("tissue table ", lw, ": label ", label, " is already defined on line ", seen[label]);
    seen[label] = line_no;
    TissueEntry e;
    e.label = int(label);
    e.name = f[1];
    e.origin = where;
    const std::string model = lower(f[2]);
    auto number = [&](std::size_t idx, const char* what) {
      double v = 0;
      if (!parse_double(f[idx], &v))
        fail("tissue table ", lw, ": field ", idx + 1, " (", what, ") = '", f[idx],
             "' is not a number");
      return v;
    };
    auto expect = [&](std::size_t n, const char* layout) {
      if (f.size() != n)
        fail("tissue table ", lw, ": model '", model, "' expects ", n, " fields (", layout,
             "), got ", f.size());
    };
    if (model == "fixed") {
      expect(6, "label, name, fixed, eps_r, sigma, density");
      e.model = TissueEntry::Model::fixed;
      e.fixed.eps_r = number(3, "eps_r");
      e.fixed.sigma = number(4, "sigma");
      e.density = number(5, "density");
    } else if (model == "colecole" || model == "cole-cole" || model == "cole_cole") {
      expect(18, "label, name, colecole, ef, del1, tau1_ps, alf1, del2, tau2_ns, alf2, sig, del3, "
                 "tau3_us, alf3, del4, tau4_ms, alf4, density");
      static const char* cols[14] = {"ef",  "del1", "tau1_ps", "alf1",    "del2", "tau2_ns", "alf2",
                                     "sig", "del3", "tau3_us", "alf3",    "del4", "tau4_ms", "alf4"};
      double v[14];
      for (int q = 0; q < 14; ++q) v[q] = number(3 + q, cols[q]);
      e.model = TissueEntry::Model::cole_cole;
      e.cole_cole = from_gabriel_columns(v);
      e.density = number(17, "density");
    } else if (model == "gabriel") {
      expect(5, "label, name, gabriel, model_name, density");
      e.model = TissueEntry::Model::cole_cole;
      try {
        e.cole_cole = gabriel_model(f[3]);
      } catch (const Error& err) {
        fail("tissue table ", lw, ": ", err.what());
      }
      e.density = number(4, "density");
    } else {
      fail("tissue table ", lw, ": unknown model '", f[2], "' (expected fixed, colecole or gabriel)");
    }
    e.validate();
    parsed.push_back(e);
    ++rows;
  }
  if (rows == 0) fail("tissue table ", origin, ": no tissue rows found");
  for (const auto& e : parsed) set(e);
  return rows;
}

int TissueTable::merge_csv_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read tissue table file '", path, "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return merge_csv(ss.str(), path);
}

LabelProperties TissueTable::lookup_image(const std::vector<std::uint16_t>& image, double f) const {
  std::vector<std::int64_t> counts(65536, 0), labels, present;
  for (std::uint16_t l : image) ++counts[l];
  for (int l = 0; l < 65536; ++l)
    if (counts[std::size_t(l)]) {
      labels.push_back(l);
      present.push_back(counts[std::size_t(l)]);
    }
  return lookup(labels, f, &present);
}

LabelProperties TissueTable::lookup(const std::vector<std::int64_t>& labels, double f,
                                    const std::vector<std::int64_t>* counts) const {
  validate_frequency(f);
  LabelProperties out;
  std::ostringstream missing;
  int nmissing = 0;
  for (std::size_t q = 0; q < labels.size(); ++q) {
    const TissueEntry* e = find(labels[q]);
    if (!e) {
      missing << (nmissing ? ", " : "") << labels[q];
      if (counts && q < counts->size()) missing << " (" << (*counts)[q] << " voxels)";
      ++nmissing;
      continue;
    }
    out.labels.push_back(labels[q]);
    out.dielectric.push_back(e->at(f));
    out.density.push_back(e->density);
    out.names.push_back(e->name);
  }
  if (nmissing) {
    std::ostringstream have;
    for (const auto& e : entries_) have << (have.tellp() > 0 ? ", " : "") << e.label << " " << e.name;
    fail(nmissing, " label(s) of the image have no tissue properties: ", missing.str(),
         ". The tissue table defines: ", entries_.empty() ? std::string("nothing") : have.str(),
         ". Add rows for them in a tissue CSV file.");
  }
  return out;
}

}  // namespace vem
