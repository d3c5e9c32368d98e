//===- TileBase.td - tile dialect and types ----------------*- tablegen -*-===//
//
// The `tile` dialect is the blocked algorithm: a program instance loads tiles
// of global arrays through descriptors, multiplies them, reduces rows and
// applies elementwise arith/math to whole tiles (ranked tensors), looping with
// scf.for over KV blocks. Backends (CPU, CUDA) give it a schedule.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TILE_BASE
#define KILN_TILE_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::kiln::tile";
  let summary = "Tile programs: descriptors, tile loads/stores, dot, row reductions";
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  // tile.grid on kernels and the argument roles of the launch plan
  // (TileAttrNames.h) are checked where they are written.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def Tile_DescType : TypeDef<Tile_Dialect, "Desc"> {
  let mnemonic = "desc";
  let summary = "a strided view of a global array that tiles are loaded from";
  let description = [{
    `!tile.desc<?x64xbf16>`: a rank-1 or rank-2 window of a global array
    (rows may be dynamic). Loads past its bounds read a fill value; stores
    past them are dropped, so tile programs need no bounds checks of their own.

    `!tile.desc<?x128xbf16, group 4>`: rows packed from two dimensions of
    the array (a `tile.view` with `packed`): row r is row r / 4 of the kept
    dimension and position r % 4 of the packed one, so a tile's rows can be
    the query heads of one KV group next to each other. The row extent is
    the kept dimension's times the group.

    `!tile.desc<?x128xbf16, pages 16>`: the rows of a paged KV cache (a
    `tile.view` with `pages`), 16 to a page; row r is in page r / 16 of the
    sequence's block table.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        DefaultValuedParameter<"int64_t", "1">:$group,
                        DefaultValuedParameter<"int64_t", "0">:$pageSize);
  let builders = [
    TypeBuilder<(ins "::llvm::ArrayRef<int64_t>":$shape,
                     "::mlir::Type":$elementType,
                     CArg<"int64_t", "1">:$group,
                     CArg<"int64_t", "0">:$pageSize), [{
      return $_get($_ctxt, shape, elementType, group, pageSize);
    }]>
  ];
  let skipDefaultBuilders = 1;
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    bool isPaged() const { return getPageSize() > 0; }
  }];
}

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "row reduction", [
    I32EnumAttrCase<"max", 0>, I32EnumAttrCase<"sum", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kiln::tile";
}
def Tile_ReduceKindAttr : EnumAttr<Tile_Dialect, Tile_ReduceKind, "reduce_kind">;

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

def Tile_Tile : RankedTensorOf<[AnyType], [HasStaticShapePred]>;

#endif // KILN_TILE_BASE
