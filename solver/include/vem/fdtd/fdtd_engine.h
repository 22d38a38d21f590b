// One engine interface, two backends: the CPU engine (OpenMP; the reference and the fallback
// when there is no GPU) and the CUDA engine (the fast path). Both step the same FdtdOperator on
// the same memory layout and are held to each other by the tests.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vem/fdtd/fdtd_operator.h"
#include "vem/fdtd/halo_exchange.h"

namespace vem {

enum class Backend { automatic, cpu, cuda };
const char* backend_name(Backend b);
Backend backend_from_name(const std::string& name);  // "auto", "cpu", "cuda"

// Probe record: values[p][s] is probe p after step s+1; times from probe_time().
struct ProbeRecord {
  std::vector<std::string> names;
  std::vector<Component> components;
  std::vector<std::vector<float>> values;
};

// Called every `callback_interval` steps with (steps done so far in this run, steps asked);
// returning false stops the run at that step boundary (the fields stay consistent).
using StepCallback = std::function<bool(int done, int total)>;

class FdtdEngine;

// Engine extensions (DFT monitors, TFSF plane waves, ...): operator-side descriptions whose
// engine-side state is called at fixed points of every leap-frog step `step` (0-based):
//   after_h:     H is at (step + 1/2) dt, bulk + CPML + point sources done; before the PMC /
//                periodic ghosts and the halo exchange (field corrections go here).
//   after_e:     E is at (step + 1) dt, bulk + CPML + point sources done; before the periodic
//                plane copy and the halo exchange (field corrections go here).
//   end_of_step: the step is complete (ghosts, periodic copies, halo, probes); read-only use.
// On the CUDA engine the hook runs on the host between kernel launches of the default stream
// and must launch its own (checked) kernels on raw_field() pointers. Not owned by the engine.
enum class HookPoint { after_h, after_e, end_of_step };
class EngineExtension {
 public:
  virtual ~EngineExtension() = default;
  virtual void hook(FdtdEngine& engine, HookPoint where, int step) = 0;
};

class FdtdEngine {
 public:
  virtual ~FdtdEngine() = default;
  virtual std::string backend() const = 0;  // "cpu" or "cuda:<device name>"

  // Advance `steps` leap-frog steps. Returns the number of steps done (< steps if aborted).
  int run(int steps, const StepCallback& callback = {}, int callback_interval = 100);

  int steps_completed() const { return steps_; }
  double time_of_e() const { return steps_ * op_.dt(); }  // E is at this time, H half a step before
  const FdtdOperator& op() const { return op_; }

  // Host copy of one component: (nx+1)(ny+1)(nz+1) values, x fastest, at sample index (i,j,k)
  // (positions in yee_grid.h); samples outside the component's range are 0.
  virtual std::vector<float> field(Component c) const = 0;
  // Overwrites one component from the same compact layout (initial conditions, tests).
  virtual void set_field(Component c, const std::vector<float>& values) = 0;

  ProbeRecord probes() const;
  // Time at which probe samples of step s (1-based) were taken: s dt for E, (s - 1/2) dt for H.
  double probe_time(Component c, int step) const;

  // The exchange for faces of type BoundaryType::subdomain (halo_exchange.h); not owned.
  void set_halo_exchange(HaloExchange* exchange) { halo_ = exchange; }

