"""The kernels of a mesh's combine program (:class:`tilelang_tt.contract.mesh.MeshCollective`):
after every device's program has summed its own blocks into its partial copy of the summed tensor,
the collective's cores of each device add the partials over the fabric along the collective's line of
chips. The sources are the same on every device, core and kernel: the sizes are compile-time arguments,
the device's place on the line and the core's directions runtime arguments, both set by ``main.cpp``
(:mod:`tilelang_tt.codegen.host_collective`) from the plan (the arguments' order:
:func:`tilelang_tt.contract.mesh.combine_kernels`).

Per tile ``t`` (panel ``p = t * devices / tiles``, summed at line position ``owner = owners[p]``): at line
position ``pos`` the tile flows forward (``owner > pos``), ends here (``owner == pos``) or flows backward
(``owner < pos``); the core sending ``forward`` sums the first two, the core sending ``backward`` the
third (one core may do both). The reader reads the tile's operands into their own CBs: the previous
chip's sum (when the tile comes from the line's start), this chip's partial, the next chip's sum (when it
comes from the line's end), two tiles' reads in flight (a NOC transaction id each); compute adds them in
DST in that order (copy_tile of each, add_binary_tile, as the single-chip read-modify-write of split-K
does), so a tile's total is the same bits whichever core adds it; the writer writes the total at the owner, or sends the sum one hop on into the
neighbour's receive buffer: a 1-D fabric packet (``to_chip_unicast(1)``) with a fused NOC write +
semaphore increment (``to_noc_fused_unicast_write_atomic_inc``, hostdev/fabric_edm_packet_header.hpp) on
the core's ``WorkerToFabricEdmSender`` (tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp,
built from the runtime args ``append_fabric_connection_rt_args`` appended), the semaphore on the
neighbour's core that adds the tile next. The writer waits only for a free slot of the router's channel
(``wait_for_empty_write_slot``) and for the packet to leave L1 (``noc_async_writes_flushed``), so several
packets are in flight on a link. For ``all_reduce`` the owner then sends each total to every other chip's
copy with a line multicast (``to_chip_multicast``: one packet, written at each chip along the line as the
routers forward it, as ttnn's all-gather sends), towards the line's end from the forward core as it sums the
tile, towards its start from the backward core (reading the totals back once the forward core has written
them: ``total_written``); a chip where the line turns into the next row of the mesh sends the totals on (a
1-D packet goes straight on); each chip waits for the count of totals from either side.

The partial sums arriving at a core from one side come in the order the sending core goes through its
tiles (one sender, one fabric connection, the router delivering in order), which is the receiving core's
order too, so a count of arrivals (a semaphore per side) says which tile is there.
"""

from __future__ import annotations

# The semaphores' addresses (global semaphores: GlobalSemaphore::address(), the same L1 address on every
# combine core of every chip), the neighbours' fabric node ids and the panel each line position sums are
# runtime arguments; see tilelang_tt.codegen.host_collective for their order.

# The order the combine goes through its tiles, the same in the three kernels and on every chip. A semaphore
# counts the packets one neighbour's core sends it, so the sender and the receiver go through the tiles they
# share in the same order: every order below is one fixed order of panels (tiles ascending within each)
# that each core filters by its directions. A group of tiles read at once stays within a panel: the tiles of
# one panel all wait for the same neighbour, which never waits for this core's sums of that panel.
ORDER = """\
// The tiles of panel p: [first_tile(p), first_tile(p + 1)) (tile t is in panel t * devices / tiles).
template <uint32_t tiles, uint32_t devices>
constexpr uint32_t first_tile(uint32_t panel) {
    return (panel * tiles + devices - 1) / devices;
}

// f(owner, first, end) for each panel of tiles [first, end) this core sums, owner the line position summing
// it (panels_arg + owner holds its panel): step k the panel summed k chips before the line's end (forward)
// and the one k chips after its start (backward), the farthest first, as a neighbour sends them; then the
// panel this chip sums.
template <uint32_t tiles, uint32_t devices, typename F>
void for_each_summed(uint32_t pos, bool forward, bool backward, uint32_t panels_arg, F&& f) {
    const auto panel = [&](uint32_t owner) {
        const uint32_t p = get_arg_val<uint32_t>(panels_arg + owner);
        f(owner, first_tile<tiles, devices>(p), first_tile<tiles, devices>(p + 1));
    };
    for (uint32_t k = 0; k + 1 < devices; ++k) {
        if (forward && devices - 1 - k > pos) {
            panel(devices - 1 - k);
        }
        if (backward && k < pos) {
            panel(k);
        }
    }
    if (forward) {
        panel(pos);
    }
}
"""

