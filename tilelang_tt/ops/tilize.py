"""Row-major blocks: compute turns rows into tiles (tilize) and tiles into rows (pack_untilize).

A block read from a row-major tensor arrives in a staging CB as rows (the reader reads 32 rows of
the block's width per tile row: ``block_tiles[1]`` pages of row-major data, as tt-metal's tilize
kernels expect); compute tilizes it into the block's own CB where the block arrives. A block
written to a row-major tensor is untilized by compute into its staging CB, whose rows the writer
writes. BuildTileDFGTT adds the staging CBs (:func:`add_staging_cbs`; ``tt.tile_dfg`` ``tilize_from``/``untilize_to``);
InsertDSTManagementTT calls these at the markers of where blocks arrive and leave. Both calls
run the whole unpack-math-pack engine (tilize_block and pack_untilize_block acquire DST
themselves, tt-metal 0.81.1 ``api/compute/tilize.h``, ``pack_untilize.h``): ops after them
initialise their engine where they run (:func:`~tilelang_tt.ops.base.hoistable_init`).

    tilize (block x of 2x3 tiles from its staging CB x_rm):
        T.tt.tilize_init(x_rm, 3, x)
        for r in range(2):
            T.tt.cb_wait_front(x_rm, 3); T.tt.cb_reserve_back(x, 3)
            T.tt.tilize_block(x_rm, 3, x); T.tt.cb_push_back(x, 3); T.tt.cb_pop_front(x_rm, 3)
        T.tt.tilize_uninit(x_rm, x)
    untilize (block y of 2x3 tiles into its staging CB y_rm, 3 tiles per DST block):
        T.tt.pack_untilize_init(3, 3, y, y_rm)
        for r in range(2):
            T.tt.cb_reserve_back(y_rm, 3)
            T.tt.cb_wait_front(y, 3); T.tt.pack_untilize_block(3, 3, y, y_rm, 0); T.tt.cb_pop_front(y, 3)
            T.tt.cb_push_back(y_rm, 3)
        T.tt.pack_untilize_uninit(y_rm)
"""

from __future__ import annotations

from tvm import tirx

from tilelang_tt.contract.formats import BY_DATA_FORMAT, tile_bytes
from tilelang_tt.ir.attrs import CBDesc
from tilelang_tt.ir.common import TILE, as_region, const_int, error, evaluate, seq, serial, unique_name
from tilelang_tt.ir.dataflow import TILIZE_FROM, UNTILIZE_TO
from tilelang_tt.ir.intrin import Intrin

# pack_untilize_block's widest block: the tiles DST holds at once in half-sync mode
# (tt-metal 0.81.1 api/compute/pack_untilize.h: 8 tiles in 16-bit mode, 4 in 32-bit mode)
MAX_UNTILIZE_TILES = {False: 8, True: 4}


def tilize(staged: CBDesc, block: CBDesc, like) -> tirx.Stmt:
    """The rows the reader staged in ``staged`` become the tiles of ``block``, one tile row at a time."""
    rows, cols = block.block_tiles

    def tile_row(_):
        return seq([
            evaluate(Intrin.CB_WAIT_FRONT, staged.index, cols, like=like),
            evaluate(Intrin.CB_RESERVE_BACK, block.index, cols, like=like),
            evaluate(Intrin.TILIZE_BLOCK, staged.index, cols, block.index, like=like),
            evaluate(Intrin.CB_PUSH_BACK, block.index, cols, like=like),
            evaluate(Intrin.CB_POP_FRONT, staged.index, cols, like=like),
        ])

    return seq([
        evaluate(Intrin.TILIZE_INIT, staged.index, cols, block.index, like=like),
        serial("r", rows, tile_row, like=like),
        evaluate(Intrin.TILIZE_UNINIT, staged.index, block.index, like=like),
    ])


def untilize_width(cols: int, fp32_dest_acc: bool) -> int:
    """Tiles per pack_untilize_block: the widest that DST holds and that divides the block's width."""
    most = MAX_UNTILIZE_TILES[fp32_dest_acc]
    return max(d for d in range(1, min(most, cols) + 1) if cols % d == 0)