  // Engine extensions (see EngineExtension); called in the order added. Not owned.
  void add_extension(EngineExtension* ext);
  void remove_extension(EngineExtension* ext);
  // The engine's array of component c in the padded layout (field_layout.h): host memory for the
  // CPU engine, device memory for the CUDA engine (fields_on_device()). For extensions. Float
  // elements: the CUDA engine with a 2-byte field storage refuses (Error naming the storage);
  // extensions that handle it use raw_field_storage.
  virtual float* raw_field(Component c) = 0;
  virtual bool fields_on_device() const { return false; }
  // How the fields are stored (FdtdSetup::field_storage, vem/core/field_storage.h). The CPU engine
  // keeps float arrays whose values are rounded to the storage; the CUDA engine keeps 2-byte
  // elements (__half / __nv_bfloat16) for float16 / bfloat16.
  FieldStorage field_storage() const { return op_.setup().field_storage; }
  // The array of component c with elements of raw_field_element(): float for float32 and on the
  // CPU engine, the 2-byte elements of field_storage() on the CUDA engine otherwise. Extensions
  // that add to a sample round the sum to the storage (as every store of the engine does).
  virtual void* raw_field_storage(Component c) { return raw_field(c); }
  virtual FieldStorage raw_field_element() const { return FieldStorage::float32; }
  // The first sample of component c (layout offset) that is not finite, -1 when all are. run()
  // checks all six after its steps when the storage is 2-byte (float16 overflows above 65504)
  // and throws Error naming the component, sample and storage.
  virtual std::int64_t first_non_finite(Component c) const = 0;
  // A volume source folded into the bulk E update, for extensions that add one to every E sample
  // (harmonic_current.h): E_c -= s_c[2o] cr - s_c[2o+1] ci at every layout offset o, with s_c
  // interleaved (re, im) float arrays of 2 x layout size in the engine's memory. Engines that can
  // (CUDA: it saves the extension's own pass over E) return true and apply it from the next E
  // update on with the phase last set by set_fused_e_source_phase(); nullptr detaches. Others
  // return false and the extension applies the source itself.
  virtual bool set_fused_e_source(const float* const s[3]) { (void)s; return false; }
  virtual void set_fused_e_source_phase(float cr, float ci) { (void)cr; (void)ci; }

  // Electromagnetic energy in the domain (J), from host copies: sum of eps E^2/2 + mu H^2/2
  // times the cell volume (E and H half a step apart: a bounded, not exactly conserved, sum).
  double field_energy() const;
  // Steps this engine ran as one pass (CUDA engine, EngineTuning::step, and s44 with
  // EngineTuning::s44_stepping one_pass); 0 for the others.
  virtual std::int64_t one_pass_steps() const { return 0; }
  // Steps this engine ran two per pass (Yee's temporal blocking, EngineTuning::temporal_blocking,
  // also counted in one_pass_steps; s44's pair, EngineTuning::s44_stepping); 0 for the others.
  virtual std::int64_t two_step_steps() const { return 0; }
  // Of those, the steps whose pairs stepped the CPML shell and the faces in two-step tiles too
  // (the CUDA engine's shell tiles, fused_step.h).
  virtual std::int64_t two_step_shell_steps() const { return 0; }
  // Steps taken by the persistent kernel (CUDA engine, EngineTuning::Step::persistent); 0 for the others.
  virtual std::int64_t persistent_steps() const { return 0; }
  // Of those, the steps whose samples the kernel took from its sample plan instead of the
  // grid-stride walk (fused_step.h, plan_persistent).
  virtual std::int64_t persistent_planned_steps() const { return 0; }
  // Coefficient arrays the engine holds in its own memory when it reads a coefficient-array model
  // as arrays (CUDA engine: of the 12, those equal bit for bit to another of the same kind are
  // stored once, e.g. 4 for an isotropic medium without edge averaging); 0 otherwise.
  virtual int coefficient_arrays_stored() const { return 0; }

 protected:
  explicit FdtdEngine(const FdtdOperator& op) : op_(op) {}
  virtual void do_steps(int n) = 0;                        // advance n steps, record probes
  virtual std::vector<float> probe_values() const = 0;     // [step][probe], steps_ rows
  // Copies one node plane (index along `axis`) of component c over the full transverse extent
  // [0, N_b] x [0, N_c] (b = axis+1 fastest) out of / into the engine's arrays.
  virtual void read_plane(Component c, int axis, int index, float* out) const = 0;
  virtual void write_plane(Component c, int axis, int index, const float* in) = 0;
  // Sends and receives the subdomain-face planes after the H (electric = false) or E update.
  void exchange_halo(bool electric);
  // Calls the extensions' hooks; a no-op (one empty() test) when there are none.
  void run_hooks(HookPoint where, int step) {
    if (!extensions_.empty()) run_hooks_slow(where, step);
  }
  bool has_extensions() const { return !extensions_.empty(); }