COMBINE_READER = """\
// Generated by tilelang-tt: the combine reader of a sum across the chips of a mesh.
// Per tile this core sums: this chip's partial, the previous chip's sum (if the tile comes from the line's
// start) and the next chip's sum (if it comes from its end), each into its own CB, two tiles in flight.
#include <cstdint>
#include "api/dataflow/dataflow_api.h"
#include "api/tensor/tensor_accessor.h"

""" + ORDER + """
// A CB a data-movement kernel fills several pages ahead of handing them on: the k-th page not yet pushed is
// the FIFO's page (pushed + k) modulo its pages (tt-metal's CB write pointer wraps at the FIFO's end).
struct Ahead {
    uint32_t cb, pages, page_size, start = 0, pushed = 0, pending = 0;
    // The L1 address of the next page.
    uint32_t next() {
        cb_reserve_back(cb, pending + 1);
        if (pushed == 0 && pending == 0) {
            start = get_write_ptr(cb);  // the FIFO's first page
        }
        return start + (pushed + pending++) % pages * page_size;
    }
    // Hand on the group's first `count` pages.
    void push(uint32_t count) {
        cb_push_back(cb, count);
        pushed += count;
        pending -= count;
    }
};

void kernel_main() {
    constexpr uint32_t tiles = get_compile_time_arg_val(0);
    constexpr uint32_t devices = get_compile_time_arg_val(1);
    constexpr uint32_t page_size = get_compile_time_arg_val(2);
    constexpr uint32_t group = get_compile_time_arg_val(3);  // its CBs hold two groups of pages
    constexpr uint32_t cb_prev = get_compile_time_arg_val(4);
    constexpr uint32_t cb_own = get_compile_time_arg_val(5);
    constexpr uint32_t cb_next = get_compile_time_arg_val(6);
    constexpr auto out_args = TensorAccessorArgs<7>();
    constexpr auto received_args = TensorAccessorArgs<out_args.next_compile_time_args_offset()>();

    const uint32_t out_addr = get_arg_val<uint32_t>(0);
    const uint32_t received_addr = get_arg_val<uint32_t>(1);
    const uint32_t pos = get_arg_val<uint32_t>(2);
    const bool forward = get_arg_val<uint32_t>(3) != 0;
    const bool backward = get_arg_val<uint32_t>(4) != 0;
    // global semaphores: their L1 addresses
    volatile tt_l1_ptr uint32_t* partial_from_prev =
        reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_arg_val<uint32_t>(5));
    volatile tt_l1_ptr uint32_t* partial_from_next =
        reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_arg_val<uint32_t>(6));
    constexpr uint32_t panels = 7;  // panels[o]: the panel line position o sums

    const auto out = TensorAccessor(out_args, out_addr, page_size);
    const auto received = TensorAccessor(received_args, received_addr, page_size);
    Ahead prev_cb{cb_prev, 2 * group, page_size};
    Ahead own_cb{cb_own, 2 * group, page_size};
    Ahead next_cb{cb_next, 2 * group, page_size};
    uint32_t from_prev = 0;
    uint32_t from_next = 0;
    for_each_summed<tiles, devices>(pos, forward, backward, panels, [&](uint32_t owner, uint32_t first, uint32_t end) {
        const bool prev = pos > 0 && owner >= pos;
        const bool next = pos + 1 < devices && owner <= pos;
        // Two tiles' reads in flight, each tile's under its own transaction id: a tile is handed to compute
        // once the next one's reads are issued (its arrival awaited) and its own reads are in.
        const auto hand_on = [&](uint32_t id) {
            noc_async_read_barrier_with_trid(id);
            if (prev) {
                prev_cb.push(1);
            }
            own_cb.push(1);
            if (next) {
                next_cb.push(1);
            }
        };
        for (uint32_t t = first; t < end; ++t) {
            const uint32_t id = 1 + (t - first) % 2;
            noc_async_read_set_trid(id);
            noc_async_read_page(t, out, own_cb.next());
            if (prev) {
                noc_semaphore_wait_min(partial_from_prev, ++from_prev);
                noc_async_read_page(t, received, prev_cb.next());
            }
            if (next) {
                noc_semaphore_wait_min(partial_from_next, ++from_next);
                noc_async_read_page(tiles + t, received, next_cb.next());
            }
            if (t > first) {
                hand_on(3 - id);
            }
        }
        hand_on(1 + (end - 1 - first) % 2);
    });
    noc_async_read_set_trid(0);
}
"""

