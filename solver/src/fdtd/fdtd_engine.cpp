#include "vem/fdtd/fdtd_engine.h"

#include <algorithm>

#include "fdtd/fdtd_engine_cpu.h"
#include "vem/core/error.h"

namespace vem {

// Implemented in fdtd_engine_cuda.cu, or in fdtd_engine_nocuda.cpp when built without CUDA.
std::unique_ptr<FdtdEngine> make_cuda_engine(const FdtdOperator& op, int device_index,
                                             const EngineTuning& tuning);
bool cuda_device_usable(std::string* why);

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::automatic: return "auto";
    case Backend::cpu: return "cpu";
    case Backend::cuda: return "cuda";
  }
  return "?";
}

Backend backend_from_name(const std::string& name) {
  for (auto b : {Backend::automatic, Backend::cpu, Backend::cuda})
    if (name == backend_name(b)) return b;
  fail("unknown backend '", name, "' (expected auto, cpu or cuda)");
}

bool cuda_available(std::string* why) { return cuda_device_usable(why); }

std::unique_ptr<FdtdEngine> make_engine(const FdtdOperator& op, Backend backend, int device_index,
                                        std::string* warning, const EngineTuning& tuning) {
  switch (backend) {
    case Backend::cpu:
      return std::make_unique<FdtdEngineCpu>(op, tuning);
    case Backend::cuda:
      return make_cuda_engine(op, device_index, tuning);
    case Backend::automatic: {
      std::string why;
      if (cuda_device_usable(&why)) return make_cuda_engine(op, device_index, tuning);
      if (warning) *warning = why + "; running on the CPU engine";
      return std::make_unique<FdtdEngineCpu>(op, tuning);
    }
  }
  fail("unknown backend");
}

int FdtdEngine::run(int steps, const StepCallback& callback, int callback_interval) {
  if (steps < 0) fail("number of steps ", steps, " must be >= 0");
  if (callback_interval < 1) callback_interval = 1;
  int done = 0;
  while (done < steps) {
    const int n = std::min(callback_interval, steps - done);
    do_steps(n);
    done += n;
    steps_ += n;
    if (callback && !callback(done, steps)) break;
  }
  if (field_storage() != FieldStorage::float32 && done > 0) check_finite();
  return done;
}

void FdtdEngine::check_finite() const {
  const FieldLayout& L = op_.layout();
  for (int c = 0; c < 6; ++c) {
    const std::int64_t o = first_non_finite(Component(c));
    if (o < 0) continue;
    const std::array<int, 3> q = L.sample(o);
    const int i = q[0], j = q[1], k = q[2];
    fail("field storage ", field_storage_name(field_storage()), ": ", component_name(Component(c)), " at sample (", i,
         ", ", j, ", ", k, ") is not finite after ", steps_, " steps",
         field_storage() == FieldStorage::float16
             ? " (float16 holds |E| and |H| up to 65504 V/m and A/m): lower the source amplitude or use field_storage float32"
             : ": use field_storage float32");
  }
}

void FdtdEngine::add_extension(EngineExtension* ext) {
  if (!ext) fail("add_extension: null extension");
  if (std::find(extensions_.begin(), extensions_.end(), ext) == extensions_.end()) extensions_.push_back(ext);
}

void FdtdEngine::remove_extension(EngineExtension* ext) {
  extensions_.erase(std::remove(extensions_.begin(), extensions_.end(), ext), extensions_.end());
}

void FdtdEngine::run_hooks_slow(HookPoint where, int step) {
  for (EngineExtension* e : extensions_) e->hook(*this, where, step);
}

ProbeRecord FdtdEngine::probes() const {
  ProbeRecord r;
  const auto& ps = op_.probes();
  const std::vector<float> raw = probe_values();
  const std::size_t np = ps.size();
  for (std::size_t p = 0; p < np; ++p) {
    r.names.push_back(ps[p].probe.name);
    r.components.push_back(ps[p].probe.component);
    std::vector<float> v(steps_);
    for (int s = 0; s < steps_; ++s) v[s] = raw[std::size_t(s) * np + p];
    r.values.push_back(std::move(v));
  }
  return r;
}

