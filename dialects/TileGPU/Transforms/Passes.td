//===- Passes.td - tgpu schedule passes --------------------*- tablegen -*-===//

#ifndef KILN_TILEGPU_PASSES
#define KILN_TILEGPU_PASSES

include "mlir/Pass/PassBase.td"

def TileGPUOverlapCopies : Pass<"tgpu-overlap-copies"> {
  let summary = "Issues a later staged copy together with an earlier one to overlap it with compute";
  let description = [{
    `convert-tile-to-tgpu` stages each operand with its own
    barrier / copy_async / async_wait / barrier, so every copy's latency is
    exposed. When two staged copies follow each other in a block (K then V
    in a KV step), this pass issues the second right after the first and
    waits for the first alone (`async_wait {pending = 1}`): V's load then
    runs under Q K^T and the softmax, as in FlashAttention-2.

    The second copy's leading barrier goes: every warp has passed the first
    copy's barrier, so none still reads the second buffer from an earlier
    step, and the pass checks that nothing between the two reads it. The
    copy's operands must be available at the new position.

    Before:
    ```mlir
    tgpu.barrier
    tgpu.copy_async %kd[%j, %c0], %kbuf ...
    tgpu.async_wait
    tgpu.barrier
    %s = tgpu.mma %qbuf, %kbuf, ...
    ...
    tgpu.barrier
    tgpu.copy_async %vd[%j, %c0], %vbuf ...
    tgpu.async_wait
    tgpu.barrier
    %o = tgpu.mma %p, %vbuf, ...
    ```
    After:
    ```mlir
    tgpu.barrier
    tgpu.copy_async %kd[%j, %c0], %kbuf ...
    tgpu.copy_async %vd[%j, %c0], %vbuf ...
    tgpu.async_wait {pending = 1 : i64}
    tgpu.barrier
    %s = tgpu.mma %qbuf, %kbuf, ...
    ...
    tgpu.async_wait
    tgpu.barrier
    %o = tgpu.mma %p, %vbuf, ...
    ```
  }];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect"];
}