COMBINE_COMPUTE = """\
// Generated by tilelang-tt: the combine compute of a sum across the chips of a mesh.
// Per tile this core sums: (the previous chip's sum + this chip's partial) + the next chip's sum, in DST.
#include <cstdint>
#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/pack.h"
#include "api/compute/reg_api.h"
#include "api/compute/tile_move_copy.h"

""" + ORDER + """
// Copy the front page of cb into DST register dst.
void load(uint32_t cb, uint32_t dst) {
    cb_wait_front(cb, 1);
    copy_init(cb);
    copy_tile(cb, 0, dst);
    cb_pop_front(cb, 1);
}

void kernel_main() {
    constexpr uint32_t tiles = get_compile_time_arg_val(0);
    constexpr uint32_t devices = get_compile_time_arg_val(1);
    constexpr uint32_t cb_prev = get_compile_time_arg_val(2);
    constexpr uint32_t cb_own = get_compile_time_arg_val(3);
    constexpr uint32_t cb_next = get_compile_time_arg_val(4);
    constexpr uint32_t cb_out = get_compile_time_arg_val(5);

    const uint32_t pos = get_arg_val<uint32_t>(0);
    const bool forward = get_arg_val<uint32_t>(1) != 0;
    const bool backward = get_arg_val<uint32_t>(2) != 0;
    constexpr uint32_t panels = 3;

    compute_kernel_hw_startup(cb_own, cb_out);
    for_each_summed<tiles, devices>(pos, forward, backward, panels, [&](uint32_t owner, uint32_t first, uint32_t end) {
        for (uint32_t t = first; t < end; ++t) {
            tile_regs_acquire();
            if (pos > 0 && owner >= pos) {
                load(cb_prev, 0);
                load(cb_own, 1);
                add_binary_tile_init();
                add_binary_tile(0, 1, 0);
            } else {
                load(cb_own, 0);
            }
            if (pos + 1 < devices && owner <= pos) {
                load(cb_next, 1);
                add_binary_tile_init();
                add_binary_tile(0, 1, 0);
            }
            tile_regs_commit();
            cb_reserve_back(cb_out, 1);
            tile_regs_wait();
            pack_tile(0, cb_out);
            tile_regs_release();
            cb_push_back(cb_out, 1);
        }
    });
}
"""

