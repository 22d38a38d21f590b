// The full (off-diagonal) smoothed inverse permittivity of subpixel smoothing (issue 15), as an
// engine extension (fdtd_engine.h): a sparse correction around the diagonal bulk E update, the
// same for every update scheme whose E update is a leap-frog one (yee, fv24, fv24_wb, s22) and for
// both engines (CPU loops; CUDA kernels over the list).
//
// Where the smoothed tensor eps_eff^-1 = P <1/eps> + (1 - P) <eps>^-1 (P = n n^T; Kottke,
// Farjadpour & Johnson, Phys. Rev. E 77, 036611 (2008); Oskooi et al., Opt. Lett. 34, 2778
// (2009)) has off-diagonal elements (PerCellMedium::inverse_eps_rows, made by
// subpixel_smoothed_medium with SubpixelOptions::full_tensor), the listed E samples are stepped in
// D and their E is recovered from the D's around them:
//   after_h: E_old = E at every listed sample (E at step dt, before the E update);
//   after_e (after the bulk update, CPML, point sources and earlier extensions, e.g. TF/SF):
//     1. every listed sample: the update's increment is cb (curl H - J) (lossless: ca = 1), so
//        D / eps0 += (E - E_old) eps_r,  eps_r = dt / (eps0 cb) the sample's diagonal permittivity;
//     2. every listed sample: E = inv_cc D / eps0 + sum_pairs w D_nb / eps0,
//   with inv_cc = 1 / eps_r (the medium's diagonal of eps_eff^-1) and the pair couplings between an
//   E_c sample and the four E_b samples around it (b != c; Meep's four-point average of D_b at the
//   E_c position). Coupling weight (choice): w = (T_cb(E_c sample) + T_bc(E_b sample)) / 8, the same
//   in both rows (T: the rows' off-diagonal elements, 0 at a sample without a row), so the
//   discrete eps^-1 is a symmetric matrix and the leap-frog energy argument holds where it is
//   positive definite. Each sample's 3x3 tensor is; the assembled matrix is not diagonally
//   dominant at high contrast, so this is checked, not proven: 20000 steps of a PEC cavity with an
//   eps_r 12 or 80 sphere and random initial E stay bounded (test_subpixel_tensor).
//   Meep weights the E_c row by T_cb(E_c sample) / 4 alone, which is not symmetric; on a planar
//   interface (T constant along it) the two agree.
//   Every sample a coupling reaches is listed (D stepped there too), so a neighbour's D is its own
//   stepped value; a listed sample without a row of its own has only its diagonal and couplings.
// Restrictions (refused or left diagonal, as stated): lossless samples only (a sample whose update
// has ca != 1, i.e. conductivity or a lossy average, keeps the diagonal and its couplings are
// dropped); samples inside the components' update ranges only (PEC faces, periodic copies and
// ghosts are not listed); s44 (multi-step in time) refused; not on a distributed (halo) run.
// With nothing of the tensor listed the fields are those of the diagonal medium (the update
// reproduces the bulk one to rounding).
// Cost: 3 passes over the list per step (about 30 bytes a listed sample and coupling); the
// sphere of subpixel.md at 5 mm has 1.05e4 rows (plus the neighbours they reach) against 1.8e6 E
// samples in the grid.
// Limitation: set_field() on a listed sample after construction is not seen by the stored D.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "vem/fdtd/fdtd_engine.h"

namespace vem {

// The list the extension steps (built on the host from the operator; engine-independent).
struct TensorSampleList {
  std::vector<std::uint8_t> component;  // per listed sample: 0..2
  std::vector<std::int64_t> offset;     // layout offset
  std::vector<float> eps;               // dt / (eps0 cb): the diagonal permittivity the update uses
  std::vector<float> inv;               // inv_cc = 1 / eps (float)
  std::vector<std::int32_t> begin;      // couplings of sample s: [begin[s], begin[s+1])
  std::vector<std::int32_t> neighbour;  // listed sample index
  std::vector<float> weight;
  std::int64_t rows_used = 0, rows_dropped = 0;  // medium rows listed / left diagonal (lossy, outside ranges)
  std::size_t size() const { return offset.size(); }
};

// Builds the list from op.setup().medium.inverse_eps_rows. Throws vem::Error for s44 and for rows
// outside the grid.
TensorSampleList build_tensor_sample_list(const FdtdOperator& op);

class SubpixelTensorExtension final : public EngineExtension {
 public:
  // Attaches itself to `engine` (detached in the destructor); D starts from eps_r E of the
  // engine's present fields. Attach it after the extensions that add to E at after_e (TF/SF,
  // harmonic current): their increments then enter D.
  explicit SubpixelTensorExtension(FdtdEngine& engine);
  ~SubpixelTensorExtension() override;
  SubpixelTensorExtension(const SubpixelTensorExtension&) = delete;
  SubpixelTensorExtension& operator=(const SubpixelTensorExtension&) = delete;

  void hook(FdtdEngine& engine, HookPoint where, int step) override;
  const TensorSampleList& list() const { return list_; }

  struct Backend {  // CPU loops or CUDA kernels (internal)
    virtual ~Backend() = default;
    virtual void init(FdtdEngine& eng) = 0;        // D = eps E
    virtual void save(FdtdEngine& eng) = 0;        // E_old = E
    virtual void apply(FdtdEngine& eng) = 0;       // phases 1 and 2
  };

 private:
  FdtdEngine* engine_;
  TensorSampleList list_;
  std::unique_ptr<Backend> backend_;
};

// Internal: CUDA backend (subpixel_tensor_cuda.cu; only with VEM_WITH_CUDA).
std::unique_ptr<SubpixelTensorExtension::Backend> make_subpixel_tensor_backend_cuda(const TensorSampleList& list);

}  // namespace vem
