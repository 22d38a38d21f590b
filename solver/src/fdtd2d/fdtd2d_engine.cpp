// The 2D engine's shared methods (fdtd2d_engine.h) and the backend choice.
#include "vem/fdtd2d/fdtd2d_engine.h"

#include <algorithm>

#include "fdtd2d/fdtd2d_engine_cpu.h"
#include "fdtd2d/fdtd2d_engine_cuda.h"
#include "vem/core/error.h"

namespace vem {

std::unique_ptr<Fdtd2dEngine> make_fdtd2d_engine(const Fdtd2dOperator& op, Backend backend, int device_index,
                                                 std::string* warning, const Fdtd2dTuning& tuning) {
  switch (backend) {
    case Backend::cpu:
      return std::make_unique<Fdtd2dEngineCpu>(op);
    case Backend::cuda:
      return make_fdtd2d_engine_cuda(op, device_index, tuning);
    case Backend::automatic: {
      std::string why;
      if (cuda_available(&why)) return make_fdtd2d_engine_cuda(op, device_index, tuning);
      if (warning) *warning = why + "; running on the 2D CPU engine";
      return std::make_unique<Fdtd2dEngineCpu>(op);
    }
  }
  fail("make_fdtd2d_engine: unknown backend ", int(backend));
}

int Fdtd2dEngine::run(int steps, const StepCallback& callback, int callback_interval) {
  if (steps < 0) fail("Fdtd2dEngine::run: steps = ", steps, ": must be >= 0");
  if (callback_interval < 1) callback_interval = 1;
  int done = 0;
  while (done < steps) {
    const int n = std::min(callback_interval, steps - done);
    do_steps(n);
    done += n;
    steps_ += n;
    if (callback && !callback(done, steps)) break;
  }
  return done;
}

ProbeRecord Fdtd2dEngine::probes() const {
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

double Fdtd2dEngine::probe_time(Component c, int step) const {
  return is_electric(c) ? step * op_.dt() : (step - 0.5) * op_.dt();
}

void Fdtd2dEngine::add_extension(Fdtd2dExtension* ext) {
  if (!ext) fail("Fdtd2dEngine::add_extension: null extension");
  if (std::find(extensions_.begin(), extensions_.end(), ext) == extensions_.end()) extensions_.push_back(ext);
}

void Fdtd2dEngine::remove_extension(Fdtd2dExtension* ext) {
  extensions_.erase(std::remove(extensions_.begin(), extensions_.end(), ext), extensions_.end());
}

void Fdtd2dEngine::run_hooks(HookPoint where, int step) {
  for (Fdtd2dExtension* e : extensions_) e->hook(*this, where, step);
}

double Fdtd2dEngine::field_energy() const {
  const YeeGrid2D& g = op_.grid();
  const auto comps = op_.components();
  const auto& bc = op_.setup().boundaries;
  double total = 0;
  for (int s = 0; s < 3; ++s) {
    const Component c = comps[s];
    const std::vector<float> f = field(c);
    int hi[2] = {op_.range_hi(s, 0), op_.range_hi(s, 1)};
    // On a periodic axis an H component's own-axis sample N repeats sample 0: count it once.
    const int own = axis_of(c);
    if (!is_electric(c) && own < 2 && bc.face[2 * own] == BoundaryType::periodic) hi[own] = (own == 0 ? g.nx : g.ny) - 1;
    double sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (int j = op_.range_lo(s, 1); j <= hi[1]; ++j)
      for (int i = op_.range_lo(s, 0); i <= hi[0]; ++i) {
        const double v = f[i + std::size_t(g.nx + 1) * j];
        sum += op_.relative_constitutive_at(s, i, j) * v * v;
      }
    total += 0.5 * (is_electric(c) ? kEps0 : kMu0) * sum * g.dx * g.dy;
  }
  return total;
}

}  // namespace vem
