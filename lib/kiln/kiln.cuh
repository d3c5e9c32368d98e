// kiln/kiln.cuh - Kiln's device library: the primitives emitted kernels call.
//
// Primitives only (types, layouts, copies, loads, mma, random bits, reductions,
// stores, TMA copies and mbarriers, wgmma); the structure of every kernel is
// printed from IR by compiler/Emit/CUDA.
#pragma once
#include "kiln/bulk.cuh"
#include "kiln/chunks.cuh"
#include "kiln/copy.cuh"
#include "kiln/core_order.cuh"
#include "kiln/grid.cuh"
#include "kiln/layout.cuh"
#include "kiln/load.cuh"
#include "kiln/mma.cuh"
#include "kiln/ragged.cuh"
#include "kiln/random.cuh"
#include "kiln/reduce.cuh"
#include "kiln/schedule.cuh"
#include "kiln/store.cuh"
#include "kiln/tma.cuh"
#include "kiln/turns.cuh"
#include "kiln/types.cuh"
#include "kiln/wgmma.cuh"
