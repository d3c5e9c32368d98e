//===- Passes.td - tile dialect passes ---------------------*- tablegen -*-===//

#ifndef KILN_TILE_PASSES
#define KILN_TILE_PASSES

include "mlir/Pass/PassBase.td"

def TileSplitKV : Pass<"tile-split-kv", "::mlir::ModuleOp"> {
  let summary = "Splits the forward program's KV range across CTAs (FlashDecoding) and adds the combine kernel";
  let description = [{
    A decode step has few query rows: (batch x heads x Q blocks) programs
    cannot fill a GPU, and each streams the whole KV cache alone. This pass
    rewrites every forward kernel (a `tile.kernel` without `tile.bwd_stage`)
    so that `kv_splits` programs share one (batch, head, Q block), each over
    its own contiguous range of KV blocks, and adds a kernel that merges
    their partial results, as FlashDecoding does:

    - `kv_splits` is a symbol the launch plan derives at run time
      (`tile.symbols`): `max(min(floor(ctas_per_sm.<kernel> * num_sms /
      (batch * heads * ceil(seq_q / BLOCK_M))), ceildiv(seq_kv, min-blocks
      * BLOCK_N), max-splits), 1)` for the kernel that runs, with
      `ctas_per_sm.<kernel>` the device's occupancy of that kernel (a device
      symbol the runtime binds when it loads the program; `ctas-per-sm`
      fixes it instead), so a problem that fills a wave runs unsplit and a
      split grid ends on whole waves. The kernel receives it as an i64 argument
      (`tile.scalar`); callers may set it.
    - The grid's z axis becomes `batch * kv_splits`; `tile.program_id 2`
      yields `z / kv_splits` as the batch, and `z % kv_splits` is the split.
    - The KV loops (`tile.kv_loop`) keep their roles and bodies; their
      bounds are intersected with the split's range: the blocks between the
      first loop's lower bound and the last loop's upper bound, dealt out in
      contiguous chunks of `ceil(blocks / kv_splits)`.
    - The stores of `out` and `lse` run when `kv_splits = 1`. Otherwise the
      normalised f32 output (before rounding) and the LSE go to the
      workspaces `o_partial` `[batch * kv_splits, seq_q, heads, Dv]` and
      `lse_partial` `[batch * kv_splits, heads, seq_q]` (sized 0 when the run
      does not split).
    - `<variant>_fwd_combine` (launched when `kv_splits >= 2`) merges the
      splits: with `m` the largest partial LSE, `lse = m + log(sum_s
      exp(lse_s - m))` and `out = sum_s exp(lse_s - lse) o_s`; a split that
      saw no key has `lse_s = -inf` and weight 0. Its grid is `(seq_q,
      heads, batch)`, each program merging one query row over tiles of `[Dv,
      combine-splits]` (the partials read transposed, so that the sums over
      the splits are row reductions and every thread has work for a single
      query row); with `combine-splits=0` (an ablation) it is `(ceil(seq_q
      / combine-rows), heads, batch)` over `[combine-rows, Dv]` tiles, one
      split's block at a time.
    - With both forms (`combine-splits` > 0 and `combine-rows-steps` > 0,
      the default; Dv <= 128, past which the by-rows form's registers
      spill), `<variant>_fwd_combine_rows` is the by-rows form and the
      run launches one of the two: by rows when its steps (kv_splits times
      its waves) are at most `combine-rows-steps` times the by-splits form's
      waves (`ceil(programs / slots) * ceil(kv_splits / combine-splits)`,
      slots = num_sms * ctas_per_sm.<kernel>). Many query rows (a
      speculative verify) over few splits take the by-rows form, whose few
      hundred programs each merge a block of rows; one query row over many
      splits the by-splits one.

    A variant's forward kernels (a prefill, a short, a decode and a wide
    decode program, one launched per run by their `tile.when`s, which
    exclude each other) share `kv_splits` and the combine kernels: the
    symbol is the sum of each kernel's count above times its condition
    clamped to 0 or 1, so it counts the programs of the kernel that runs. Mods, masks and captures are untouched: each split
    runs the same KV step on fewer blocks. The pass runs on the CPU
    backend's program too.
  }];
  let options = [
    Option<"maxSplits", "max-splits", "int64_t", /*default=*/"128",
           "Upper bound on kv_splits">,
    Option<"minBlocks", "min-blocks", "int64_t", /*default=*/"4",
           "KV blocks a split gets at least (no split shorter than this "
           "many blocks of keys, unless the cache is)">,
    Option<"ctasPerSM", "ctas-per-sm", "int64_t", /*default=*/"0",
           "Programs per multiprocessor the split aims to fill (0: the "
           "device's occupancy of each counted kernel, "
           "ctas_per_sm.<kernel>, bound by the runtime)">,
    Option<"combineSplits", "combine-splits", "int64_t", /*default=*/"16",
           "Splits the combine kernel merges per step, one query row per "
           "program; 0: blocks of combine-rows query rows per program, one "
           "split per step (ablation)">,
    Option<"combineRows", "combine-rows", "int64_t", /*default=*/"64",
           "Query rows per program of the by-rows combine kernel">,
    Option<"combineRowsSteps", "combine-rows-steps", "int64_t",
           /*default=*/"2",
           "With combine-splits > 0: also build the by-rows combine kernel "
           "and launch it when kv_splits times its waves is at most this "
           "many times the by-splits kernel's waves (0: the by-splits "
           "kernel alone, an ablation)">,
  ];
  let dependentDialects = ["::kiln::tile::TileDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::math::MathDialect"];
}