  const FdtdOperator& op_;
  int steps_ = 0;
  HaloExchange* halo_ = nullptr;

 private:
  void run_hooks_slow(HookPoint where, int step);
  void check_finite() const;  // narrow storages, after run(): throws for a non-finite sample
  std::vector<EngineExtension*> extensions_;
};

// Tuning knobs of the CUDA engine (the CPU engine reads only `coefficients`). Zero / automatic =
// the defaults chosen by measurement (testing/benchmarks/results/).
struct EngineTuning {
  // Coefficient-array models: read the 12 per-sample arrays (48 bytes a sample) or the same
  // values as a table of distinct tuples and a 16-bit index (FdtdOperator::coefficient_index).
  // automatic: the table where the model has at most 65536 distinct tuples on the CUDA engine
  // (fewer bytes per step, fdtd.md), the arrays on the CPU engine (measured faster there).
  // Indexed models always use their table.
  enum class Coefficients { automatic, arrays, table } coefficients = Coefficients::automatic;
  int block_x = 0, block_y = 0;  // threads per block of the bulk kernels (block_x multiple of 32)
  // z planes each thread of the bulk kernels marches over (registers carry the z-neighbour);
  // 1 is one thread per sample (the paper's xyz-mapping), >= nz+1 one thread per column.
  int z_chunk = 0;
  // Where the CUDA kernels read the material table: the constant bank (automatic: when it fits and
  // no other live engine holds it) or global memory. With the constant bank, the two-step and
  // persistent kernels read a copy in each block's shared memory (tables of up to 256 entries;
  // measured faster, fdtd.md, session 22).
  enum class TablePlacement { automatic, constant, global } table = TablePlacement::automatic;
  // CPML corrections: all six slabs in one launch per half step (merged) or one launch per axis;
  // automatic: merged below 8 M cells, where launches weigh most (measured, fdtd.md).
  enum class CpmlLaunch { automatic, per_axis, merged } cpml = CpmlLaunch::automatic;
  // Stepping kernels launched one after the other (plain) or with programmatic dependent launch
  // (Hopper and later: the next kernel's blocks are scheduled while the previous one drains;
  // same arithmetic, the same fields bit for bit). automatic: programmatic on sm_90 and later.
  enum class KernelLaunch { automatic, plain, programmatic } launch = KernelLaunch::automatic;
  // Threads per block (x, y, z) of the CUDA engine's high-order bulk kernels (schemes fv24,
  // fv24_wb, s22, s44; one thread per sample, a 3D block); 0 keeps the default 32 x 8 x 1 (s44's
  // direct kernel: 64 x 4 x 1, its folded CPML bands 32 x 4 x 1). The Yee kernels use block_x /
  // block_y above.
  int ho_block_x = 0, ho_block_y = 0, ho_block_z = 0;
  // The CUDA engine's high-order bulk kernel (issue 15; measured in
  // testing/benchmarks/results/highorder_bench_h100_512_v2.md). All give the same fields bit for bit.
  //  tables: every stencil point of every sample resolved through the boundary tables (the first
  //          version, kept for comparison; one thread per sample, block ho_block_*);
  //  direct: samples at least 2 from every face (where the tables are the identity) index their
  //          neighbours directly, the stencil's shape fixed at compile time, the three components
  //          fused, neighbours through L1 (block ho_block_*); the 2-sample boundary shell through
  //          the tables in a kernel of its own. s44's direct kernel issues every load of a sample
  //          before its stores and reads its coefficients from a table per material key
  //          (VEM_S44_DIRECT=interleaved runs the earlier kernel, for measurement);
  //  tiled:  as direct, the interior through shared-memory tiles of 32 x 8 columns with a 3-sample
  //          halo, marching over ho_z_chunk planes (0: the default) with a ring of 4 planes.
  // automatic: the measured default, tiled for fv24, fv24_wb and s22, direct for s44. Stencils of
  // another shape than the four schemes' use tables.
  enum class HighOrderKernel { automatic, tables, direct, tiled } ho_kernel = HighOrderKernel::automatic;
  int ho_z_chunk = 0;
  // The CPML corrections of the high-order schemes: in kernels of their own after the update, one
  // per slab (slab_kernels), or folded into the tiled and boundary-shell kernels (folded: the
  // correction reuses the curl's derivative and is added before the value is stored; the interior
  // box is cut into the bands that meet a slab and a core compiled without the corrections). Same
  // fields bit for bit. Folding applies to the tiled kernel of fv24, fv24_wb and s22 and to s44's
  // direct kernel; the tables kernel, the other schemes' direct kernel and s44's interleaved one
  // use the slab kernels. automatic: folded (measured,
  // testing/benchmarks/results/highorder.md); VEM_HO_CPML=folded|slab_kernels overrides it.
  // Folded, the band kernel also computes the boundary shell's x and z faces, reading the boundary
  // tables into its tiles near a face (fv24, fv24_wb, s22 about +11 % at 512^3 on an H100;
  // VEM_HO_X_FACES=shell and VEM_HO_Z_FACES=shell leave them to the shell kernel, for measurement).
  // The bands go in one launch and the shell runs on a second stream beside the interior (fv24
  // +4.3 %, fv24_wb +6.0 %, s22 +5.4 % at 512^3 on an H100, session 20; VEM_HO_BAND_LAUNCH=separate
  // and VEM_HO_SHELL_STREAM=0 undo them, for measurement).
  enum class HighOrderCpml { automatic, slab_kernels, folded } ho_cpml = HighOrderCpml::automatic;
  // s44's time stepping on the CUDA engine (issue 15): one step per pass (one_step, the direct
  // kernels), or two steps per pass (two_steps): a kernel computes both steps of the samples of a
  // core box in one pass over the time levels (73 instead of about 157 bytes a sample and step),
  // the rest of the grid (CPML, faces, the 15 or so layers next to them) steps twice with the
  // direct kernels. It needs 48 bytes a sample more (two spare time levels), the material table
  // (indexed or packed coefficients), float32 storage, no PMC / periodic / subdomain face and at
  // most 6 point-source components per field; runs with extensions or a fused source step one at
  // a time. automatic: one_step: the pair lost 21 % at 512^3 on an H200 (10,889-10,891 against
  // 13,763 Mcells/s; results/highorder.md, session 27), and 31 % since the one-step kernels got
  // faster (11,220-11,231 against 16,269-16,280, session 37). VEM_S44_STEPPING=one_step|two_steps
  // overrides it. Same fields bit for bit (test_fdtd_schemes_cuda_agreement).
  // one_pass: H^{n+1/2} and E^{n+1} of a core box in one kernel (s44_onepass_interior: the H that
  // the core's E reads outside a block's tile computed again by halo warps), 122 instead of about
  // 157 bytes a sample and step; the rest steps once with the direct kernels. 24 bytes a sample
  // more (one spare time level) and the same conditions as two_steps. It lost 20 % at 512^3 on an
  // H200 (14,767-14,771 against 18,423-18,424 Mcells/s; highorder.md, session 39), so automatic
  // stays one_step. VEM_S44_STEPPING=one_pass.
  // wavefront: the direct kernels' H and E passes over the core both fields share as tasks of one
  // persistent launch in plane order (H at plane p, E at plane p - lag once H of its planes is
  // done; the rows in 4 strips), so the E stage finds E^n and H^{n+1/2} in L2: about 122 bytes of
  // DRAM traffic a sample and step, each sample computed once; the bands, the shell and the rest
  // step around it with the direct kernels. No spare level; the same conditions as two_steps but
  // no material table needed. It lost 2 % at 512^3 on an H200 (18,033-18,124 against 18,423-18,437
  // Mcells/s; highorder.md, session 40): its kernel moves almost the ideal bytes, at 76 % of the
  // copy bandwidth against the direct passes' 86-90 %, so automatic stays one_step.
  // VEM_S44_STEPPING=wavefront (VEM_S44_WAVE_ROWS, _STRIPS, _LAG, _BLOCKS for measurement).
  enum class S44Stepping { automatic, one_step, two_steps, one_pass, wavefront } s44_stepping = S44Stepping::automatic;
  // One pass per time step (issue 16; solver/src/fdtd/cuda/fused_step.h): the Yee H and E
  // updates in one kernel with a second set of field arrays (ping-pong: 24 more bytes a sample),
  // 50 instead of 76 bytes a sample and step (indexed). The fields are those of the two passes
  // (the agreement tests run both). Runs with extensions or a fused E source step in two passes;
  // with subdomain faces (a distributed piece) the pass runs between the halo exchanges.
  // automatic: the measured default: two steps per pass (temporal_blocking, below) from 2 M cells
  // where it applies, else persistent (below) under 8 M cells where the model allows it
  // (fdtd_small_grids_h100.md), else one pass from 2.3 M cells (fdtd_onepass_h100.md;
  // VEM_FDTD_STEP=one_pass|two_pass|persistent overrides it). onepass_tile_y: rows of 32-wide tiles (4, 8, 16; 0: 8);
  // onepass_z_chunk: planes per block (0: 16, halved down to 4 while the grid would give fewer
  // than 8 blocks per multiprocessor). onepass_cpml: the CPML corrections folded into the pass
  // (folded: the H corrections always, the E ones when no E sample has to be computed again, i.e.
  // no PMC / periodic faces, H point sources or subdomain faces) or left to the slab kernels with
  // E computed again next to corrected H (slab_kernels); automatic: folded (measured,
  // fdtd_onepass_h100.md); VEM_ONEPASS_CPML=folded|slab_kernels overrides it. Same fields bit
  // for bit either way.
  // persistent: the steps of a do_steps call in one cooperative kernel whose blocks stay resident
  // (fdtd/cuda/fused_step.h launch_persistent): per step an H and an E phase over all samples in
  // place, each followed by a grid barrier, with the CPML corrections, the E point sources and the
  // probes inside the kernel; a small model's fields stay in L2 and no step pays a launch. It
  // needs a run with nothing else between the steps: no extensions or fused source (checked per
  // call: such runs step in two passes), no PMC / periodic / subdomain face, no H point source, at
  // most 8 E point-source components, the CPML folded (otherwise the one-pass step is taken). Same
  // fields bit for bit. VEM_FDTD_STEP=persistent asks for it.
  enum class Step { automatic, two_pass, one_pass, persistent } step = Step::automatic;
  // How the persistent kernel walks a sample: hoisted (every load of the sample, the CPML psi
  // included, issued before its arithmetic) or chained (each CPML slab's loads after the bulk
  // update, one round trip per slab). automatic: hoisted below 4 M samples, chained from there
  // (measured, fdtd_small_grids_h100.md, session 16: hoisted +3 to +25 % from 64^3 to the head
  // size, -1.3 % at 192^3). VEM_PERSISTENT_KERNEL=hoisted|chained overrides it. Same fields bit
  // for bit. The hoisted samples (with 32-bit offsets, up to 1024 samples along each axis) are
  // dealt out by a sample plan made at set-up instead of the grid-stride walk: the samples clear of
  // every CPML slab and update-range edge in warps of their own with those tests known at compile
  // time, the others with their tests read from the plan, the warps' loads balanced (fused_step.h,
  // plan_persistent; measured, results/fdtd.md, session 33). VEM_PERSISTENT_PLAN=walk keeps the
  // walk.
  enum class PersistentSamples { automatic, hoisted, chained } persistent_samples = PersistentSamples::automatic;
  int onepass_tile_y = 0, onepass_z_chunk = 0;
  enum class OnePassCpml { automatic, folded, slab_kernels } onepass_cpml = OnePassCpml::automatic;
  // Temporal blocking (issue 16; fdtd/cuda/fused_step.h, "two steps per pass"): pairs of one-pass
  // steps where the interior tiles (clear of every face, update-range edge, CPML slab, point
  // source and probe by 2 samples towards the low faces, 1 towards the high ones) read E^n and
  // H^{n-1/2} once and write E^{n+2} and H^{n+3/2}, while the rest steps twice in one-pass blocks through a third set of field arrays (24 more bytes a
  // sample) and a second set of E psi. It needs the one-pass step with everything folded (no
  // PMC / periodic / subdomain faces, no H point sources) and no CUDA graphs; runs with
  // extensions or a fused source step as before (checked per call). two_step_tile_y: threads per
  // interior block 32 x 16 or 32 x 32 (cores 29 x 13, 29 x 29; 0: 16); two_step_z_chunk: planes
  // per interior block (0: 32, halved down to 8 while there would be fewer than 8 interior blocks
  // per multiprocessor; the rest's blocks likewise, 16 down to 4). Same fields bit for bit as the
  // one-pass step. Measured on an H100
  // (testing/benchmarks/results/fdtd.md, session 19), against the default before it: +34 % at
  // 192^3, +19 % at 384^3, +12 % at 512^3 (indexed; +10 % with coefficient arrays), +6 % at 128^3.
  // automatic: on from 2 M cells when `step` is automatic too, the model allows it and the device
  // has room for the third set of arrays (else the step the engine would take without it);
  // VEM_TEMPORAL_BLOCKING=two_steps|off overrides it.
  enum class TemporalBlocking { automatic, off, two_steps } temporal_blocking = TemporalBlocking::automatic;
  int two_step_tile_y = 0, two_step_z_chunk = 0;
  // Small grids (issue 16; testing/benchmarks/results/fdtd_small_grids_h100.md). graph: the steps
  // of a run recorded in CUDA graphs of graph_chunk steps (0: 32) and replayed, instead of one
  // stream launch per kernel; only runs without extensions, halo exchange or a fused source (and
  // not s44) can be recorded, the others step directly. Same launches, same fields bit for bit.
  // automatic: the measured default (on below 8 M cells; with two steps per pass, on where the
  // CPML shell's tiles run beside the rest's steps, below 4 M cells: results/fdtd.md, session 25).
  enum class Graph { automatic, off, on } graph = Graph::automatic;
  int graph_chunk = 0;
  // l2_persist: the field arrays and the material index as an L2 persisting access-policy window
  // on every stepping launch (the persisting set-aside, a device-wide limit, sized to them).
  // automatic: the measured default (off).
  enum class L2Persist { automatic, off, on } l2_persist = L2Persist::automatic;
  // Subdomain faces (distributed runs, issue 17): the CUDA engine updates the interior while the
  // halo planes travel and the slabs beside the receiving faces after they arrive (overlap), or
  // exchanges between whole updates (off; the same fields bit for bit, for measuring the overlap).
  // The exchange of E planes also overlaps the next step's H interior when the engine has no
  // extensions and no probe on a received plane. A piece stepping in one pass (Step) exchanges
  // between passes, without overlap. automatic: overlap. VEM_HALO_OVERLAP=0|1 overrides it.
  enum class HaloOverlap { automatic, off, on } halo_overlap = HaloOverlap::automatic;
};

// Creates an engine for `op` (which must outlive it). automatic: CUDA when a device is usable,
// otherwise CPU (warning text in *warning when given). cuda with no usable device throws.
std::unique_ptr<FdtdEngine> make_engine(const FdtdOperator& op, Backend backend,
                                        int device_index = 0, std::string* warning = nullptr,
                                        const EngineTuning& tuning = {});

// True when the library was built with CUDA and a device can be used; *why says why not.
bool cuda_available(std::string* why = nullptr);

// Largest material table (entries) the CUDA engine keeps in constant memory.
constexpr int kConstantTableCapacity = 1024;

}  // namespace vem