def untilize(block: CBDesc, staged: CBDesc, fp32_dest_acc: bool, like) -> tirx.Stmt:
    """The tiles of ``block`` become rows in ``staged`` (consuming the block), one tile row at a time."""
    rows, cols = block.block_tiles
    width = untilize_width(cols, fp32_dest_acc)

    def column_block(b):
        return seq([
            evaluate(Intrin.CB_WAIT_FRONT, block.index, width, like=like),
            evaluate(Intrin.PACK_UNTILIZE_BLOCK, width, cols, block.index, staged.index, b, like=like),
            evaluate(Intrin.CB_POP_FRONT, block.index, width, like=like),
        ])

    def tile_row(_):
        return seq([
            evaluate(Intrin.CB_RESERVE_BACK, staged.index, cols, like=like),
            serial("b", cols // width, column_block, like=like),
            evaluate(Intrin.CB_PUSH_BACK, staged.index, cols, like=like),
        ])

    return seq([
        evaluate(Intrin.PACK_UNTILIZE_INIT, width, cols, block.index, staged.index, like=like),
        serial("r", rows, tile_row, like=like),
        evaluate(Intrin.PACK_UNTILIZE_UNINIT, staged.index, like=like),
    ])


def add_staging_cbs(pass_name: str, func, cbs, layouts, read_tensor, write_tensor, handoffs, taken, order, moved,
                    producers, consumers) -> dict[str, tuple[str, str]]:
    """A staging CB ``<block>_rm`` for each block read from or written to a row-major tensor: the
    reader fills it with rows that compute tilizes into the block; compute untilizes the block into
    it for the writer (a block the writer drains through a hand-off CB: that CB's). Pages are tiles'
    worth of rows in the tensor's format. A row vector of a rank-1 tensor is such a block of one row
    (its data in row 0 of each tile, as tilize puts the staging CB's first row), and so is a row vector
    moved from or to one row of a tensor of higher rank; other vectors are refused. Returns staging CB
    -> (its block, "tilize_from" | "untilize_to"). BuildTileDFGTT's graph in the making: ``cbs`` (name ->
    CBDesc), ``taken`` (the names in use), ``order``, ``moved`` (CB -> tensor), ``producers`` and ``consumers``
    (CB -> roles) get the staging CBs; ``read_tensor`` / ``write_tensor``: block -> (the tensor the reader fills
    it from / the writer copies it to, the statement); ``handoffs``: block -> its hand-off CB. Errors name
    ``pass_name``."""
    staged = {}
    ends = [(block, tensor, stmt, TILIZE_FROM) for block, (tensor, stmt) in read_tensor.items()]
    ends += [(handoffs.get(block, block), tensor, stmt, UNTILIZE_TO) for block, (tensor, stmt) in write_tensor.items()]
    for block, tensor, stmt, key in ends:
        layout = layouts.get(tensor)
        if layout is None or not layout.row_major:
            continue
        desc = cbs[block]
        region = as_region(stmt.value.args[0 if key == TILIZE_FROM else 1])
        one_row = all(const_int(e) == 1 for e in region.extents[:-1])  # of a rank-1 tensor, or one row of another
        if desc.vector and not (desc.vector == "row" and one_row):
            raise error(pass_name, func, stmt, f"the vector `{block}` is moved to or from the row-major tensor `{tensor}`",
                        "move whole blocks of 32x32 tiles to and from row-major tensors, or keep the tensor tiled")
        name = unique_name(f"{block}_rm", taken)
        taken.add(name)
        page = tile_bytes(BY_DATA_FORMAT[layout.data_format], TILE * TILE)  # a tile's worth of rows
        cbs[name] = CBDesc(name=name, index=-1, page_size=page, num_pages=desc.num_pages,
                           data_format=layout.data_format, block_pages=desc.block_pages, block_tiles=desc.block_tiles,
                           source=desc.source)
        order.append(name)
        moved[name] = tensor
        if key == TILIZE_FROM:
            producers[name], consumers[name] = {"reader"}, {"compute"}
            producers[block] = {"compute"}
        else:
            producers[name], consumers[name] = {"compute"}, {"writer"}
            consumers[block] = (consumers[block] - {"writer"}) | {"compute"}
        staged[name] = (block, key)
    return staged