def TileGPUPrefetchNextStep : Pass<"tgpu-prefetch-next-step"> {
  let summary = "Loads the next KV step's first operand while this step finishes";
  let description = [{
    Software pipelining of a KV loop across iterations. After
    `tgpu-overlap-copies` a step begins by issuing K and V and waiting for K;
    K's latency is still exposed. This pass issues K for step j+1 as soon as
    every warp is done reading K for step j (after the barrier that
    publishes V, before P*V), so it lands under P*V:

    * a prologue before the loop issues K for the first step (after a
      barrier: an earlier loop may still read the buffer);
    * in the body, K's copy moves after the barrier that follows the wait for
      V, with the induction variable advanced by one step; the wait at the top
      (`pending = 1`) now means "K of this step done, V still in flight";
    * an epilogue waits for the last, unused prefetch, so that nothing is in
      flight when the loop exits.

    The last step prefetches rows past the loop's bound: they lie inside the
    array (read for nothing) or past it (zero-filled by the copy, no read).
    The pass applies to loops whose body starts with
    `barrier; copy_async A; copy_async B; async_wait {pending = 1}; barrier`,
    whose copy of A depends on the loop only through the induction variable,
    and whose body reads A only before the next `async_wait; barrier` pair.
  }];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileGPUWarpgroupMma : Pass<"tgpu-warpgroup-mma"> {
  let summary = "Multiplies on Hopper's warpgroup tensor cores (wgmma) from swizzled shared tiles";
  let description = [{
    Rewrites the `tgpu.mma` ops of sm_90a kernels into
    `tgpu.warpgroup_mma` where wgmma can take them, and puts the shared
    buffers they read into the swizzled layout its descriptors read
    (`#tgpu.swizzle`, the widest of 128/64/32 bytes that divides a row),
    with no row padding:

    * the accumulator has one m16 tile per warp and the kernel whole
      warpgroups (the `#tgpu.mma` layout is then wgmma's accumulator
      layout), N is a multiple of 16 up to 256, K of 16, bf16 or f16; in
      column groups (`col_groups = G`) each group is whole warpgroups with
      one m16 tile per warp and N / G is such an N, A is then a shared
      buffer, and an MN-major B is swizzled no wider than a group's columns
      (each group's product starts at its first column);
    * A is a shared buffer read K-major (Q in Q K^T) or a register tile
      (P in P V); B a shared buffer, K-major (K) or MN-major (V);
    * every other use of such a buffer must be a `tgpu.copy_async` into it
      or another product that converts: a buffer also read by ldmatrix
      (a transposed lhs, a window) keeps its padded layout, and the products
      that read it stay `tgpu.mma`.

    Shared buffers are then laid out again (swizzled ones 1024-byte
    aligned, the pattern's period) and `tgpu.shared_bytes` updated; the
    pass fails if the result exceeds `shared-memory-bytes` (0: unchecked).
    A `tgpu.fence_async_shared` follows every `tgpu.async_wait`, so the
    cp.async writes that the barrier after it publishes are visible to
    wgmma's async-proxy reads.

    A register A operand (P) is packed into wgmma's fragments, two 16-bit
    values per register, before the products' `wgmma.fence`: packing a
    step's fragment between the products writes registers while earlier
    products are in flight, and ptxas then inserts a `warpgroup.arrive`
    before each such product (ptxas info C7519). `pack-lhs-first=false`
    (the ablation) packs at each step; the kernel then carries
    `tgpu.lhs_packed_per_step`, which the CUDA emitter reads.

    Register tiles computed while asynchronous products run and read after
    their `tgpu.warpgroup_wait` (the softmax under P*V, index tiles under
    Q K^T) are kept before the wait by the CUDA emitter for the CUDA front
    end; ptxas may still move the wait above that work (it does in the
    pipelined loop, when it wants registers the products hold).
    `order-before-waits` (opt-in, measured slower) marks the kernel
    `tgpu.ordered_waits`, and the emitter keeps the work before the wait in
    a form ptxas sees too (a store in a branch no thread takes).
  }];
  let options = [
    Option<"sharedMemoryBytes", "shared-memory-bytes", "int64_t", "0",
           "Shared memory per CTA on the device (0: unchecked)">,
    Option<"packLhsFirst", "pack-lhs-first", "bool", "true",
           "Pack a register A operand before the products' fence (false: "
           "at each k16 step, the ablation)">,
    Option<"orderBeforeWaits", "order-before-waits", "bool", "false",
           "Keep the work computed under asynchronous products before their "
           "wait in ptxas's schedule too (opt-in: measured slower)">,
  ];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect"];
}

def TileGPUDoubleBuffer : Pass<"tgpu-double-buffer"> {
  let summary = "Loads a KV loop's next step into a second pair of buffers while this step computes";
  let description = [{
    A two-stage ring for the two operands a KV step stages (K and V). After
    `tgpu-overlap-copies` a step issues K and V, waits for K, computes
    Q K^T and the softmax, waits for V and computes P V, so each copy has
    only part of its own step to land. This pass gives each of the two
    buffers a twin and alternates them by the step's parity (`arith.select`
    on the buffers): the step issues the next step's K and V into the
    buffers the previous step read, then waits for its own (issued one step
    earlier, `async_wait {pending = 2}`), so every copy has a whole step to
    land, and one barrier per step remains instead of three:

    * a prologue before the loop issues the first step's copies (after a
      barrier: an earlier loop may still read the buffers);
    * the body's top barrier now also separates the previous step's reads
      of the other buffers from this step's copies into them; the wait and
      barrier that published B are gone (B landed with A);
    * an epilogue waits for the last step's unused copies.

    The last step loads rows past the loop's bound: inside the array (read
    for nothing) or past it (zero-filled by the copy, no read). Applies to
    loops whose body starts `barrier; copy_async A; copy_async B;
    async_wait {pending = 1}; [fence_async_shared;] barrier` (the form
    `tgpu-overlap-copies` gives) with one later `async_wait {pending = 0};
    [fence_async_shared;] barrier`, whose copies depend on the loop only
    through the induction variable and whose buffers nothing else in the
    loop writes, and only when the kernel's shared memory with the twins
    stays within `shared-memory-bytes` (else the kernel is left alone). Runs
    instead of `tgpu-prefetch-next-step`.
  }];
  let options = [
    Option<"sharedMemoryBytes", "shared-memory-bytes", "int64_t", "0",
           "Shared memory per CTA on the device (0: unchecked)">,
  ];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileGPUTmaStores : Pass<"tgpu-tma-stores"> {
  let summary = "Stores the consumers' 16-bit output tiles by TMA from shared memory";
  let description = [{
    The forward's epilogue wrote its output tile from registers, a 4-byte
    store per lane and element pair behind its address arithmetic; a tile
    of few KV steps (a sliding window, the causal diagonal's short rows)
    spends much of its time there, and Nsight Compute showed its warps
    waiting on the stores' registers (long scoreboard). On sm_90a this pass
    rewrites each `tile.store` in a warp-specialized kernel's consumer
    region of a 2-D bf16 or f16 `#tgpu.mma` tile, as wide as its
    descriptor, into a plain view of a kernel tensor whose columns are the
    tensor's innermost dimension (the output `[B, N, H, D]` per batch and
    head), into `tgpu.tma_store` through a shared staging buffer of the
    tile's shape (swizzled by the widest span dividing a column group's row)
    and a tensor map of that tensor appended to the kernel's arguments (the
    view's columns, its rows, then the other dimensions; the box a span of
    columns by a warp's rows). Each warp stages its rows and its lane 0
    issues one tensor store per span, with no barrier; before the region
    ends, a `tgpu.bulk_wait`. TMA clips the box at the tensor's edge, as
    `tile.store` drops rows past the view. Stores with a mask, into paged,
    ragged (varlen) or packed (GQA) views, or of f32 tiles (the split-KV
    partials) keep their per-lane stores.

    Runs after `tgpu-warp-specialize`, last in both sm_90a pipelines (the
    backward's dK and dV, and a bf16 dQ). Where the staging would not fit
    `shared-memory-bytes` beside the kernel's buffers without losing a CTA
    per multiprocessor (its `tgpu.ctas_per_sm`), a kernel of one tile per
    CTA whose stores of one tile type lie in the consumers' region itself
    stages over buffers only its loops use (`tgpu.shared_alloc overlays`:
    ring stages and per-step buffers, which the consumers have finished
    with, and the producer has stopped writing, when they store), at a
    1024-byte aligned buffer that no other buffer overlaps, behind a barrier
    of the consumers before the first store (another warpgroup may still be
    reading them): the D = 128 dK/dV kernel. A persistent kernel (its next
    tile's copies refill the rings under the epilogue) stages instead in the
    tile's own copy of a buffer of the staging's type that it holds in turns
    and frees before the stores (`tgpu.mbarrier_arrive ... frees`: Q, whose
    other copy the producer fills for the next tile meanwhile): the arrival
    moves after the stores, behind a `tgpu.bulk_wait_read` (the stores have
    read the copy), and where a warp's rows of the copy are read by other
    warpgroups than its own (anything but the A operand of products split
    by rows like the stored tile), a consumers' barrier comes before the
    first store. That is the D = 128 prefill kernel of 192 rows, whose
    second Q copy fills the shared memory; `stage-in-own-copy=false` (`kiln
    run --no-stage-in-q`) keeps its per-lane stores. `kiln run
    --no-tma-stores` is the pass's ablation.
  }];
  let options = [
    Option<"sharedMemoryBytes", "shared-memory-bytes", "int64_t", "0",
           "Shared memory per CTA on the device (0: unchecked)">,
    Option<"stageInOwnCopy", "stage-in-own-copy", "bool", "true",
           "Where no staging fits a persistent kernel, stage in the tile's "
           "own copy of a buffer it frees before the stores (Q)">,
  ];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect"];
}

def TileGPUBulkReductions : Pass<"tgpu-bulk-reductions"> {
  let summary = "Adds f32 tiles into global memory through shared memory by bulk reductions";
  let description = [{
    The atomic backward adds each KV block's f32 share of dQ into the
    workspace with `tile.atomic_add`, printed as one 8-byte `red.global`
    per lane and element pair; its dK/dV kernel is bound by those
    reductions (Nsight Compute: the crossbar into L2 busy 76-81% of cycles).
    On sm_90a this pass rewrites each `tile.atomic_add` of a 2-D f32
    `#tgpu.mma` tile (rows of whole 16-byte chunks), as wide as its
    descriptor, a view of an array's last two dimensions (the dense
    backward's head-major accumulator: a query block is one contiguous
    run), into `tgpu.bulk_reduce_add` through an f32 staging buffer of the
    tile's shape: each warp stages the rows it holds and adds them with one
    `cp.reduce.async.bulk .add.f32`, with no barrier; after the last one in
    a consumer region (or the kernel), a `tgpu.bulk_wait` for the sums. One
    staging buffer per tile shape serves every such add of the kernel.
    Adds into strided rows (varlen's packed accumulator) keep `red.global`:
    one bulk reduction per row, issued from uniform registers one lane at a
    time, measured slower.

    Runs after `tgpu-warp-specialize` (whose shared-memory layout and CTAs
    per multiprocessor it keeps): a kernel whose staging would not fit
    `shared-memory-bytes` beside its buffers without losing a CTA per
    multiprocessor (warp-specialized: its `tgpu.ctas_per_sm`; otherwise as
    many as its shared memory allows) is left with `red.global` (the atomic
    schedule's dK/dV kernel at D = 128 keeps two CTAs per multiprocessor
    that way).

    A tile in column groups (`col_groups`: each warp holds 16 rows of its
    group's columns, a strided block of the accumulator) into a view of a
    kernel argument (tensor or workspace, rank 2 to 5) becomes a
    `tgpu.tma_reduce_add` through a staging buffer swizzled by the widest
    span dividing a group's row (a TMA box is at most one span wide) and a
    tensor map of that argument appended to the kernel's arguments (its box
    a span of columns by a warp's rows): one reduction per warp and span
    (two per warp at D = 128 in two groups). `kiln run --no-bulk-reductions`
    is the ablation for both forms (the adds stay `red.global`).

    With `core-order` (default; `kiln run --no-core-order` is the
    ablation), an f32 workspace that one sm_90a kernel's stageable adds
    write, and that is otherwise only loaded as `#tgpu.mma` f32 tiles or
    filled with one value over whole rows, every access at rows and columns
    proved multiples of 16 and 8, is kept in mma core-block order: each
    16-row band ordered by the fragments' 16 x 8 core blocks, each 32 lanes
    x 4 floats. A warp's
    share is then one contiguous run: its adds become
    `tgpu.core_reduce_add` (16-byte stores, one bulk reduction per warp and
    band, no tensor map), its loads `tgpu.core_load`, and its rows
    dimension is padded to whole bands in every kernel that declares it.

    With `defer-flush` (default; `kiln run --no-defer-flush` is the
    ablation) a `tgpu.core_reduce_add` in a loop's step is split: a
    `tgpu.core_stage` in its place writes the share into the staging
    buffer, and a `tgpu.core_flush` in the next step, before that step's
    first wait for a product (the warps wait there anyway; else at the
    step's start), fences it and issues the bulk reductions, where the step
    is not the loop's first (`iv != lb`), with the view and offsets computed
    again at `iv - step` (nothing is carried across steps); the last step's
    share is flushed after the loop. Only where the step's register
    estimate fits the consumers' budget (at D = 128 the split made ptxas
    spill), no other op of the loop uses the staging buffer, and the view
    and offsets depend on the step only through its induction variable.
    The fence waits for the staging stores to complete, which in the step
    that made them left the warps idle (Nsight Compute: the consumers'
    largest single stall in the atomic dK/dV kernels at D = 64 and 128).

    With `producer-reductions` (default; `kiln run --no-producer-reductions`
    is the ablation), taken before `defer-flush`, the consumers of a
    warp-specialized kernel only stage each loop step's core-order share,
    fence it and arrive on a barrier, and the producer's warp issues the
    bulk reductions (`tgpu.core_add_staged`), FlashAttention-3's
    arrangement: the share of step n - 1 after the loads of step n (which
    waited for the consumers to finish step n - 2, so the share's wait
    delays no load; lane 0's wait for the share before to have been read
    comes before the next loads), the last after the producer's loops. A second staging
    buffer lets the consumers stage a share while the copy engine reads
    the previous one; the producer releases a buffer (an "empty" barrier)
    once the reductions of its share have read it (`tgpu.bulk_wait_read`).
    Only where every add is the one add of a loop at the top of the
    consumer region whose range a producer loop runs too, the producer can
    compute the view and offsets from its own induction variable (a view
    made in each step, GQA's of the step's query head, it makes again for
    each share; values with an integer division by a value the step does
    not fix, for steps that ran only), and the second buffer costs no CTA
    per multiprocessor, and nothing else in the producer commits bulk
    groups.
  }];
  let options = [
    Option<"sharedMemoryBytes", "shared-memory-bytes", "int64_t", "0",
           "Shared memory per CTA on the device (0: unchecked)">,
    Option<"coreOrder", "core-order", "bool", "true",
           "Keep accumulator workspaces in mma core-block order where only "
           "staged adds, mma-layout loads and fills touch them">,
    Option<"deferFlush", "defer-flush", "bool", "true",
           "Fence and add a loop step's core-order share during the next "
           "step (tgpu.core_stage, tgpu.core_flush)">,
    Option<"producerReductions", "producer-reductions", "bool", "true",
           "Issue a warp-specialized kernel's core-order reductions from the "
           "producer's warp, the consumers staging into two buffers by turns">,
  ];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect"];
}

def TileGPULongestFirst : Pass<"tgpu-longest-first"> {
  let summary = "Hands out the grid's longest blocks first, across all heads";
  let description = [{
    The GPU hands a grid's CTAs to free multiprocessors roughly in order of
    their linear index, x fastest, and x is the block (a persistent kernel
    draws its tiles from a counter in the same order). Under a causal mask
    the blocks' work differs by up to the sequence's block count, and in
    that order every (head, batch) brings its longest and shortest blocks
    together, so the grid's last wave holds the last heads' longest blocks
    while the other multiprocessors idle: a greedy schedule in grid order
    is 1.07-1.11x the mean load per multiprocessor in
    `bench/model_persistent_schedule.py` for a causal forward, against
    1.00-1.02x for the longest first over the whole grid.

    For a kernel whose `tile.block_cost` says how its work moves along axis
    0 (set by convert-attn-to-tile from the mask's band: "grows" for a
    causal forward's query blocks, "shrinks" under a lower bound alone),
    this pass renumbers the program ids
    so that the block is the slowest axis of the launch order and the
    longest blocks come first: with L = x + X * (y + Y * z), the CTA runs
    block L / (Y * Z) (counted from the last where the work grows), head
    (L mod Y * Z) mod Y and batch (L mod Y * Z) / Y. The extents X, Y, Z
    become scalar arguments (the grid's size expressions), so that a
    persistent kernel, which maps its tile counter to program ids the same
    way, orders its tiles alike. A relabelling: each (block, head, batch)
    runs once. Kernels without the attribute (plain, windows, block lists,
    varlen batches), with ordered adds (their turns follow the key blocks'
    own numbering) or with program ids below the entry block are left
    alone. `longest-first=false` (`kiln run --no-longest-first`) is the
    ablation.

    The order costs locality: in grid order the CTAs at work cover a few
    heads, whose K and V (forward) or Q, dO and dQ sums (dK/dV) stay in L2
    while they all read them; with the block slowest each covers its own
    head, unless the heads of the grid's axis 1 are a GQA group's query
    heads, which read one KV head. Measured on an H200
    (docs/performance.md): GQA causal's forward 2-7% faster at N = 2k to
    16k in three calls; causal's backward at 128 (batch, head) pairs 1.33x
    the time, its forward at 16k 3-7% slower. So with `shared-heads-only`
    (the default) only kernels over a GQA group's query heads (axis 1
    "heads", tile.gqa_group > 1) are renumbered over the whole grid.

    With `wave-chunks` the kernels other than a GQA group's query heads' (which
    keep the whole-grid order) are renumbered whatever `shared-heads-only`
    says, their grid's (head, batch) pairs, P = Y * Z of them, going
    in chunks of C = max(1, floor(S / X)) pairs, S the CTAs the device holds
    at once (num_sms * ctas_per_sm.<kernel>, a scalar the plan computes):
    about one wave's worth of blocks per chunk. The chunks keep grid order,
    and inside a chunk the block is the slowest axis, longest first: the CTA
    at place L runs chunk c = L / (C * X), and with r = L mod (C * X) and
    C' = min(C, P - c * C) (the last chunk's pairs) block r / C' (counted
    from the last where the work grows) of pair c * C + r mod C'. So the
    CTAs at work cover about as many heads as in grid order (their data
    stays in L2), and each chunk's long blocks start while the previous
    chunk's short ones finish. A greedy model of the dK/dV kernel (key
    blocks, work shrinking along them; `bench/model_persistent_schedule.py
    --kernel dkdv`) puts grid order at 1.06-1.07x the mean load per
    multiprocessor for causal and 1.24-1.30x for GQA 4:1 (a quarter as many
    CTAs, each four times longer) at N = 1k-8k, the chunks at 1.00-1.03x;
    measured on an H200, the backward 2-7% faster for causal and 6-16% for
    GQA causal at N = 2k and 4k, level at 16k. For a causal forward's query
    blocks (128-row tiles at N <= 4096) the model gives 1.07-1.08x in grid
    order at D = 128 and 1.04x at D = 64, the chunks 1.00-1.02x; measured
    on an H200 at D = 64, the forward 1-3% faster. C >= P is the whole-grid
    order above. Both CUDA pipelines run the pass with `wave-chunks` (`kiln
    run --no-wave-chunks` and `--no-backward-longest-first`: the
    ablations): the forward on its kernels with a block cost, the backward
    on its key-block kernels, which convert-attn-to-tile-backward gives
    one.
  }];
  let options = [
    Option<"sharedHeadsOnly", "shared-heads-only", "bool", /*default=*/"true",
           "renumber only kernels whose axis-1 heads share K and V (a GQA "
           "group's query heads); false: every kernel with a block cost">,
    Option<"waveChunks", "wave-chunks", "bool", /*default=*/"false",
           "renumber the kernels other than a GQA group's query heads' "
           "within chunks of about one wave's (head, batch) pairs, the "
           "chunks in grid order">,
  ];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::kiln::tile::TileDialect"];
}

def TileGPUPingPong : Pass<"tgpu-ping-pong"> {
  let summary = "Has the consumer warpgroups take turns issuing their products";
  let description = [{
    FlashAttention-3's ping-pong, on the warp-specialized form
    (`tgpu-warp-specialize`): consumer warpgroups that wait on the same
    ring barriers tend to run in lockstep, issuing their products together
    and then all running the softmax while the tensor cores idle. With two
    or more consumer warpgroups, this pass makes every synchronous product
    of the KV loops of a consumer region a turn: `tgpu.warpgroup_turn
    "wait"`, the product issued `async`, `"pass"` to the next warpgroup,
    then `tgpu.warpgroup_wait` for it; a `"start"` opens the region and an
    `"end"` follows its last KV loop. Every warpgroup runs the same loops,
    so the turns match.
  }];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileGPULoadAhead : Pass<"tgpu-load-ahead"> {
  let summary = "Loads a step's read-only vectors one step ahead";
  let description = [{
    In the consumer loops of a warp-specialized kernel, a `tile.load` of a
    1-D register tile (a vector per step) from a kernel array that no op of
    the kernel writes (nor writes through a tensor map of it), through a
    view made before the loop, at offsets computed by pure ops from the
    induction variable and values defined before the loop, is issued for
    the next step at the top of this one and carried as an iteration
    argument; the first step's is loaded before the loop. The backward's
    dK/dV kernel reads the LSE and D of each step's queries this way:
    loaded where they are used, the load's latency (L2) sat in front of
    the step's first product, since
    ptxas places the LSE's scaling between `WARPGROUP.ARRIVE` and the first
    `HGMMA` (Nsight Compute at D = 64: 14% of the kernel's samples on that
    one `FMUL`). The last step loads past the loop's range: elements past
    the view read the load's fill, the others are read for nothing. Costs
    one more vector of registers per load across the step; 2-D tiles are
    left alone.
  }];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileGPUOverlapLaunches : Pass<"tgpu-overlap-launches"> {
  let summary = "Lets each kernel start while the stream's previous kernel finishes (programmatic dependent launch)";
  let description = [{
    A kernel launched after another on a stream starts only when that one
    has completed, so every boundary between a program's kernels (split-KV's
    split and combine kernels, the backward's three) and between calls pays
    the next grid's launch and its CTAs' start with the GPU idle: a few
    microseconds, as much as a decode step's combine kernel does.

    This pass begins every scheduled kernel (`tgpu.num_warps`) with
    `tgpu.launch_dependents` and then `tgpu.wait_prior_grids`, before any
    other op, and marks it `tgpu.overlaps_prior_grid`; the launch plan
    records that (`overlaps_prior`) and the runtime launches such kernels
    with programmatic stream serialization (cuLaunchKernelEx). A kernel's
    CTAs may then be placed as soon as every CTA of the previous grid has
    started, and wait there until it has completed and its writes are
    visible; the wait comes before the kernel's first access to global
    memory, so each kernel still sees all of the previous one's writes and
    the previous one never sees this one's. A kernel that is not marked is
    launched as before. The dependents' CTAs take only multiprocessors the
    previous grid leaves free (all of its CTAs have started by then).

    For sm_90 kernels only (`griddepcontrol`; others are left alone). The
    sm_90a forward pipeline adds it (`overlap-launches`, ablation `kiln run
    --no-overlap-launches`); the backward's only with
    `overlap-backward-launches` (opt-in: its kernels measured slower).
  }];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect"];
}

def TileGPUSkipUnitScales : Pass<"tgpu-skip-unit-scales"> {
  let summary = "Scales a loop-carried register tile's rows only in warps where some factor differs from 1";
  let description = [{
    `arith.mulf %acc, (tile.broadcast %factors dim 1)`, with `%acc` an
    iteration argument of a KV loop (`tile.kv_loop`) in `#tgpu.mma` layout (f32, whole rows
    per warp) and `%factors` in `#tgpu.rows`, becomes `tgpu.scale_rows
    %acc, %factors`: the same values, the multiplications skipped by a warp
    whose rows' factors are all exactly 1. That is the online softmax's
    accumulator correction `exp2(m_old - m)`, which is 1 in most KV steps
    once `tile-lazy-rescale` moves the reference maximum only in steps of a
    threshold: 64 multiplications per thread and step at D = 128, 128 at
    D = 256, for a vote and a branch. Multiplications of values that are
    not carried (the epilogue's 1 / l) stay as they are. Opt-in (`kiln run
    --skip-unit-scales`, the CUDA pipelines' `skip-unit-scales`): the branch
    costs ptxas its freedom to schedule the multiplications around the
    products, and on the H200 it measured slower than the plain multiply at
    D = 256 (docs/performance.md).
  }];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect"];
}

def TileGPUCombineBeforeWaits : Pass<"tgpu-combine-before-waits"> {
  let summary = "Multiplies the factors ready before a product's wait first, and narrows what then dies early";
  let description = [{
    A register-tile product chain `(p * x) * g` (`arith.mulf`, the inner
    product used only there) where `x` depends on a later
    `tgpu.warpgroup_mma` or `tgpu.warpgroup_wait` of the block than `p` and
    `g` do becomes `(p * g) * x`, with `p * g` computed right after the
    later of `p` and `g`: both then die before that wait instead of living
    across it. Only where that frees registers: `g` made in the block for
    this product alone, and `p` read after the wait by nothing but a
    narrowing (an outer factor, ALiBi's slope, is left alone: `p * g` would
    live beside P's narrow copy). Then an `arith.truncf` that is `p`'s last
    use moves up to `p`'s previous last use, so `p` dies there too and only
    its narrower copy waits. That is a mod's derivative in the backward: softcap's
    dS = P (dP - D) (1 - t^2) kept P and 1 - t^2 (64 registers per thread
    at 64 keys per warpgroup) beside dK, dV and dP in flight; P (1 - t^2)
    and P's bf16 copy for dV take 48. The products' order changes the f32
    rounding, so the CUDA pipelines run it only under fast math (the pass
    itself reads no fastmath flags; it keeps the ops' own, and skips
    products whose flags differ; `combine-before-waits`, and `kiln run
    --no-combine-before-waits` the ablation).
  }];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect", "::mlir::arith::ArithDialect"];
}

def TileGPUOrderedAdds : Pass<"tgpu-ordered-adds"> {
  let summary = "Makes a kernel's bulk reductions into an accumulator take turns";
  let description = [{
    The atomic backward's dQ is the sum of every key block's share; added
    in whatever order the key blocks' CTAs get there, the f32 sums differ
    from run to run. A kernel that `convert-attn-to-tile-backward
    ordered-dq` marked `tile.ordered_adds` ({accumulator, turns, rows})
    carries a `turn` on each add into the accumulator: its place among the
    programs adding to that block of `rows` rows. Before each
    producer-issued `tgpu.core_add_staged` into the accumulator workspace
    this pass puts a `tgpu.turn_wait` until the zeroed `turns` workspace's
    counter of that (batch, head, row block) equals the add's turn; after
    it, a `tgpu.turn_signal` that waits for the sums and then counts the
    add. Each element's sum is then formed in one order, the same in every
    run. The conversion picks turns in the order in which the key blocks
    reach a Q block anyway (docs/pipeline.md), and numbers the key blocks so
    that those a turn waits for are handed out first.

    Only the producer's reductions are ordered (`tgpu-bulk-reductions`
    `producer-reductions` on a warp-specialized, non-persistent kernel,
    one add per step covering the accumulator's whole rows, with a turn):
    any other add into the accumulator, a persistent kernel, a
    partial-width add or an add without a turn is an error, not a silently
    unordered sum.
  }];
  let options = [
    Option<"deferredSignal", "deferred-signal", "bool", "true",
           "Where the mark allows it (`deferred_signal`: turns in arrival "
           "order), pass each turn on at the producer's next turn_wait "
           "instead of waiting for the sums right after the add">
  ];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect",
                           "::kiln::tile::TileDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileGPUOverlapProducts : Pass<"tgpu-overlap-products"> {
  let summary = "Issues products early and waits for each at its first use, where independent work lies in between";
  let description = [{
    In a step of the backward, dP = dO·Vᵀ (or dPᵀ = V·dOᵀ) does not depend
    on S, yet a synchronous schedule issues it only after S's product has
    completed and the exponentials of P are computed, so the warpgroup's
    tensor cores idle during that work. For two synchronous
    `tgpu.warpgroup_mma` ops of one block, the second directly after the
    first among products, this pass moves the second up to just after the
    first when what lies between them reads no memory that the second
    needs written (only ops without effects, reads, and ring waits, which
    move up with it; no barrier, thread store or ring release), issues both
    `async`, and reads each result through a `tgpu.warpgroup_wait` right
    before its first use (`pending = 1` for the first when the second is
    still in flight). Ring releases (`tgpu.mbarrier_arrive`) between the
    products' new position and their last wait move after that wait: a
    slot is released only once the products that read it completed (and
    ptxas completes every product in flight before an arrive). A pair is
    left alone when either product is already asynchronous or reads a
    buffer the threads write (`tgpu.store_shared`, under its name or
    another that may be one of its allocations: its barriers assume
    synchronous readers).

    Then every product still synchronous whose first use comes after other
    work that does not depend on it (only ops without effects, reads and
    ring waits; ring releases move after the wait) is issued `async` and
    read through a `tgpu.warpgroup_wait` at that use: dropout's random bits
    (`tile.philox`, drawn right after S's product in the forward and the
    backward) run while the tensor cores compute S. The forward's products
    depend on each other (P·V reads S's softmax), so only this second rule
    changes them.

    With `async-accumulate` (the default), last, a synchronous product
    whose result is first used by its block's terminator (a loop-carried
    accumulator: the backward's dV and dK) and that has other work after
    it, before the terminator (another product, shared stores, barriers,
    adds into global memory) is issued `async` and read through a wait right before the
    terminator: the step's next products issue behind it instead of after
    its completion (a later synchronous product's wait completes it at the
    latest). It is left alone when a ring wait lies in between (the ring
    releases moved after its wait could then hold back the slot awaited) or
    a warpgroup turn, when an op in between has regions, copies into shared
    memory, or stores into a buffer not provably distinct from the
    product's, when its rhs is a buffer the threads write, or when anything
    after it reads its register lhs (the PTX ISA leaves reading the A
    registers of a product in flight undefined). A lhs the threads write
    may stay in flight where no write into it lies before the wait and every
    write into it that can follow the wait — in the next step, after the
    loop, in an enclosing loop's next step — comes after a barrier, which
    every warpgroup reaches only after its wait (the atomic schedule's dK
    reads dS from the buffer stored for dQ's dSᵀ K, issued before it, and
    runs while dQ's share is added). Every
    release in between moves after the wait, not only the product's own
    (later, never earlier).
  }];
  let options = [
    Option<"asyncAccumulate", "async-accumulate", "bool", /*default=*/"true",
           "Issue loop-carried accumulations asynchronously and wait for "
           "them at the loop's yield">,
  ];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect"];
}

def TileGPUWarpSpecialize : Pass<"tgpu-warp-specialize"> {
  let summary = "Loads through TMA from a producer warpgroup into an mbarrier ring the consumers read";
  let description = [{
    Hopper's warp-specialized schedule (sm_90a kernels). The kernel's warps
    become consumers that only compute, and a producer warpgroup added
    after them (`tgpu.producer_warps = 4`) issues every copy through the
    copy engine (`tgpu.tma_load`, from `!tgpu.tensor_map` arguments the
    pass appends: box = one swizzle span of columns by the buffer's rows):

    * a buffer loaded in the kernel's top-level loops (the KV loops)
      becomes a ring of `stages` buffers (as many as `shared-memory-bytes`
      holds; with no room even for the barriers the kernel is left alone),
      each with a
      "full" mbarrier (the copy's bytes landed) and an "empty" one (every
      consumer thread arrived after its last read in the step). Steps are
      counted across the kernel's loops in order, so ring slot and phase
      parity agree on both sides: stage = n mod S, parity = (n / S) mod 2;
    * consumers wait for "full" before a step's first read of the buffer and
      release it after the last; the producer waits for "empty" (parity
      flipped, so the first pass finds every slot free) and reloads;
    * a buffer loaded once (Q) gets one barrier the consumers wait on where
      the copy was;
    * the cp.async copies, their waits and the barriers that published them
      are removed: consumer warpgroups run unsynchronised with each other,
      and the scalar setup the producer needs (loop bounds, coordinates)
      moves before the split;
    * `tgpu.warp_specialize` splits the CTA: the producer warpgroup drops to
      24 registers, the consumers take the rest (up to 240 each).

    Applies to kernels whose copies read [B, N, H, D] kernel arguments
    whole rows at a time into swizzled buffers, either once before the
    loops or once per step in top-level loops at rows computed from the
    induction variable (the variable itself, or scalars the producer
    computes again in its copy loop: a block-sparse step reads its block's
    number from the list, a read-only argument) — also through a view the
    step makes itself, whose batch and head the producer computes the same
    way (GQA's dK/dV kernel, one loop over the group's heads' Q blocks), and
    whose shared memory is otherwise read only by synchronous
    `tgpu.warpgroup_mma` (no `tgpu.mma`, async products), each loop reading
    what it loads after loading it; other kernels keep their cp.async
    schedule (`tgpu-double-buffer` when on). Threads may write buffers of
    their own with `tgpu.store_shared` (the backward's P and dS), never one
    a copy fills: in the consumers each such write waits at a consumer
    barrier (the previous step's product has read the buffer), and is
    fenced to the async proxy and published by another barrier before the
    product that reads it.
    The consumers raise their registers to the rest of the file, at most
    256 and never below what the kernel may start with. With one consumer
    warpgroup (the backward's kernels) two CTAs share a multiprocessor
    where their shared memory fits (`tgpu.ctas_per_sm = 2`), each with half
    the register file; up to `max-ctas-per-sm` where the shared memory fits and
    the registers left per consumer thread hold an estimate of the step's
    tiles (RegisterEstimate.h: the tiles held across steps, twice the
    step's largest tile, 32 for the rest).

    With `ring-vectors` (the default), a step's per-query vectors (the
    backward's base-2 LSE and D: unmasked 1-D f32 `tile.load`s in a
    `#tgpu.rows` or `#tgpu.cols` layout, of the last dimension of a
    workspace whose rows start 16-byte aligned by its shape, through a view
    made before the loops or one the step makes from values the producer
    computes too, such as GQA's step's query head, at the rows of a ring's
    copy in the same loop) travel with that copy: the producer issues a `tgpu.bulk_load` of each
    into a slot per stage beside the ring's tile, on the ring's barriers,
    before the tile's copy, and the consumers read it with
    `tgpu.load_shared` where the step first uses it, filling the elements
    past the view's end as the load did. Without them each step's first
    product waits for a load from global memory issued at the top of the
    step. Only where the slots cost no stage, loaded-once copy or CTA per
    multiprocessor.

    With `producer-bits` (opt-in: measured slower, docs/performance.md), the
    dropout's keep bits of a step
    (`tile.philox` whose one user is `arith.cmpi ult` against a splat of a
    constant, in a `#tgpu.mma` tile of all consumer warps, its step values
    computed from the induction variable by scalars) are drawn by the whole
    producer warpgroup: after the loop's first copy it runs
    `tgpu.draw_keep_bits` into a slot per stage beside that ring's tile and
    every producer thread arrives on the ring's full barrier (initialised
    for 1 + 128 arrivals); the consumers read their words with
    `tgpu.load_keep_bits` where Philox ran. With `producer-bits-share` S
    below 8 the producer draws the first S eighths of each consumer
    thread's 8-element patches (at least one) and the consumers draw the
    rest themselves in `tgpu.load_keep_bits`. Philox's integer work (~45
    instructions per call, one call per 8 elements) leaves the consumers'
    instruction streams, on whose critical path it lay, for the producer
    warps, idle between copies; but one producer warp per SM sub-partition
    issues a whole step's calls, which takes longer than the step (0.74-0.77x
    the consumers' draw on an H200). The producer's budget rises from 24 to
    40 registers (96 with two consumer warpgroups). Only where every loop loading the ring draws once, and the
    slots and registers cost no stage, loaded-once copy or CTA per
    multiprocessor.

    With `persistent` (kernels with a loaded-once buffer whose program ids
    are read in the entry block), the grid becomes min(tiles, SMs x CTAs
    per SM) CTAs and both sides loop over tiles (Persistent.h): each CTA
    starts on its own, the producer draws the next from a zeroed counter
    workspace (`tgpu.next_tile`) and publishes its program ids with the
    tile's Q copy (`tgpu.publish_tile` / `tgpu.read_tile`); Q gets a "free"
    barrier so the next tile's Q loads during the epilogue. With
    `double-tile-buffers` (the default) and room in the shared memory after
    the ring, each loaded-once buffer has two copies that tiles use by turns
    (round mod 2), each with its own "full" and "free" barriers and
    program-id words: the next tile's Q loads while this tile runs.
  }];
  let options = [
    Option<"sharedMemoryBytes", "shared-memory-bytes", "int64_t", "0",
           "Shared memory per CTA on the device (0: unchecked)">,
    Option<"stages", "stages", "int64_t", "2",
           "Most stages per ring">,
    Option<"ringVectors", "ring-vectors", "bool", "true",
           "Per-query vectors of the loops' steps (the backward's base-2 "
           "LSE and D) copied by the producer beside a ring's tile">,
    Option<"producerBits", "producer-bits", "bool", "false",
           "The dropout's keep bits drawn by the producer warpgroup into a "
           "slot beside a ring's tile (tgpu.draw_keep_bits)">,
    Option<"producerBitsShare", "producer-bits-share", "int64_t", "8",
           "With producer-bits: the eighths (1 to 8) of each consumer "
           "thread's 8-element patches whose keep bits the producer draws; "
           "the consumers draw the rest">,
    Option<"maxCtasPerSM", "max-ctas-per-sm", "int64_t", "2",
           "Most CTAs per multiprocessor of a kernel with one consumer "
           "warpgroup (more than two where the registers hold its steps' "
           "tiles)">,
    Option<"persistent", "persistent", "bool", "false",
           "CTAs loop over the grid's tiles (as many CTAs as the GPU holds)">,
    Option<"doubleTileBuffers", "double-tile-buffers", "bool", "true",
           "With persistent: two copies of each buffer loaded once per tile "
           "(Q), where the shared memory holds them, so the next tile's "
           "loads while this one runs">,
  ];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileGPUPipelineProducts : Pass<"tgpu-pipeline-products"> {
  let summary = "Overlaps each KV step's softmax with the previous step's P V on the tensor cores";
  let description = [{
    FlashAttention-3's intra-warpgroup pipelining. In a KV loop on wgmma,
    each step waits for Q K^T, runs the softmax while the tensor cores idle,
    then waits for P V. This pass rotates the loop by one product: step j
    issues Q K_j^T and then P_{j-1} V_{j-1} (both `async`), waits for
    Q K_j^T alone (`pending = 1`; groups complete in order), runs the
    softmax of step j while P_{j-1} V_{j-1} runs, then waits for it and
    rescales. P and its V buffer are carried to the next step; the first
    step issues no P V (a predicated, empty group) and the loop's last P V
    runs after it, predicated on the loop having run.

    In the form `tgpu-double-buffer` gives, step j now reads V_{j-1} from
    the buffer step j+1's V would be loaded into at the top of the step, so
    V's copy moves after the wait for P V and a barrier (it then has until
    step j+2's P V to land); that form's V buffer must be picked by parity.
    In the form `tgpu-warp-specialize` gives, P V moves with the ring wait
    before it and the release after it (both in an `scf.if`: the first step
    has no P V), V's slot, parity and barrier indices are carried, and K's
    release moves after the wait for P V: the CUDA compiler completes every
    product in flight before an mbarrier arrive, so releasing K under P V
    would serialise the softmax behind it. Either way the first product is
    Q K^T and the last P V from registers with its result yielded and read
    nowhere else.
  }];
  let dependentDialects = ["::kiln::tgpu::TileGPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::kiln::tile::TileDialect"];
}

#endif // KILN_TILEGPU_PASSES
