// The halo interface (halo_exchange.h): a heterogeneous problem split along x into two
// subdomains, each stepped by its own engine in its own thread and joined only through a
// HaloExchange, reproduces the single-domain run sample for sample. This is the mechanism a
// one-GPU-per-rank MPI run uses; here the "network" is an in-process link.
#include <condition_variable>
#include <cmath>
#include <mutex>
#include <random>
#include <thread>

#include "test_support.h"
#include "threads_util.h"
#include "vem/core/error.h"
#include "vem/fdtd/fdtd_engine.h"

using namespace vem;

namespace {

// Two ports joined back to back: what one side sends through face f arrives at the other side
// as face f^1. exchange() is a rendezvous of both sides (a two-thread barrier carrying data).
class LocalLink {
 public:
  class Port : public HaloExchange {
   public:
    Port(LocalLink* link, int side) : link_(link), side_(side) {}
    std::vector<HaloPlane> exchange(bool, std::vector<HaloPlane> out) override {
      return link_->meet(side_, std::move(out));
    }
   private:
    LocalLink* link_;
    int side_;
  };
  Port port(int side) { return Port(this, side); }

 private:
  std::vector<HaloPlane> meet(int side, std::vector<HaloPlane> out) {
    std::unique_lock<std::mutex> lock(m_);
    box_[side] = std::move(out);
    const long gen = generation_;
    if (++arrived_ == 2) {
      for (int s = 0; s < 2; ++s) {
        delivered_[1 - s] = std::move(box_[s]);
        for (auto& p : delivered_[1 - s]) p.face ^= 1;
      }
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != gen; });
    }
    return std::move(delivered_[side]);
  }
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  long generation_ = 0;
  std::vector<HaloPlane> box_[2], delivered_[2];
};

constexpr int kNx = 40, kNy = 21, kNz = 17, kSplit = 23;

FdtdSetup global_setup() {
  FdtdSetup s;
  s.grid = {kNx, kNy, kNz, 1.0e-3, 1.2e-3, 0.9e-3};
  s.boundaries.face = {BoundaryType::cpml, BoundaryType::pmc, BoundaryType::periodic,
                       BoundaryType::periodic, BoundaryType::pec, BoundaryType::cpml};
  for (auto& c : s.boundaries.cpml) c.thickness = 6;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  for (int m = 0; m < 20; ++m)
    s.materials.push_back(Material::isotropic("m" + std::to_string(m), 1 + 40 * u(rng), u(rng), 1 + u(rng)));
  s.material_index.resize(s.grid.cell_count());
  for (auto& v : s.material_index) v = std::uint16_t(20 * u(rng)) % 20;
  PointSource src;
  src.i = 11; src.j = 9; src.k = 8;
  src.direction = {0.5, 0.2, 1.0};
  src.waveform = Waveform::differentiated_gaussian_for_bandwidth(60e9);
  s.sources = {src};
  return s;
}

// The part of the global problem in cells [i0, i0 + nx) along x.
FdtdSetup part(const FdtdSetup& g, int i0, int nx, BoundaryType lo, BoundaryType hi) {
  FdtdSetup s = g;
  s.grid.nx = nx;
  s.boundaries.face[0] = lo;
  s.boundaries.face[1] = hi;
  s.material_index.clear();
  for (int k = 0; k < kNz; ++k)
    for (int j = 0; j < kNy; ++j)
      for (int i = 0; i < nx; ++i) s.material_index.push_back(g.material_index[(i0 + i) + kNx * (j + kNy * k)]);
  s.sources.clear();
  for (auto src : g.sources)
    if (src.i >= i0 && src.i < i0 + nx) { src.i -= i0; s.sources.push_back(src); }
  return s;
}

}  // namespace

class SubdomainHalo : public testing::TestWithParam<Backend> {};

TEST_P(SubdomainHalo, TwoSubdomainsReproduceTheSingleDomain) {
  VEM_REQUIRE_BACKEND(GetParam());
  const FdtdSetup g = global_setup();
  const FdtdOperator op_g(g);
  const FdtdOperator op_a(part(g, 0, kSplit, BoundaryType::cpml, BoundaryType::subdomain));
  const FdtdOperator op_b(part(g, kSplit, kNx - kSplit, BoundaryType::subdomain, BoundaryType::pmc));
  EngineTuning tuning;
  tuning.table = EngineTuning::TablePlacement::global;  // three engines alive at once
  auto whole = make_engine(op_g, GetParam(), 0, nullptr, tuning);
  auto a = make_engine(op_a, GetParam(), 0, nullptr, tuning);
  auto b = make_engine(op_b, GetParam(), 0, nullptr, tuning);
  LocalLink link;
  auto pa = link.port(0), pb = link.port(1);
  a->set_halo_exchange(&pa);
  b->set_halo_exchange(&pb);

  const int steps = 400;
  {
    vem_test::ThreadsForGrid one_thread(g.grid.cell_count());
    whole->run(steps);
  }
  // Each subdomain engine on its own thread (one OpenMP thread each: small grids).
  std::thread ta([&] { vem_test::ThreadsForGrid t(op_a.grid().cell_count()); a->run(steps); });
  std::thread tb([&] { vem_test::ThreadsForGrid t(op_b.grid().cell_count()); b->run(steps); });
  ta.join();
  tb.join();

  // Ownership: samples with global x index < kSplit come from A, the others from B (B owns the
  // shared node plane).
  for (int ci = 0; ci < 6; ++ci) {
    const Component c = Component(ci);
    const auto fg = whole->field(c), fa = a->field(c), fb = b->field(c);
    double diff = 0, norm = 0;
    for (int k = 0; k <= kNz; ++k)
      for (int j = 0; j <= kNy; ++j)
        for (int i = 0; i <= kNx; ++i) {
          const float ref = fg[i + (kNx + 1) * (j + std::size_t(kNy + 1) * k)];
          const float got = i < kSplit ? fa[i + (kSplit + 1) * (j + std::size_t(kNy + 1) * k)]
                                       : fb[(i - kSplit) + (kNx - kSplit + 1) * (j + std::size_t(kNy + 1) * k)];
          diff = std::max(diff, double(std::fabs(got - ref)));
          norm = std::max(norm, double(std::fabs(ref)));
        }
    std::cout << component_name(c) << ": max |split - whole| = " << diff << " (max |field| " << norm << ")\n";
    EXPECT_GT(norm, 0.0) << component_name(c);
    EXPECT_LE(diff, 1e-6 * norm) << component_name(c);
  }
}

TEST(SubdomainHaloErrors, SubdomainFaceWithoutExchangeIsReported) {
  const FdtdSetup g = global_setup();
  const FdtdOperator op(part(g, 0, kSplit, BoundaryType::cpml, BoundaryType::subdomain));
  auto e = make_engine(op, Backend::cpu);
  try {
    e->run(1);
    FAIL() << "expected an error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("HaloExchange"), std::string::npos) << err.what();
  }
}

VEM_INSTANTIATE_BACKENDS(SubdomainHalo);