void FdtdEngine::exchange_halo(bool electric) {
  const auto& bc = op_.setup().boundaries;
  const YeeGrid& g = op_.grid();
  const int n[3] = {g.nx, g.ny, g.nz};
  bool any = false;
  for (int f = 0; f < 6; ++f) any = any || bc.face[f] == BoundaryType::subdomain;
  if (!any) return;
  if (!halo_)
    fail("the boundaries have subdomain faces but no HaloExchange was set on the engine "
         "(FdtdEngine::set_halo_exchange)");
  auto plane_size = [&](int a) { return std::size_t(n[(a + 1) % 3] + 1) * (n[(a + 2) % 3] + 1); };
  auto comp = [&](int a, int q) { return Component(halo_component(electric, a, q)); };
  std::vector<HaloPlane> out;
  for (int f = 0; f < 6; ++f) {
    if (bc.face[f] != BoundaryType::subdomain || !halo_face_sends(f, electric)) continue;
    const int a = f / 2;
    HaloPlane p;
    p.face = f;
    p.values.resize(2 * plane_size(a));
    const int index = halo_send_plane(electric, n[a]);
    for (int q = 0; q < 2; ++q) read_plane(comp(a, q), a, index, p.values.data() + q * plane_size(a));
    out.push_back(std::move(p));
  }
  for (const HaloPlane& p : halo_->exchange(electric, std::move(out))) {
    if (p.face < 0 || p.face > 5 || bc.face[p.face] != BoundaryType::subdomain)
      fail("halo exchange returned a plane for face ", p.face, ", which is not a subdomain face");
    const int a = p.face / 2;
    if (halo_face_sends(p.face, electric))
      fail("halo exchange returned a ", electric ? "E" : "H", " plane for face ", face_name(p.face),
           ", which does not receive one");
    if (p.values.size() != 2 * plane_size(a))
      fail("halo plane for face ", face_name(p.face), " has ", p.values.size(), " values, expected ",
           2 * plane_size(a));
    const int index = halo_receive_plane(electric, n[a]);
    for (int q = 0; q < 2; ++q) write_plane(comp(a, q), a, index, p.values.data() + q * plane_size(a));
  }
}

double FdtdEngine::probe_time(Component c, int step) const {
  return is_electric(c) ? step * op_.dt() : (step - 0.5) * op_.dt();
}

double FdtdEngine::field_energy() const {
  const YeeGrid& g = op_.grid();
  const double volume = g.dx * g.dy * g.dz;
  double total = 0;
  for (int ci = 0; ci < 6; ++ci) {
    const Component c = static_cast<Component>(ci);
    const std::vector<float> f = field(c);
    const double base = is_electric(c) ? kEps0 : kMu0;
    // Along a periodic axis node plane N repeats plane 0: an H component's own-axis sample N
    // (updated, equal to sample 0) must not be counted twice.
    int hi[3];
    for (int a = 0; a < 3; ++a) hi[a] = op_.range_hi(c, a);
    const int own = axis_of(c);
    if (!is_electric(c) && op_.setup().boundaries.face[2 * own] == BoundaryType::periodic)
      hi[own] = g.n()[own] - 1;
    double sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (int k = op_.range_lo(c, 2); k <= hi[2]; ++k)
      for (int j = op_.range_lo(c, 1); j <= hi[1]; ++j)
        for (int i = op_.range_lo(c, 0); i <= hi[0]; ++i) {
          const double v = f[i + (g.nx + 1) * (j + std::size_t(g.ny + 1) * k)];
          sum += op_.relative_constitutive_at(c, i, j, k) * v * v;
        }
    total += 0.5 * base * sum * volume;
  }
  return total;
}

}  // namespace vem
