#!/usr/bin/env python3
"""The block timeline of two-step pairs (issue 16), from bench_fdtd_small's VEM_BLOCK_TRACE_OUT CSV.

    block_timeline.py <trace.csv> [multiprocessors] [--json out.json] [--bins]

Each row is one block of a pair's kernels (fused_step.cu, BlockTrace): start and end (ns,
%globaltimer), multiprocessor, kind (0 interior tiles, 1 shell tiles, 2 the rest's pass blocks),
list (the shell's ShellOrder list; the pass blocks' 0 plain / 1 general path) and block index.

Pairs are cut where no block runs (the pairs of a graph follow each other). For each pair:
  - span: the first block's start to the last block's end;
  - per kind: its first start and last end, relative to the pair's start, and its blocks' summed
    time (block-us);
  - fill: the share of the multiprocessors' slots that hold a block, averaged over the span. A
    block's slot share is 1 / (the most blocks of its kind seen on one multiprocessor at once);
  - tail: the time from when the fill first falls below half for good to the end of the pair.
Printed: the medians over the newest 40 pairs (the first and last of the ring left out), and the
shell lists' mean block times in the mix; --bins: the fill of each kind in 5 us bins of the pair
of median span.
"""
import csv
import json
import math
import statistics
import sys

KINDS = {0: "interior", 1: "shell", 2: "pass"}


def load(path):
    with open(path) as f:
        return [tuple(int(v) for v in (r["t0_ns"], r["t1_ns"], r["sm"], r["kind"], r["list"], r["block"]))
                for r in csv.DictReader(f)]


def segments(recs):
    """Pairs: runs of blocks with no moment between them where none runs."""
    order = sorted(recs)
    segs, cur, end = [], [], None
    for r in order:
        if cur and r[0] > end:
            segs.append(cur)
            cur = []
        cur.append(r)
        end = r[1] if end is None or len(cur) == 1 else max(end, r[1])
    if cur:
        segs.append(cur)
    return segs


def resident_limit(recs, k):
    """Most blocks of kind k on one multiprocessor at once."""
    by_sm = {}
    for r in recs:
        if r[3] == k:
            by_sm.setdefault(r[2], []).extend([(r[0], 1), (r[1], -1)])
    most = 1
    for ev in by_sm.values():
        cur = 0
        for _, d in sorted(ev, key=lambda e: (e[0], e[1])):
            cur += d
            most = max(most, cur)
    return most


def main():
    path = sys.argv[1]
    sms = int(sys.argv[2]) if len(sys.argv) > 2 and not sys.argv[2].startswith("--") else 132
    out = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    recs = load(path)
    limits = {k: resident_limit(recs, k) for k in KINDS if any(r[3] == k for r in recs)}
    segs = segments(recs)
    if len(segs) > 4:
        segs = segs[1:-1]  # the ring's first pair may be cut; the last may be the run's end
    segs = segs[-40:]  # the newest 40 pairs
    rows = []
    for seg in segs:
        s0, s1 = min(r[0] for r in seg), max(r[1] for r in seg)
        span = (s1 - s0) / 1e3
        row = {"span_us": span, "blocks": len(seg)}
        for k, name in KINDS.items():
            m = [r for r in seg if r[3] == k]
            if not m:
                continue
            row[name + "_blocks"] = len(m)
            row[name + "_first_start_us"] = (min(r[0] for r in m) - s0) / 1e3
            row[name + "_last_end_us"] = (max(r[1] for r in m) - s0) / 1e3
            row[name + "_block_us"] = sum(r[1] - r[0] for r in m) / 1e3
        nb = max(1, int(math.ceil(span)))
        fill = [0.0] * nb
        for r in seg:
            share = 1.0 / limits[r[3]]
            a, b = (r[0] - s0) / 1e3, (r[1] - s0) / 1e3
            for x in range(int(a), min(nb - 1, int(b)) + 1):
                lo, hi = max(a, x), min(b, x + 1)
                if hi > lo:
                    fill[x] += share * (hi - lo)
        fill = [f / sms for f in fill]
        row["fill"] = sum(fill) / nb
        busy = [x for x, f in enumerate(fill) if f >= 0.5]
        row["tail_us"] = float(nb - 1 - busy[-1]) if busy else float(nb)
        rows.append(row)
    med = {k: statistics.median([r[k] for r in rows if k in r]) for k in rows[0]}
    print(f"{path}: {len(recs)} blocks, {len(segs)} pairs kept, resident limits {limits}, {sms} multiprocessors")
    for k in sorted(med):
        print(f"  median {k}: {med[k]:.2f}")
    kept = [r for seg in segs for r in seg]
    per_list = {}
    for L in sorted({r[4] for r in kept if r[3] == 1}):
        dur = [(r[1] - r[0]) / 1e3 for r in kept if r[3] == 1 and r[4] == L]
        per_list[L] = {"blocks_per_pair": len(dur) / len(segs), "mean_us": sum(dur) / len(dur), "max_us": max(dur)}
        print(f"  shell list {L}: {len(dur) / len(segs):.0f} blocks a pair, mean {sum(dur) / len(dur):.1f} us, "
              f"max {max(dur):.1f} us")
    for k, name in KINDS.items():
        dur = [(r[1] - r[0]) / 1e3 for r in kept if r[3] == k]
        if dur:
            print(f"  {name}: mean block {sum(dur) / len(dur):.1f} us, max {max(dur):.1f} us")
    if "--bins" in sys.argv:  # the fill of each kind in 5 us bins, for the pair of median span
        seg = sorted(segs, key=lambda g: max(r[1] for r in g) - min(r[0] for r in g))[len(segs) // 2]
        s0 = min(r[0] for r in seg)
        span = (max(r[1] for r in seg) - s0) / 1e3
        for lo in range(0, int(math.ceil(span)), 5):
            acc = {k: 0.0 for k in KINDS}
            for r in seg:
                ov = max(0.0, min((r[1] - s0) / 1e3, lo + 5) - max((r[0] - s0) / 1e3, lo))
                acc[r[3]] += ov / 5 / limits[r[3]] / sms
            print(f"  {lo:4d}-{lo + 5:4d} us: " + " ".join(f"{KINDS[k]} {acc[k]:4.2f}" for k in KINDS if k in limits) +
                  f" total {sum(acc.values()):4.2f}")
    if out:
        with open(out, "w") as f:
            json.dump({"trace": path, "pairs": len(segs), "resident_limits": {KINDS[k]: v for k, v in limits.items()},
                       "medians": med, "shell_lists": per_list}, f, indent=1)


if __name__ == "__main__":
    main()
