// 2D FDTD engines: one interface, two backends (CPU: OpenMP, the reference; CUDA: the fast path),
// the 2D counterpart of fdtd_engine.h, held to each other by test_fdtd2d_cpu_cuda_agreement.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vem/fdtd/fdtd_engine.h"  // Backend, ProbeRecord, StepCallback, HookPoint
#include "vem/fdtd2d/fdtd2d_operator.h"

namespace vem {

class Fdtd2dEngine;

// Extensions (TF/SF, DFT monitors) called at the HookPoints of fdtd_engine.h. On the CUDA engine
// the hook runs on the host between launches and launches its own kernels on raw_field().
class Fdtd2dExtension {
 public:
  virtual ~Fdtd2dExtension() = default;
  virtual void hook(Fdtd2dEngine& engine, HookPoint where, int step) = 0;
};

// CUDA knobs (the CPU engine ignores them). 0 / automatic = the default chosen by measurement
// (testing/benchmarks/results/fdtd2d.md).
struct Fdtd2dTuning {
  int block_x = 0, block_y = 0;  // threads per block of the one-step kernels
  // Time steps advanced per pass over a tile held on chip (temporal blocking). 1: the plain
  // one-step kernels. 0: automatic. Runs with extensions or CPML use the plain kernels where the
  // blocked one does not cover them (documented in the engine). Same fields to 1e-6.
  int time_block = 0;
  enum class Coefficients { automatic, arrays, table } coefficients = Coefficients::automatic;
  // Plain one-step kernels (CUDA): consecutive x cells per thread, with float2 / float4 loads and
  // stores for 2 / 4. 0: automatic (by measurement, fdtd2d.md); 1: the one-cell kernels (block_y
  // threads of VEM_FDTD2D_ROWS rows); 2 or 4. Same arithmetic, same fields bit for bit.
  int plain_cells = 0;
  // Stores of the 2- and 4-cell kernels: 0 automatic, 1 ordinary, 2 streaming (st.global.cs).
  int plain_stores = 0;
};

class Fdtd2dEngine {
 public:
  virtual ~Fdtd2dEngine() = default;
  virtual std::string backend() const = 0;  // "cpu" or "cuda:<device name>"

  // Advance `steps` steps; the callback every callback_interval steps may stop the run.
  int run(int steps, const StepCallback& callback = {}, int callback_interval = 100);
  int steps_completed() const { return steps_; }
  double time_of_e() const { return steps_ * op_.dt(); }
  const Fdtd2dOperator& op() const { return op_; }

  // Host copy of component c (of the polarization): (nx+1)(ny+1) values, x fastest, 0 where the
  // component has no sample. Other components throw.
  virtual std::vector<float> field(Component c) const = 0;
  virtual void set_field(Component c, const std::vector<float>& values) = 0;

  ProbeRecord probes() const;
  double probe_time(Component c, int step) const;  // s dt for E, (s - 1/2) dt for H

  void add_extension(Fdtd2dExtension* ext);
  void remove_extension(Fdtd2dExtension* ext);
  virtual float* raw_field(Component c) = 0;  // layout array (host or device memory)
  virtual bool fields_on_device() const { return false; }
  // Where the cell updates read their coefficients: "table" or "arrays" (CPU; the operator's
  // material index and table, or its per-cell arrays); "uniform", "constant table" (the
  // __constant__ table: one live CUDA engine of the process at a time), "global table" or
  // "arrays" (CUDA).
  virtual std::string coefficient_storage() const = 0;

  double field_energy() const;  // J per metre along z

 protected:
  explicit Fdtd2dEngine(const Fdtd2dOperator& op) : op_(op) {}
  virtual void do_steps(int n) = 0;
  virtual std::vector<float> probe_values() const = 0;  // [step][probe]
  void run_hooks(HookPoint where, int step);
  bool has_extensions() const { return !extensions_.empty(); }

  const Fdtd2dOperator& op_;
  int steps_ = 0;

 private:
  std::vector<Fdtd2dExtension*> extensions_;
};

// automatic: CUDA when usable, else CPU (*warning says why); cuda with no device throws.
std::unique_ptr<Fdtd2dEngine> make_fdtd2d_engine(const Fdtd2dOperator& op, Backend backend,
                                                 int device_index = 0, std::string* warning = nullptr,
                                                 const Fdtd2dTuning& tuning = {});

}  // namespace vem
