// One pass per time step for the CUDA engine's Yee kernels (issue 16; fused_step.cu). The H
// update of step n+1/2 and the E update of step n+1 run in one kernel that reads E^n and H^{n-1/2}
// from one set of arrays and writes H^{n+1/2} and E^{n+1} into a second set (ping-pong; the engine
// swaps the two after the step): 50 bytes a sample and step with indexed materials against the
// 76 of the two in-place kernels. The CPML corrections are either folded into the pass
// (CpmlSet below: each H sample gets its slabs' corrections before any E reads it, each E sample
// its own before it is stored) or left to the engine's slab kernels; where an H sample receives a
// correction after the pass (CPML slabs when not folded, H point sources, the H ghosts of PMC and
// periodic faces), the E samples that read it are computed again from the corrected H
// (launch_recompute_e), so the fields are those of the two-pass step.
// CUDA sources only.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <vector>

#include "core/exclusive_claim.h"
#include "vem/fdtd/fdtd_operator.h"

namespace vem::onepass {

struct Grid {
  int nx, ny, nz;
  long long sy, sz, origin;  // layout strides and the offset of sample (0,0,0) (field_layout.h)
  float inv_d[3];
  int lo[6][3], hi[6][3];  // update ranges (fdtd_operator.h)
};

// How the kernels read the coefficients: an index and a table in this file's constant memory or
// in global memory, or the 12 per-sample arrays.
enum class CoefKind { constant_table, global_table, arrays };
struct Coefs {
  CoefKind kind = CoefKind::arrays;
  const std::uint16_t* index = nullptr;
  const float* table = nullptr;  // device table (global_table)
  const float* arr[12] = {};
  // constant_table only: the two-step interior, the rest's blocks and the persistent kernel copy
  // the table's `table_entries` rows from `table` into each block's shared memory and read them
  // there (the engine's default for tables of up to 256 entries, fdtd_engine_cuda.cu,
  // set_onepass_coefs; the other kernels keep the constant bank). Same values: the same fields bit
  // for bit.
  bool shared_table = false;
  int table_entries = 0;
};

// A box of samples, origin and extent.
struct Box {
  int o[3], d[3];
};

// CPML slabs folded into the pass: one slab's psi box (PsiBox, fdtd_operator.h), its profile along
// the axis (E- or H-type positions), its two psi arrays and the engine's flags (SlabParams in
// fdtd_engine_cuda.cu). H slabs read psi^{n-1} from psi_in and write psi^n to psi_out (the engine
// swaps them after the step): a block's halo warp computes H samples of its neighbours again,
// with the neighbour's psi before the neighbour's update, as for the fields. E slabs are read and
// written in place (psi_in == psi_out; an E sample is computed by its own thread only).
struct Slab {
  int o[3], d[3];
  const float* b;
  const float* c;
  const float* kinv;
  const float* psi_in[2];
  float* psi_out[2];
  float inv_d;
  int lagged;
  int axis;
};
constexpr int kMaxCpmlSlabs = 6;
// Slabs in axis order x, y, z (the order of the engine's slab kernels: the same sums in the same
// order where slabs overlap along the domain's edges). count 0: nothing folded.
// inner_lo / inner_hi: a box that no slab meets (lo inclusive, hi exclusive; finish_cpml_set):
// a sample inside it skips the slab tests (most samples of a large grid).
struct CpmlSet {
  Slab s[kMaxCpmlSlabs];
  int count = 0;
  int inner_lo[3] = {0, 0, 0}, inner_hi[3] = {0, 0, 0};
};
// Sets the inner box of `cs` for a grid of n[0] x n[1] x n[2] cells (samples 0..n): a slab nearer
// the low face of its axis raises inner_lo to its end, one nearer the high face lowers inner_hi
// to its start (each slab's box spans the whole grid across its axis: PsiBox).
void finish_cpml_set(CpmlSet& cs, const int n[3]);

// The kernels' view of the operator's grid and update ranges.
Grid grid_for(const FdtdOperator& op);
// The E samples computed again after the H corrections (see above): each CPML slab's H psi box
// grown by one sample along every axis (unless the H corrections are folded into the pass),
// node planes 0 / n of PMC and periodic axes, and 2^3 samples at each H point source.
std::vector<Box> recompute_boxes(const FdtdOperator& op, bool cpml_h_folded);

// The constant-memory table of this translation unit (one per process, as the engine's own):
// true when `owner` got it through `claim` (its member, which gives it back) and `entries` x 12
// floats were uploaded.
bool acquire_constant_table(ExclusiveClaim& claim, const void* owner, const float* host_table, std::size_t entries);

// H^{n+1/2} and E^{n+1} of every sample from cur (E^n, H^{n-1/2}) into next: blocks of 32 x tile_y
// columns (tile_y 4, 8 or 16) marching over z_chunk planes, with the CPML corrections of the slabs
// in cpml_h / cpml_e (empty sets: none). pdl: programmatic dependent launch. hoist: the boundary
// tiles with the hoisted slabs (tile_y 8); the caller makes sure both sets are hoistable (checked
// once at set-up, not per launch).
// The field arrays hold elements of `storage` (vem/core/field_storage.h; float pointers to them).
void launch_bulk(const Grid& g, const Coefs& c, FieldStorage storage, float* const cur[6], float* const next[6],
                 int tile_y, int z_chunk, const CpmlSet& cpml_h, const CpmlSet& cpml_e, bool pdl,
                 cudaStream_t stream, bool hoist = false);
// The z chunk when none is asked for: 16 planes (measured best with the CPML folded in: 64 / 32 /
// 16 / 8 gave 27.7k / 29.1k / 29.5k / 29.3k Mcells/s at 512^3, fdtd_onepass_h100.md; the z slabs'
// planes spread over more blocks), halved (down to 4) while the launch would have fewer than 8
// blocks per multiprocessor.
int automatic_z_chunk(const Grid& g, int tile_y, int multiprocessors);
// E^{n+1} of the samples in `boxes` again, from E^n in cur and H^{n+1/2} in next (overlapping
// boxes compute the same values).
void launch_recompute_e(const Grid& g, const Coefs& c, FieldStorage storage, float* const cur[6],
                        float* const next[6], const std::vector<Box>& boxes, bool pdl, cudaStream_t stream);

// Temporal blocking (EngineTuning::temporal_blocking, two steps per pass; fused_step.cu,
// "Two steps per pass"). A pair of leap-frog steps n -> n+2 is split by the host (plan_two_step)
// into:
//  - interior tiles: boxes of 29 x (TY-3) columns and a chunk of planes whose samples, and 2 more
//    towards the low faces and 1 towards the high ones, are updated by the plain Yee expressions
//    (every component in its update range, no CPML slab, no point source or probe). One block of 32 x TY threads reads E^n, H^{n-1/2}
//    once and writes E^{n+2}, H^{n+3/2} of its core (launch_two_step_interior: cur -> next);
//  - everything else: the one-pass tile kernel twice, on lists of blocks (PassBlock): step 1 over
//    the rest grown by one sample (cur -> mid, every value step 2 reads there), step 2 over the
//    rest (mid -> next), the CPML psi of both kinds read from one set and written into the other.
// The interior launch reads only cur and writes only the interior of next, so it runs beside
// either step of the rest (a second stream). Same expressions in the same order: the fields of two one-pass steps bit
// for bit.
// Shell tiles (plan_two_step's `shell`; the engine's default wherever it steps in pairs by
// default): the CPML shell and the faces step in pairs too, in tiles of the interior's shape that
// carry the range tests, the CPML corrections and both psi kinds (launch_two_step_shell), so the
// rest keeps only the tiles next to point sources and probes (usually a few blocks). The shell's psi is read once and
// written once a pair, into the second set (the engine then exchanges the sets).
struct PassBlock {
  int i0, j0, k0, k1;  // first column, first row, planes k0..k1
  int ilast, jlast;    // the block's samples: i0..min(i0+31, ilast), j0..min(j0+TY-1, jlast)
};
struct TwoStepTile {
  int i0, j0, k0, k1;  // the core: i0..i0+cw-1, j0..j0+ch-1, planes k0..k1
  int cw, ch;
  int sh = -1, se = -1;    // shell tiles of one slab axis: the slab of the H / E set they meet (-1: none);
                          // of two axes: the slab of the first axis
  int sh2 = -1, se2 = -1;  // shell tiles of two slab axes: the slab of the second axis (-1: none)
};
struct TwoStepPlan {
  std::vector<TwoStepTile> interior;
  // Shell tiles (plan_two_step's `shell`), [shape][class]: shape 0 cores of 29 x (kShellTileY-3)
  // (32 x kShellTileY threads), 1 (shell_narrow, the x faces) 13 x (2 kShellTileY-3) (16 x 2
  // kShellTileY); class 0 general, 1-3 tiles meeting CPML slabs of the axis x, y, z only, 4-6
  // (shell_edges, shape 0 only) tiles meeting the slabs of two axes, x and y, x and z, y and z, one
  // slab of each axis a set at most. Class = two_step_shell_tile's AXIS + 1.
  static constexpr int kShellClasses = 7;
  std::vector<TwoStepTile> shell[2][kShellClasses];
  std::size_t shell_tiles() const {
    std::size_t n = 0;
    for (const auto& s : shell)
      for (const auto& c : s) n += c.size();
    return n;
  }
  std::vector<PassBlock> first, second;  // one-pass blocks of 32 x kPassTileY (step 1, step 2)
  long long interior_samples = 0, shell_samples = 0, first_samples = 0, second_samples = 0;
};
constexpr int kPassTileY = 8;
constexpr int kShellTileY = 16;
// keep_out: samples (i, j, k) of point sources and probes, which the interior tiles avoid.
// tile_y: 16 or 32 (threads per block 32 x tile_y); z_chunk: planes per interior block; pass_chunk:
// planes per one-pass block; align_rest: the interior box shrunk along x and y to the fewest tiles
// that leave the rest's blocks as many as they are (fused_step.cu).
// shell: the CPML shell and the faces in two-step tiles too (launch_two_step_shell), the rest only
// the tiles of either kind that are not clear of keep_out; the shell's boxes are whole tiles along
// x and y (the interior box shrinks to make them so), and align_rest is not used. shell_narrow:
// the boxes of the x faces in tiles of 16 x 32 threads (cores 13 wide, so the boxes, about 12
// samples wide with a 10-cell CPML, grow less), the others in 32 x 16. general_chunk (> 0): the
// shell tiles of the general class cut into pieces of at most that many planes. shell_edges: the
// 32 x 16 tiles that meet the slabs of two axes (the box's edges) in classes of their own (4-6)
// instead of the general one. shell_chunk (> 0): the shell tiles' planes per tile (else z_chunk).
// edge_chunk (> 0): the tiles of the two-axis classes (4-6) cut into pieces of at most that many
// planes, as general_chunk the general ones.
TwoStepPlan plan_two_step(const Grid& g, const CpmlSet& ch, const CpmlSet& ce,
                          const std::vector<std::array<int, 3>>& keep_out, int tile_y, int z_chunk, int pass_chunk,
                          bool align_rest = true, bool shell = false, bool shell_narrow = false,
                          int general_chunk = 0, bool shell_edges = false, int shell_chunk = 0,
                          int edge_chunk = 0);
// tiles / blocks: device arrays. grid_blocks: 0 for one block a tile, else that many blocks take the
// tiles in turn (fused_step.cu, two_step_interior_strided).
void launch_two_step_interior(const Grid& g, const Coefs& c, FieldStorage storage, float* const cur[6],
                              float* const next[6], const TwoStepTile* tiles, int count, int tile_y,
                              int grid_blocks, cudaStream_t stream);
// The shell tiles (fused_step.cu, two_step_shell_tile): cur -> next, psi of both kinds read from
// the sets' psi_in (psi^{n-1/2}, psi^n) and psi^{n+3/2}, psi^{n+2} of the cores written into psi_out
// (arrays other than psi_in: the caller exchanges them after the pair). Both sets must be
// hoistable (the caller makes sure, once at set-up: the engine's setup_two_step). The rest's
// blocks of such a pair take their psi from psi_in into a third set in step 1 and from there into
// psi_out in step 2.
// lists: TwoStepPlan::shell's lists on the device.
// one_launch: every tile in one launch (the general ones first, then those of two axes), else one
// launch a class (a measurement switch: each class timed alone, 64-bit offsets).
// wide_offsets: the layout offsets in 64 bits even where 32 suffice (the merged kernel takes 32
// bits wherever every offset of the field arrays fits: fused_step.cu, offsets_fit_int; a test
// switch, so the path of the largest grids runs on small ones).
struct ShellLists {
  const TwoStepTile* tiles[2][TwoStepPlan::kShellClasses] = {};
  int count[2][TwoStepPlan::kShellClasses] = {};
  bool one_launch = true;
  bool wide_offsets = false;
  // The interior tiles as the merged shell launch's last blocks (one_launch; tile_y 16; null: the
  // interior has its own launch). The launch's blocks are dispatched in order, so the short
  // interior tiles fill the machine while the shell's last blocks drain. Part of the packed pair,
  // the default from 2 M cells below 4 M (fdtd_engine_cuda.cu, setup_two_step;
  // VEM_TWO_STEP_INTERIOR_IN_SHELL; results/fdtd.md, session 34).
  const TwoStepTile* interior = nullptr;
  int interior_count = 0;
};
// Throws unless every listed tile is in a class its shape has a kernel for: the caller checks its
// lists once (the engine's setup_two_step), not every pair.
void check_shell_lists(const ShellLists& lists);
void launch_two_step_shell(const Grid& g, const Coefs& c, FieldStorage storage, float* const cur[6],
                           float* const next[6], const ShellLists& lists, const CpmlSet& cpml_h,
                           const CpmlSet& cpml_e, cudaStream_t stream);
// hoist: the hoisted slabs (fused_step.cu, tile_pass); the caller makes sure both sets are
// hoistable.
void launch_pass_blocks(const Grid& g, const Coefs& c, FieldStorage storage, float* const cur[6], float* const next[6],
                        const PassBlock* blocks, int count, const CpmlSet& cpml_h, const CpmlSet& cpml_e, bool hoist,
                        cudaStream_t stream);
// True when at most one slab of each axis in `cs` holds any sample (the hoisted slabs need it).
bool hoistable(const CpmlSet& cs);

// Persistent stepping (EngineTuning::Step::persistent): `steps` leap-frog steps in one cooperative
// kernel whose blocks stay resident, in place on one set of arrays: per step an H phase and an E
// phase over all samples (one sample per thread, grid-stride, or as the sample plan below deals
// them out), each followed by a grid barrier, so
// a small model's fields stay in L2 from step to step and no step pays a launch. The CPML
// corrections are folded into both phases (cpml_h and cpml_e with psi_in == psi_out: each psi is
// read and written by its own sample's thread), the E point sources applied and the probes
// recorded by the kernel itself; so only runs that need nothing else between the steps (no
// extensions, no PMC / periodic / subdomain faces, no H point sources). hoisted: the hoisted
// samples (EngineTuning::PersistentSamples), else the chained ones; wide_offsets: the hoisted
// samples' layout offsets in 64 bits even where 32 suffice (a test switch, as ShellLists').
constexpr int kMaxPersistentSources = 8;
// E point sources: field 0-2, layout offset, 1 overwrite (hard) / 0 add, value[step][count] on the device.
struct SourceSet {
  int count = 0;
  int field[kMaxPersistentSources] = {};
  long long offset[kMaxPersistentSources] = {};
  int set[kMaxPersistentSources] = {};
  const float* value = nullptr;
};
// Probes: component 0-5 and layout offset per probe; after step s, out[s * count + probe].
// fields: a device table of the 6 field arrays.
struct ProbeSet {
  int count = 0;
  float* const* fields = nullptr;
  const int* field = nullptr;
  const long long* offset = nullptr;
  float* out = nullptr;
};
// The sample plan (plan_persistent): which samples each thread of the launch takes, round by
// round, instead of the grid-stride walk. The walk gives every thread the same number of samples
// (one more to the first ones), whatever they cost: at 64^3 about 2 of the 3 rounds of 135,168
// threads, the third on a few multiprocessors while the others wait at the barrier, and warps
// that straddle a CPML slab's edge. The plan puts the plain samples (every component in its
// update range, in no CPML slab: the tests known at compile time, h_plain / e_plain) and the
// others in warps of their own, and deals the warps' tasks of 32 samples out longest first to the
// least loaded warp (a task of other samples weighs `weight`, a plain one 1). Device memory: two
// words (sample, tests) a thread and round, about 8 bytes a sample (3.2 MB at 64^3).
// Packed samples: i | j << kPlanBits | k << 2 kPlanBits, kPlanPlain for a plain sample,
// kPlanNone where a thread has none in that round.
constexpr unsigned kPlanBits = 10;
constexpr unsigned kPlanMask = (1u << kPlanBits) - 1;
constexpr unsigned kPlanPlain = 1u << 30;
constexpr unsigned kPlanNone = 0xFFFFFFFFu;
// Tests words, one per sample of the plan: what h_hoisted and e_hoisted would work out for it, so
// the kernel reads them instead (PlanView::tests): bits kTestsHSlabs + 3a .. + 2, the H slab of
// axis a holding the sample, plus one (0: none; slab_hits), likewise kTestsESlabs for the E set;
// bit kTestsHRange + c: H component c in its update range at the sample, kTestsERange + c: E's.
constexpr int kTestsHSlabs = 0, kTestsESlabs = 9, kTestsHRange = 18, kTestsERange = 21;
struct PersistentPlan {
  std::vector<std::uint32_t> samples;  // [round][thread]
  std::vector<std::uint32_t> tests;    // [round][thread], each sample's tests word
  int rounds = 0;
  long long threads = 0;
};
// A plan on the device (samples null: the walk). profiles: the samples other than plain ones load
// their CPML slabs' profile values with their psi, before the bulk update (else after it, as the
// walk's samples do). tests: the tests words (null: worked out per sample; needs profiles).
struct PlanView {
  const unsigned* samples = nullptr;
  int rounds = 0;
  long long threads = 0;
  bool profiles = true;
  const unsigned* tests = nullptr;
};
// The threads of a persistent launch on `device` (its blocks as many as are resident, at most one
// per 256 samples) with that kernel (hoisted, wide_offsets, plan, profiles, tests: as
// launch_persistent's and PlanView's); 0 for a plan where the kernel would not take one (the
// chained samples, 64-bit offsets).
long long persistent_threads(const Grid& g, const Coefs& c, FieldStorage storage, bool hoisted, bool wide_offsets,
                             bool plan, bool profiles, bool tests, int device);
// The plan for `threads` threads (a multiple of 32); false where a grid has more than 1024
// samples along an axis (the packed coordinates), and then the walk stays.
bool plan_persistent(const Grid& g, const CpmlSet& ch, const CpmlSet& ce, long long threads, int weight,
                     PersistentPlan& plan);
// plan.samples: a plan for this launch's threads (persistent_threads with plan true; the hoisted
// samples with 32-bit offsets), else null for the walk.
void launch_persistent(const Grid& g, const Coefs& c, FieldStorage storage, float* const fields_now[6],
                       const CpmlSet& cpml_h,
                       const CpmlSet& cpml_e, const SourceSet& src, const ProbeSet& probes, int steps, bool hoisted,
                       bool wide_offsets, const PlanView& plan, int device, cudaStream_t stream);

// The two-step pair's block timeline (a measurement build: CMake option VEM_BLOCK_TRACE; fused_step.cu):
// block_trace_arm starts a ring of `records` (a power of two) block records, false when the build
// has no trace; block_trace_dump writes the newest as CSV (t0_ns, t1_ns, sm, kind 0 interior /
// 1 shell / 2 pass blocks, list, block) and disarms; it returns the records written, -1 unarmed.
bool block_trace_arm(std::size_t records);
long long block_trace_dump(const std::string& path);

}  // namespace vem::onepass