COMBINE_WRITER = """\
// Generated by tilelang-tt: the combine writer of a sum across the chips of a mesh.
// Per tile this core sums: the owner writes the total into its copy; another chip sends its sum one hop
// towards the owner, into the neighbour's receive buffer (forward: pages [0, tiles), backward:
// [tiles, 2 * tiles)), bumping the semaphore of the neighbour's core that adds it next. An all-reduce sends
// each total from its owner to every other chip: a line multicast to the chips after it (the forward core)
// and one to the chips before it (the backward core), sent on where the line turns.
#include <cstdint>
#include "api/dataflow/dataflow_api.h"
#include "api/tensor/tensor_accessor.h"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"
#include "tt_metal/fabric/hw/inc/packet_header_pool.h"
#include "hostdev/fabric_edm_packet_header.hpp"

""" + ORDER + """
// Send the page at L1 address l1 along the connection `link` to the `chips` chips after this one (the next
// chip alone, or a line multicast: to_chip_multicast, each chip on the way writing it): written at dst there,
// then the semaphore sem there incremented (a fused write + atomic increment packet). Waits for a free slot of
// the router's channel and for the payload and header to leave L1, not for the packet to arrive.
void send(tt::tt_fabric::WorkerToFabricEdmSender& link, volatile tt_l1_ptr PACKET_HEADER_TYPE* header,
          uint32_t l1, uint64_t dst, uint64_t sem, uint32_t size, uint32_t chips) {
    if (chips == 1) {
        header->to_chip_unicast(1);
    } else {
        header->to_chip_multicast(tt::tt_fabric::MulticastRoutingCommandHeader{1, static_cast<uint8_t>(chips)});
    }
    header->to_noc_fused_unicast_write_atomic_inc(
        tt::tt_fabric::NocUnicastAtomicIncFusedCommandHeader{dst, sem, 1, true}, size);
    link.wait_for_empty_write_slot();
    link.send_payload_without_header_non_blocking_from_address(l1, size);
    link.send_payload_flush_non_blocking_from_address((uint32_t)(uintptr_t)header, sizeof(PACKET_HEADER_TYPE));
    noc_async_writes_flushed();
}

// The line runs straight for `row` chips at a time (a row of the mesh; line_of snakes from one row into the
// next), and a 1-D packet goes on in its router's direction only: a multicast from line position p reaches the
// chips to the end of its row after it (one chip, around the turn, from a row's end) and to its row's start
// before it (one chip from a row's start). A chip at a turn sends every total from before it on (forward),
// and from after it on (backward).
template <uint32_t row, uint32_t devices>
constexpr bool at_turn(uint32_t p) {
    return p % row == 0 || p % row == row - 1;
}
template <uint32_t row, uint32_t devices>
constexpr uint32_t reach_after(uint32_t p) {
    const uint32_t end = p / row * row + row - 1 < devices - 1 ? p / row * row + row - 1 : devices - 1;
    return p % row == row - 1 ? 1 : end - p;
}
template <uint32_t row, uint32_t devices>
constexpr uint32_t reach_before(uint32_t p) {
    return p % row == 0 ? 1 : p - p / row * row;
}

// Read the tiles [first, end) of out a group per barrier into stage and send each along `link` to `chips`
// chips, its semaphore sem.
template <typename Accessor>
void send_tiles(tt::tt_fabric::WorkerToFabricEdmSender& link, volatile tt_l1_ptr PACKET_HEADER_TYPE* header,
                const Accessor& out, uint32_t first, uint32_t end, uint32_t stage, uint32_t group,
                uint32_t page_size, uint64_t sem, uint32_t chips) {
    for (uint32_t t0 = first; t0 < end; t0 += group) {
        const uint32_t count = end - t0 < group ? end - t0 : group;
        for (uint32_t i = 0; i < count; ++i) {
            noc_async_read_page(t0 + i, out, stage + i * page_size);
        }
        noc_async_read_barrier();
        for (uint32_t i = 0; i < count; ++i) {
            send(link, header, stage + i * page_size, out.get_noc_addr(t0 + i), sem, page_size, chips);
        }
    }
}

void kernel_main() {
    constexpr uint32_t tiles = get_compile_time_arg_val(0);
    constexpr uint32_t devices = get_compile_time_arg_val(1);
    constexpr uint32_t page_size = get_compile_time_arg_val(2);
    constexpr uint32_t group = get_compile_time_arg_val(3);  // totals read back per barrier
    constexpr uint32_t row = get_compile_time_arg_val(4);    // chips per straight run of the line
    constexpr uint32_t cb_out = get_compile_time_arg_val(5);
    constexpr uint32_t cb_stage = get_compile_time_arg_val(6);
    constexpr bool all_reduce = get_compile_time_arg_val(7) != 0;
    constexpr auto out_args = TensorAccessorArgs<8>();
    constexpr auto received_args = TensorAccessorArgs<out_args.next_compile_time_args_offset()>();

    const uint32_t out_addr = get_arg_val<uint32_t>(0);
    const uint32_t received_addr = get_arg_val<uint32_t>(1);
    const uint32_t pos = get_arg_val<uint32_t>(2);
    const bool forward = get_arg_val<uint32_t>(3) != 0;
    const bool backward = get_arg_val<uint32_t>(4) != 0;
    // the global semaphores' L1 addresses (the same on every combine core of every chip)
    const uint32_t partial_from_prev = get_arg_val<uint32_t>(5);
    const uint32_t partial_from_next = get_arg_val<uint32_t>(6);
    const uint32_t total_from_prev = get_arg_val<uint32_t>(7);
    const uint32_t total_from_next = get_arg_val<uint32_t>(8);
    const uint32_t total_written = get_arg_val<uint32_t>(9);
    // the NOC coordinates of the cores sending forward and backward (the same on every chip)
    const uint32_t forward_x = get_arg_val<uint32_t>(10);
    const uint32_t forward_y = get_arg_val<uint32_t>(11);
    const uint32_t backward_x = get_arg_val<uint32_t>(12);
    const uint32_t backward_y = get_arg_val<uint32_t>(13);
    constexpr uint32_t panels = 14;
    size_t arg = panels + devices;  // then this core's fabric connections: to the previous chip, to the next

    const bool to_prev_open = backward && pos > 0;
    const bool to_next_open = forward && pos + 1 < devices;
    tt::tt_fabric::WorkerToFabricEdmSender to_prev;
    tt::tt_fabric::WorkerToFabricEdmSender to_next;
    if (to_prev_open) {
        to_prev = tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(arg);
        to_prev.open();
    }
    if (to_next_open) {
        to_next = tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(arg);
        to_next.open();
    }
    volatile tt_l1_ptr PACKET_HEADER_TYPE* header = PacketHeaderPool::allocate_header();

    const auto out = TensorAccessor(out_args, out_addr, page_size);
    const auto received = TensorAccessor(received_args, received_addr, page_size);
    const uint64_t total_forward_sem = get_noc_addr(forward_x, forward_y, total_from_prev);
    const uint64_t total_backward_sem = get_noc_addr(backward_x, backward_y, total_from_next);
    const uint32_t after = reach_after<row, devices>(pos);  // the chips a multicast from here reaches
    const uint32_t before = reach_before<row, devices>(pos);
    uint32_t written = 0;  // totals this chip sums, written into its copy
    for_each_summed<tiles, devices>(pos, forward, backward, panels, [&](uint32_t owner, uint32_t first, uint32_t end) {
        // the previous chip's forward core adds a tile sent back if that chip sums it, else its backward core
        const bool owned_by_prev = owner + 1 == pos;
        const uint64_t back_sem = get_noc_addr(owned_by_prev ? forward_x : backward_x,
                                               owned_by_prev ? forward_y : backward_y, partial_from_next);
        for (uint32_t t = first; t < end; ++t) {
            cb_wait_front(cb_out, 1);
            const uint32_t l1 = get_read_ptr(cb_out);
            if (owner == pos) {  // the total: into this chip's copy and, all-reduced, every other chip's
                noc_async_write_page(t, out, l1);
                if (all_reduce && to_next_open) {
                    send(to_next, header, l1, out.get_noc_addr(t), total_forward_sem, page_size, after);
                }
                if (all_reduce && to_prev_open) {
                    send(to_prev, header, l1, out.get_noc_addr(t), total_backward_sem, page_size, before);
                }
                noc_async_writes_flushed();
                ++written;
            } else if (owner > pos) {
                send(to_next, header, l1, received.get_noc_addr(t),
                     get_noc_addr(forward_x, forward_y, partial_from_prev), page_size, 1);
            } else {
                send(to_prev, header, l1, received.get_noc_addr(tiles + t), back_sem, page_size, 1);
            }
            cb_pop_front(cb_out, 1);
        }
    });

    if constexpr (all_reduce) {
        // The totals this chip sums go to the chips before it from the backward core: once the forward core
        // has written them, which it tells the backward core; it reads them back a group per barrier.
        if (forward && !backward && pos > 0) {
            noc_async_write_barrier();
            noc_semaphore_inc(get_noc_addr(backward_x, backward_y, total_written), written);
        }
        cb_reserve_back(cb_stage, group);
        const uint32_t stage = get_write_ptr(cb_stage);
        const auto panel_first = [&](uint32_t o) {
            return first_tile<tiles, devices>(get_arg_val<uint32_t>(panels + o));
        };
        const auto panel_end = [&](uint32_t o) {
            return first_tile<tiles, devices>(get_arg_val<uint32_t>(panels + o) + 1);
        };
        if (to_prev_open && !forward) {
            noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(total_written),
                                   panel_end(pos) - panel_first(pos));
            send_tiles(to_prev, header, out, panel_first(pos), panel_end(pos), stage, group, page_size,
                       total_backward_sem, before);
        }
        // Every other chip's totals arrive, written into this chip's copy: from the line's start at the forward
        // core, from its end at the backward core; a chip at a turn of the line sends them on.
        uint32_t before_tiles = 0;
        for (uint32_t o = 0; o < pos; ++o) {
            before_tiles += panel_end(o) - panel_first(o);
        }
        if (forward) {
            noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(total_from_prev), before_tiles);
            if (to_next_open && at_turn<row, devices>(pos)) {
                for (uint32_t o = 0; o < pos; ++o) {
                    send_tiles(to_next, header, out, panel_first(o), panel_end(o), stage, group, page_size,
                               total_forward_sem, after);
                }
            }
        }
        if (backward) {
            const uint32_t after_tiles = tiles - before_tiles - (panel_end(pos) - panel_first(pos));
            noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(total_from_next), after_tiles);
            if (to_prev_open && at_turn<row, devices>(pos)) {
                for (uint32_t o = pos + 1; o < devices; ++o) {
                    send_tiles(to_prev, header, out, panel_first(o), panel_end(o), stage, group, page_size,
                               total_backward_sem, before);
                }
            }
        }
    }
    if (to_prev_open) {
        to_prev.close();
    }
    if (to_next_open) {
        to_next.close();
    }
    noc_async_write_barrier();
}
"""

COMBINE_SOURCES = {"combine_reader.cpp": COMBINE_READER, "combine_compute.cpp": COMBINE_COMPUTE,
                   "combine_writer.cpp": COMBINE_WRITER}