def TileReassociateLowRank : Pass<"tile-reassociate-low-rank"> {
  let summary = "Reassociates tile arithmetic so that per-row and per-column terms combine before per-element ones";
  let description = [{
    On the GPU a value of a 2-D tile that varies along one dimension only
    (a splat, `tile.iota`, `tile.broadcast`, and elementwise ops of those)
    costs one instruction per row or column a thread holds; an op on
    operands varying along both dimensions costs one per element. A
    score_mod such as ALiBi's (`score + slope * float(kv - q)`, scaled
    before and multiplied by log2(e) after) lowers to four or five
    per-element float ops beside the score's scaling; this pass rewrites it
    to one add and one fused multiply-add per element:

    - `float(a + iota_A) - float(b + iota_B)` (A != B), and
      `float((a + iota_A) - (b + iota_B))` (into f32 or f64 through
      integers of 32 bits or more), become `(float(a - b) - float(iota_B))
      + float(iota_A)`: exact while positions stay below 2^24, and relative
      to the tile (no term larger than |kv - q| plus the tile's size);
    - `x * (r + c)` with `x`, `r`, `c` each varying along at most one
      dimension, `r + c` along both, `x * r` and `x * c` along one, and `r`
      or `c` bounded by the tile's size (iotas and constants: two large
      terms that cancel would each round at their own size) becomes
      `x * r + x * c`;
    - `(f ± l) * s` (or `(l ± f) * s`) with `s` a splat and `l` a sum of
      such terms becomes `f * s ± l * s`;
    - `(z * x) * y` with `x`, `y` and `x * y` cheap and `z` not, or `x`
      and `y` splats and `z` not, becomes `z * (x * y)`; `splat(a) op
      splat(b)` becomes `splat(a op b)`.

    The positions' rewrite runs first. All but it reassociate
    floating-point arithmetic (results move by a few units in the last
    place) without looking at the ops' fastmath flags, so the CUDA
    pipelines run the pass under fast math only
    (`--no-reassociate-low-rank` is the ablation).
  }];
  let dependentDialects = ["::kiln::tile::TileDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileColumnBounds : Pass<"tile-column-bounds"> {
  let summary = "Folds a mask's position compares into one test of the column index against per-row bounds";
  let description = [{
    A masked KV step compares positions per element: the causal diagonal
    `kv <= q + offset` and the partial block's `kv < seq_kv`, a sliding
    window's `kv <= q` and `q - kv <= w`, each position an index tile
    `iota + k0` (and `iota + q0` for the rows). On the GPU every compare is
    an integer compare per element after an add per element, and the
    conjunction of two or three of them a predicate each (Nsight Compute on
    the sliding window: `ISETP` the most sampled opcode, 15%).

    This pass takes each i1 2-D tile that is a conjunction (`arith.andi`
    tree) of `arith.cmpi` with signed predicates whose two sides differ by
    exactly one column index (`iota dim 1` with coefficient +1 or -1) plus
    terms that are the same along each row and of a position's size (splats
    of constants up to 2^24, of block arguments and of pure arithmetic of
    such, `iota dim 0`, integer arithmetic of these; not values read from
    memory, whose size is the user's: a captured window width), reads those
    compares as bounds on the column index (`col + T < 0` is `col <= -T -
    1`, `-col + T <= 0` is `col >= T`, ...), combines the lower bounds by
    `arith.maxsi` and the upper ones by `arith.minsi` (per row), and where
    both sides are bounded (a window) replaces them by one unsigned compare,
    `col - lo < max(hi - lo + 1, 0)` (a row with no visible column passes
    none). Conjuncts it cannot read (a document mask's gathered ids) stay,
    ANDed with the interval. Exact: the bounds add and subtract the
    compares' terms, positions and offsets far from overflow (a "no window"
    width of INT_MAX keeps its compares). The row terms repeat along each row, so after the CUDA
    compiler's CSE a thread computes them once per row it holds; per element
    one subtraction and one compare remain (the sliding window's masked step
    at D = 64: 858 -> 729 SASS instructions).

    Conjunctions bounded on one side only (the causal diagonal with the
    partial block) become one signed compare of the column index against
    the per-row bound in loops whose carried 2-D f32 tiles (the output's
    accumulator; dK and dV) hold at most `one-sided-elements` elements
    (128 x 128), as do those of every loop around them, and keep their
    compares in others: merged, the CUDA
    compiler folds the key offset out of both sides and hoists a tile of
    column indices out of the KV loop, which spilled in the 192-row kernel
    at D = 128 (three consumer warpgroups at 160 registers: 2.6-3.7% slower
    causal forwards at N = 16k on an H200) and in the 128-row one at D =
    256, while the 128-row kernels at D <= 128 gained 1-16%
    (docs/performance.md). On by default in the pipelines (`kiln run
    --no-column-bounds` is the ablation, `--one-sided-bounds-elements 0`
    the one-sided merge's); runs on both back ends, so the CPU tests check
    its arithmetic.
  }];
  let options = [
    Option<"oneSidedElements", "one-sided-elements", "int64_t", "16384",
           "Merge conjunctions bounded on one side in loops carrying at "
           "most this many f32 accumulator elements (0: never)">,
  ];
  let dependentDialects = ["::kiln::tile::TileDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileScaleAfterMax : Pass<"tile-scale-after-max"> {
  let summary = "Takes a row's maximum before a positive constant scale, so that no element is multiplied for it alone";
  let description = [{
    The online softmax takes each row's maximum of the scaled scores (scale
    · log2 e, or log2 e after a score_mod) and exponentiates the scaled
    scores minus it; the GPU compiler fuses the exponent's scaling and
    subtraction into one FMA, but the maximum still costs one
    multiplication per element. Multiplying by a positive finite constant
    commutes with the maximum exactly (rounding is monotonic), so:

    - `tile.reduce max (x * k)` becomes `(tile.reduce max x) * k`;
    - `select(c, x * k, -inf)` becomes `select(c, x, -inf) * k` (a masked
      step's scores), which the first rewrite then reaches.

    `k` is a splat of a positive finite constant; the select moves only
    where a row maximum reads it. The maxima are bit for bit those of the
    written order, and so is everything on the CPU and in unmasked GPU
    steps; in a masked GPU step the exponent's scaling and subtraction
    become one FMA, as in the unmasked steps (one rounding instead of two:
    the last bit may differ). On by default in the pipelines
    (`kiln run --no-scale-after-max` is the ablation).
  }];
  let dependentDialects = ["::kiln::tile::TileDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileRowTermsAfterMax : Pass<"tile-row-terms-after-max"> {
  let summary = "Adds a score's per-row terms to the row's maximum and to the subtracted maximum, not to every element";
  let description = [{
    After `tile-reassociate-low-rank` an ALiBi-like score is `a + r`: `a`
    the scaled score plus the per-column terms, `r` the terms that vary
    along the rows only (`slope · log2 e · float(k0 - q0 - row)`). The
    online softmax takes each row's maximum `m` of `a + r` and
    exponentiates `(a + r) - m`: one add per element for `r`. Adding a
    row's own term commutes with the row's maximum exactly (rounding is
    monotonic), so for an `arith.addf` tree of 2-D float tiles with such
    terms beside others, where every use is

    - `tile.reduce max` along dimension 1: it becomes `(tile.reduce max a)
      + r'`, `r'` the row terms built again as a 1-D tile;
    - `x - tile.broadcast m dim 1`: it becomes `a - tile.broadcast (m -
      r') dim 1` (a backward step's `exp2(s - lse)` too);
    - `select(c, x, -inf)` (a mask) whose uses are of these kinds: the
      select takes `a` (`-inf + r` is `-inf`);

    the per-row terms are added once per row (all uses along one dimension,
    1 or 0 — a dK/dV kernel on Sᵀ — with one type of row values). Where the
    sum is written `a + r` the maxima, and so the running maximum, the row
    sums' scale and the log-sum-exp, are those of the written order; where
    `r` sits deeper in the tree (ALiBi's `s + (r + c)`) the addends are
    regrouped first, a reassociation; the exponent's argument rounds
    differently in any case. The new per-row ops carry the sum's fastmath
    flags without `nnan` and `ninf` (they meet -inf maxima). The pipelines
    run the pass under fast math after `tile-reassociate-low-rank` (`kiln
    run --no-row-terms-after-max` is the ablation).
  }];
  let options = [
    Option<"minHeadDim", "min-head-dim", "int64_t", /*default=*/"0",
           "Kernels whose queries' head dim (their `tile.tensor = \"q\"` "
           "argument's last dimension) is below this are left alone (0: "
           "every kernel)">
  ];
  let dependentDialects = ["::kiln::tile::TileDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileHoistInvariantReads : Pass<"tile-hoist-invariant-reads"> {
  let summary = "Moves a loop's reads of a kernel argument that the loop does not write, at indices defined outside, before the loop";
  let description = [{
    A mod's read of a captured tensor at indices the program fixes (ALiBi's
    `slope[h]`) is inlined into every KV step; MLIR's loop-invariant code
    motion moves only ops without memory effects, so the read, and what is
    computed from it (ALiBi's per-column terms), stayed in the loop. In a
    loop (innermost first) whose ops write only buffers they name (`tile.store`,
    `tile.atomic_add` and `tile.scatter_add` their descriptor's or
    destination's; others through their declared effects), a `memref.load`
    of a kernel argument that none of them writes, with its memref and
    indices defined outside, reads the same value in every step: it moves
    before the loop, together with the loop's other invariant ops without
    memory effects. The kernel's arguments are taken to be distinct tensors
    (a capture is never an output or a workspace); a write through a memref
    the pass cannot trace to an argument or an allocation (a descriptor the
    loop carries, a memref a select or an `scf.if` chose, a cast from
    another type) keeps every read in that loop.

    The read then also happens where the loop runs no step: the pass is
    meant for a mod's reads at indices the program fixes (batch, head,
    constants), which the mod makes in every program of that batch and head
    that computes a score, from captures whose shapes the runtime checks.
    On by default in the pipelines (`kiln run --no-hoist-invariant-reads`
    is the ablation).
  }];
  let options = [
    Option<"minHeadDim", "min-head-dim", "int64_t", /*default=*/"0",
           "Kernels whose queries' head dim (their `tile.tensor = \"q\"` "
           "argument's last dimension) is below this are left alone (0: "
           "every kernel)">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TileCheckTurns : Pass<"tile-check-turns"> {
  let summary = "On a backend that runs programs one at a time, makes an add out of its turn a NaN";
  let description = [{
    A kernel marked `tile.ordered_adds` carries a `turn` on each
    `tile.atomic_add` into its accumulator (`convert-attn-to-tile-backward
    ordered-dq`): on the GPU each add waits until its turn comes
    (`tgpu-ordered-adds`), so a wrong turn hangs or, if two adds share one,
    makes the sums differ between runs. The CPU backend runs the programs
    one after another, axis 0 innermost, which is the order the turns are
    meant to give. This pass, run before the CPU lowering, counts the adds
    of each (batch, head, block of `rows` rows) in the zeroed `turns`
    workspace, as the GPU does, and adds NaN instead of the tile where the
    count differs from the add's turn: the CPU backend's checks against
    float64 then fail on a turn that is wrong for that order.
  }];
  let dependentDialects = ["::kiln::tile::TileDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TileLazyRescale : Pass<"tile-lazy-rescale"> {
  let summary = "Moves the online softmax's reference maximum only when a step's maximum exceeds it by a threshold";
  let description = [{
    The online softmax rescales its row sums and accumulator by
    `exp2(m_old - m_new)` whenever a KV step raises a row's maximum. The
    sums, the accumulator and the log-sum-exp `m + log2 l` are exact for
    any reference `m` they share; the maximum only keeps the exponentials
    in range. In each loop marked `tile.kv_loop`, for a carried row vector
    `m` whose yielded value is `m_new = maximumf(m, x)`:

    ```
    m_ref = select(m_new - m > t, m_new, m)
    ```

    replaces `m_new` everywhere (FlashAttention-4's conditional
    rescaling). The exponentials `exp2(s - m_ref)` stay at most `2^t` (the
    difference, not `m + t`, which could round up), and in
    a step that does not move the reference the factor is `exp2(0) = 1`
    exactly, so a schedule can skip the multiplication
    (`tgpu-skip-unit-scales`). A row's reference is -inf exactly when its
    maximum is, so the empty-row guards are unchanged.

    The rewrite applies only where the maximum is read as a reference:
    inside the loop as the subtrahend of `math.exp2` operands (through the
    -inf guard's compare and select and broadcasts) and the yield, the
    carried value only by the maximum, a -inf test and the minuend of the
    correction's exponent; after it as `m + log2 l`, a -inf test, or the
    start of the next KV loop whose own final maximum is read so too.
    Anything else leaves the loop alone. A threshold of 0 changes nothing;
    one outside [0, 15] is an error (fp16 probabilities would overflow).

    The exponentials may exceed 1, so the step's largest probability is
    rounded to bf16 / fp16 like the others instead of being exactly 1: the
    output's error against float64 grows a little (rel. L2 2.0e-3 -> 2.3e-3
    on the CPU for scores rising along the keys). Opt-in (`kiln run
    --lazy-rescale`, the pipelines' `lazy-rescale`): with
    `tgpu-skip-unit-scales` measured +2-3% at D = 128 for plain and causal
    on the H200, but -9 to -11% for softcap there and -2 to -4% at D = 256
    (docs/performance.md).
  }];
  let options = [
    Option<"threshold", "threshold", "double", /*default=*/"8.0",
           "Log2 of the largest factor by which the exponentials may exceed 1">,
  ];
  let dependentDialects = ["::kiln::tile::TileDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // KILN_TILE_PASSES
