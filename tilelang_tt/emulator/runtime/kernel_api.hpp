// Kernel-side entry points of the device model. The tt-metal API headers under include/api/
// are thin inline wrappers over these; each takes the caller's source location so protocol
// errors can name the kernel source line.
//
// Addressing seen by kernels:
//  * a local L1 address (uint32_t) is the host address of that byte of the core's L1 array;
//    the arrays are mapped below 2 GiB so the address fits in 32 bits and kernels may cast
//    it to a pointer, as on hardware.
//  * a NOC address (uint64_t) = ((y << 6 | x) << 36) | offset for unicast, where (x, y) are
//    NOC coordinates (Device::worker_noc_coord for workers, (bank, 0) for DRAM bank `bank`)
//    and offset is the L1 offset on the target core (or the byte address inside the DRAM
//    bank). Multicast rectangles use the tt-metal wormhole encoding
//    (x_end | y_end << 6 | x_start << 12 | y_start << 18) << 36.
#pragma once

#include <cstdint>
#include <source_location>

#include "device_types.hpp"

#define FORCE_INLINE inline __attribute__((always_inline))
#define ALWI inline __attribute__((always_inline))
#define tt_l1_ptr
#define tt_reg_ptr

namespace emu::k {

using Loc = std::source_location;

// ---- arguments ----
uint32_t arg(uint32_t idx, bool common, Loc loc);
// The address of that arg in the launch's copy of the args (get_arg_addr / get_common_arg_addr).
uintptr_t arg_addr(uint32_t idx, bool common, Loc loc);

// Protocol error found by a check in an API header: names the calling kernel and `loc`. The
// printf-style form formats its message (kernel headers include no <string>: see device_types.hpp).
[[noreturn]] void api_error(const char* what, Loc loc);
[[noreturn]] void api_errorf(Loc loc, const char* format, ...) __attribute__((format(printf, 2, 3)));

// ---- circular buffers (any kernel role) ----
void cb_reserve_back(int32_t cb, int32_t n, Loc loc);
void cb_push_back(int32_t cb, int32_t n, Loc loc);
void cb_wait_front(int32_t cb, int32_t n, Loc loc);
void cb_pop_front(int32_t cb, int32_t n, Loc loc);
bool cb_pages_reservable_at_back(int32_t cb, int32_t n, Loc loc);
bool cb_pages_available_at_front(int32_t cb, int32_t n, Loc loc);
uint32_t get_write_ptr(uint32_t cb, Loc loc);
uint32_t get_read_ptr(uint32_t cb, Loc loc);
// The calling RISC loads (store false) or stores one word of its core's L1 (CoreLocalMem's elements): its time.
void risc_l1_access(bool store, Loc loc);
uint32_t cb_page_size(uint32_t cb, Loc loc);
DataFormat cb_format(uint32_t cb, Loc loc);
// The CB's FIFO as tt-metal's LocalCBInterface holds it on a data movement core (bytes; the pointers
// are L1 addresses, limit one past the FIFO's end), read without a protocol check (`fn` names the call).
struct CbState {
  uint32_t size, limit, page_size, num_pages, rd_ptr, wr_ptr;
};
CbState cb_state(uint32_t cb, const char* fn, Loc loc);
// A write to a field of the CB's LocalCBInterface (bytes): the read or write pointer moves to the FIFO's page
// at that L1 address; the other fields may not be written.
enum class CbField : uint8_t { Size, Limit, PageSize, NumPages, RdPtr, WrPtr };
void cb_set_field(uint32_t cb, CbField field, uint32_t value, Loc loc);

// ---- NOC ----
uint32_t num_dram_banks();
uint32_t dram_alignment();
uint64_t noc_unicast_addr(uint32_t x, uint32_t y, uint32_t addr);
// The calling kernel's core in NOC `noc`'s coordinates (tt-metal's my_x[noc] / my_y[noc]): the same on both
// NOCs, the virtual coordinates the host gives (Device::worker_noc_coord; device.cpp says why); a NOC index
// past NUM_NOCS = 2 is an error.
uint32_t my_noc_x(uint32_t noc, Loc loc);
uint32_t my_noc_y(uint32_t noc, Loc loc);
uint64_t noc_multicast_addr(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, uint32_t addr);
uint64_t noc_self_addr(uint32_t addr, Loc loc);
// L1 address of the calling core's zero region (tt-metal's MEM_ZEROS_BASE, MEM_ZEROS_SIZE bytes).
uint32_t mem_zeros_base(Loc loc);
uint64_t noc_dram_bank_addr(uint32_t bank, uint32_t addr);
// Page `page` of an interleaved DRAM buffer at `base` with page_size (aligned to DRAM alignment).
uint64_t noc_dram_page_addr(uint32_t base, uint32_t page_size, uint32_t page, uint32_t offset);
void noc_read(uint64_t src, uint32_t dst_l1, uint32_t size, Loc loc);
void noc_write(uint32_t src_l1, uint64_t dst, uint32_t size, Loc loc);
// `linked`: the multicast's path stays reserved for the thread's next multicast (timing.hpp). `noc`: the NOC the
// call names, whose data flow the rectangle must follow (dataflow.cpp, mcast_targets).
void noc_write_multicast(uint32_t src_l1, uint64_t dst_mcast, uint32_t size, uint32_t num_dests, bool loopback,
                         bool linked, uint8_t noc, Loc loc);
void noc_read_barrier(Loc loc);
void noc_write_barrier(Loc loc);
void noc_writes_flushed(Loc loc);
// Transaction ids (internal.hpp NocIds): set the read or write packet tag; wait for the reads (writes acked, writes
// sent) that carried `trid`.
void noc_set_trid(bool write, uint32_t trid, Loc loc);
void noc_read_barrier_trid(uint32_t trid, Loc loc);
void noc_write_barrier_trid(uint32_t trid, Loc loc);
void noc_writes_flushed_trid(uint32_t trid, Loc loc);

// ---- fabric (runtime/fabric.cpp; headers under tt_metal/fabric/hw/inc and hostdev/) ----
// What a packet header holds, in the emulator's layout: the first bytes of every packet header type
// (hostdev/fabric_edm_packet_header.hpp), which the runtime reads from L1 when the header is sent.
enum FabricRoute : uint8_t { kRouteNone = 0, kRouteHops = 1, kRouteDevice1D = 2, kRouteDevice2D = 3, kRouteMulticast = 4 };
// NocSendType (hostdev/fabric_edm_packet_header.hpp) values the emulator delivers.
enum : uint8_t { kNocUnicastWrite = 0, kNocUnicastAtomicInc = 2, kNocFusedUnicastAtomicInc = 3 };
struct FabricPacket {
  uint64_t noc_address;            // the write's destination, or the atomic increment's semaphore
  uint64_t semaphore_noc_address;  // a fused write + increment: the semaphore
  uint32_t val;                    // the increment
  uint16_t payload_size_bytes;
  uint8_t noc_send_type;
  uint8_t flush;
  uint8_t route_kind;  // FabricRoute
  uint8_t reserved;
  uint16_t hops;        // kRouteHops: chips to travel in the connection's direction; kRouteMulticast: to the first
  uint16_t dst_dev_id;  // kRouteDevice*: the destination chip (its FabricNodeId chip id)
  uint16_t dst_mesh_id;
  uint16_t range;  // kRouteMulticast: the chips written, from `hops` on along the connection's direction
};
// Bytes of a packet header on a link (LowLatencyPacketHeader: 64 B, fabric_edm_packet_header.hpp:1206), and the
// largest payload one packet carries. ASSUMPTION: 4096 B, a tile of bfloat16 and more (0.81.1 sizes the router's
// channel buffers at run time: get_tt_fabric_max_payload_size_bytes).
constexpr uint32_t kPacketHeaderBytes = 64;
constexpr uint32_t kFabricMaxPayload = 4096;
// PacketHeaderPool::allocate_header: the L1 address of `size` bytes of the calling RISC-V's pool.
uint32_t packet_header_alloc(uint32_t size, Loc loc);
// WorkerToFabricEdmSender::build_from_args: checks the connection (the ethernet channel of its runtime args).
void fabric_open(uint32_t channel, Loc loc);
// WorkerToFabricEdmSender::open (open) and close: the connection to the router's sender channel, which takes one
// worker at a time.
void fabric_connect(uint32_t channel, bool open, Loc loc);
// wait_for_empty_write_slot: waits until the connection's router has a free buffer slot.
void fabric_wait_slot(uint32_t channel, Loc loc);
// Sends the packet whose header is at `header_l1` with the `payload_size` bytes at `payload_l1` over the
// connection: the route, the links' time, and the destination router's write and increment.
void fabric_send(uint32_t channel, uint32_t header_l1, uint32_t payload_l1, uint32_t payload_size, Loc loc);

// ---- semaphores ----
uint32_t semaphore_addr(uint32_t id, Loc loc);
void semaphore_wait(volatile uint32_t* sem, uint32_t val, bool at_least, Loc loc);
void semaphore_set(volatile uint32_t* sem, uint32_t val, Loc loc);
void semaphore_inc(uint64_t dst, uint32_t incr, Loc loc);
void semaphore_set_multicast(uint32_t src_l1, uint64_t dst_mcast, uint32_t num_dests, bool loopback, bool linked,
                             uint8_t noc, Loc loc);
void semaphore_set_remote(uint32_t src_l1, uint64_t dst, Loc loc);
// Atomically adds `incr` to the word at the multicast rectangle's address on each of its cores but the caller
// (noc_semaphore_inc_multicast: the sender is never a destination).
void semaphore_inc_multicast(uint64_t dst_mcast, uint32_t incr, uint32_t num_dests, uint8_t noc, Loc loc);

// ---- mailboxes between the core's RISC-Vs (tt-llk ckernel.h) ----
// Sends `data` to thread `thread` (ckernel_defs.h ThreadId: 0 BRISC, 1 unpack, 2 math, 3 pack) of the calling
// kernel's core; reads block until a message from `thread` to the caller arrives and take the oldest.
void mailbox_write(uint8_t thread, uint32_t data, Loc loc);
uint32_t mailbox_read(uint8_t thread, Loc loc);

// ---- compute: DST register file ----
void tile_regs_acquire(Loc loc);
void tile_regs_commit(Loc loc);
void tile_regs_wait(Loc loc);
void tile_regs_release(Loc loc);
// Single-call forms: between acquire_dst and release_dst both math and pack own DST.
void acquire_dst(Loc loc);
void release_dst(Loc loc);
// The unpackers' and the packer's data formats (engine_formats.cpp): compute_kernel_hw_startup configures SrcA and
// SrcB from icb0 and icb1 (swapped when `reverse`: SrcOrder::Reverse) and the packer from ocb; the reconfig calls
// (`fn`) one source (SrcB when `srcb`) or the packer from `new_cb`, only where its formats differ from `old_cb`'s
// when old_cb >= 0 (the (old, new) overloads).
void hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb, bool reverse, Loc loc);
void reconfig_source(bool srcb, int old_cb, uint32_t new_cb, const char* fn, Loc loc);
void reconfig_pack(int old_cb, uint32_t new_cb, const char* fn, Loc loc);
// The 32-bit word `offset` of tile `tile` of the CB's waited pages, the same on the three TRISCs (the unpacker reads
// it and hands it to math and pack through their mailboxes: api/compute/cb_api.h read_tile_value).
uint32_t read_tile_value(uint32_t cb, uint32_t tile, uint32_t offset, Loc loc);

// Unpack/math configuration recorded by the *_init calls.
enum class BinaryOp : uint8_t { Add, Sub, Mul };
enum class Bcast : uint8_t { None, Row, Col, Scalar };
enum class Pool : uint8_t { Sum, Avg, Max };
enum class RDim : uint8_t { Row, Col, Scalar };
void binary_init(BinaryOp op, bool acc_to_dest, Loc loc);
// matmul_init (`fn`) configures the 1x1x1 block; matmul_block_init the ct_dim x rt_dim output block over kt_dim.
void matmul_init(const char* fn, uint32_t transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim, Loc loc);

// FPU ops: operands read from CB tiles (front of the CB, index relative to the read pointer).
// A Row broadcast broadcasts row `b_row` (< 32) of the second operand's tile (bcast.h's bcast_row_idx).
void binary_tiles(BinaryOp op, Bcast bcast, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst,
                  uint32_t b_row, Loc loc);
// dest-reuse: `dst` is one operand. dest_is_a: DST is the left operand (DEST_TO_SRCA).
void binary_reuse_dest(BinaryOp op, bool dest_is_a, uint32_t cb, uint32_t t, uint32_t dst, Loc loc);
void matmul_tiles(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst, Loc loc);
// One K step of an rt_dim x ct_dim block of the init's reuse kind: DST[dst + r*ct_dim + c] +=
// A[t0 + r*kt_dim] x B[t1 + c] (kt_dim the init's when rt_dim > ct_dim; B's tiles transposed when the
// init's transpose is set).
void matmul_block(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst, uint32_t transpose,
                  uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim, Loc loc);
void copy_tile(uint32_t cb, uint32_t t, uint32_t dst, Loc loc);
void unary_bcast(Bcast bcast, uint32_t cb, uint32_t t, uint32_t dst, Loc loc);
void reduce_tile(Pool pool, RDim dim, uint32_t cb, uint32_t cb_scaler, uint32_t t, uint32_t t_scaler, uint32_t dst,
                 Loc loc);
// reduce_init's packer edge masks: until reduce_uninit (or compute_kernel_hw_startup), pack_tile writes the
// datums outside `dim`'s reduction result as zero.
void reduce_init(RDim dim, Loc loc);
void reduce_uninit(Loc loc);
void transpose_tile(uint32_t cb, uint32_t t, uint32_t dst, Loc loc);
void pack_tile(uint32_t dst, uint32_t cb, bool out_of_order, uint32_t out_index, Loc loc);
void pack_reconfig_l1_acc(uint32_t l1_acc_en, Loc loc);

// Layout conversions, row-major CB data <-> tiles (tilize.h, untilize.h, pack_untilize.h; tilize.cpp).
// The inits put the unpacker / packer in a mode the other tile ops may not run in until the uninit.
void tilize_init(uint32_t icb, uint32_t block, uint32_t ocb, const char* fn, Loc loc);
void tilize_uninit(uint32_t icb, uint32_t ocb, Loc loc);
void tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index, uint32_t output_tile_index,
                  Loc loc);
void untilize_init(uint32_t icb, Loc loc);
void untilize_uninit(uint32_t icb, Loc loc);
void untilize_block(uint32_t block_ct_dim, uint32_t icb, uint32_t full_ct_dim, uint32_t ocb, Loc loc);
void pack_untilize_init(uint32_t block_ct_dim, uint32_t full_ct_dim, uint32_t ocb, const char* fn, Loc loc);
void pack_untilize_uninit(uint32_t ocb, Loc loc);
void pack_untilize_block(uint32_t block_ct_dim, uint32_t full_ct_dim, uint32_t icb, uint32_t block_rt_dim,
                         uint32_t ocb, uint32_t block_c_index, Loc loc);
// DST tiles dst_offset + r * block_ct_dim + c (tile row r < block_rt_dim, c < block_ct_dim).
void pack_untilize_dest(uint32_t block_ct_dim, uint32_t full_ct_dim, uint32_t ocb, uint32_t block_rt_dim,
                        uint32_t block_c_index, uint32_t dst_offset, Loc loc);

// SFPU ops on DST tiles; the tables of their arithmetic live in sfpu.cpp (add an enumerator + a table row).
enum class Unary : uint8_t {
  Exp, Log, Sqrt, Rsqrt, Recip, Relu, Gelu, Sigmoid, Tanh, Abs, Negative, Square, Silu, Sin, Cos,
  Floor, Ceil, Sign, Erf, Log1p, Expm1, Exp2, Identity, Tan, Trunc,
  ExpFast,    // exp_tile<approx = true> (ClampToNegative): the fast approximation
  RecipFast,  // recip_tile<.., ReciprocalApproxMode::Approximate>: one Newton step from the quadratic seed
  // sqrt_tile / rsqrt_tile: Sqrt and Rsqrt are the 23-bit algorithm, *Approx the 10-bit one (APPROX), *Fast without
  // the edge handling (sqrt_tile<FAST_APPROX = true>, RsqrtMode::Fast)
  SqrtApprox, RsqrtApprox, SqrtFast, RsqrtFast, SqrtApproxFast, RsqrtApproxFast,
  GeluLut,  // gelu_tile<fast_and_approx = true>: x/2 plus a 6-segment linear fit of gelu(x) - x/2
  TanhLut,     // tanh_tile<fast_and_approx = true>: a 6-segment linear fit
  SigmoidLut,  // sigmoid_tile<.., fast_and_approx = true>: a 3-segment linear fit
  ErfFast,     // erf_tile<fast_and_approx = true>: Erf's rational with a one-step reciprocal (Erf: two steps)
  Fp32ToFp16b,  // typecast_tile<Float32, Float16_b>: rounded to bfloat16 (nearest, ties to even), kept as fp32
  Int32ToFp32,  // typecast_tile<Int32, Float32>: the int32 in DST as the nearest float32 (ties to even)
  IsNan, IsInf,  // isnan_tile / isinf_tile (isinf_isnan.h): 1.0 where the value is a NaN / an infinity, else 0.0
  Count
};
enum class SfpuBinary : uint8_t { Add, Sub, Mul, Div, Max, Min, Rsub, Pow, LogBase, Round, Fmod, Count };
void sfpu_unary(Unary op, uint32_t dst, Loc loc);
// The op on the faces of DST[dst] bit f of `faces` selects (face f: rows 16 * (f / 2), columns 16 * (f % 2), 16 x 16),
// charged its share of the tile's cost: a VectorMode other than RC (api/emu/sfpu.h faces_of).
void sfpu_unary_faces(Unary op, uint32_t dst, uint8_t faces, Loc loc);
// recip_tile<dest_acc, approximation> on the faces of `faces`: its LLK's sequence for the device's arch, with
// `fp32_dest` its dest_acc (ReciprocalDestAcc::FP32), which may differ from the kernel's DST_ACCUM_MODE.
void sfpu_recip(uint32_t dst, uint8_t faces, bool approximate, bool fp32_dest, Loc loc);
void sfpu_binary(SfpuBinary op, uint32_t dst0, uint32_t dst1, uint32_t odst, Loc loc);
// The op on the faces of `faces` (bit f: face f; 0b1111 the whole tile, VectorMode::C's 0b0101 the left faces,
// VectorMode::R's 0b0011 the top ones: llk_math_eltwise_sfpu_common.h _llk_math_eltwise_sfpu_apply_vector_mode_),
// charged that share of the whole tile's cycles; the other faces of `odst` keep what they hold.
void sfpu_binary_faces(SfpuBinary op, uint32_t dst0, uint32_t dst1, uint32_t odst, uint8_t faces, Loc loc);
// DST[dst] = op(DST[dst] * scale) on column 0 of the tile's 32 rows, the column a row statistic lives in: ttnn's
// SDPA "first column" SFPU sequences (ckernel_sfpu_sdpa.h calculate_exponential_first_column,
// calculate_recip_first_column: VectorMode::C, 4 SFPU iterations per face with dst_reg += 2), charged those
// sequences' cycles (costs.cpp, first_column_cost); `fn` names the API call. The other datums the LLK touches
// hold nothing a kernel reads (its bcast_cols consumers read column 0).
// `faces`: bit f for face f of the tile (0b0101: VectorMode::C's two; one bit: a raw call on the face DST's row
// counter points at, as compute_streaming.hpp's recip_tile_first_column_wh_idst0_direct makes). With `on_pack` the
// pack TRISC drives the SFPU on the DST half it holds (compute_streaming.hpp:698, PACK(exp_tile_first_column)), as
// sfpu_unary_ex's.
void sfpu_unary_first_column(Unary op, uint32_t dst, uint8_t faces, float scale, bool on_pack, const char* fn,
                             Loc loc);

// The SFPU row reduction of float tiles in DST (tt-metal 0.81.1 api/compute/compute_kernel_api.h
// sfpu_reduce<pool, Float32 | Float16_b, REDUCE_ROW>; Wormhole llk_sfpu/ckernel_sfpu_reduce.h
// perform_reduce_row_sum_avg / perform_reduce_row_max_min) over the rt_dim x ct_dim block of DST tiles from `dst`
// (tile dst + i * ct_dim + j): each row's result lands in the even columns 0, 2, .., 14 of the row of the first
// tile of its tile row (column 0 is the one its consumers read); the even columns of the left faces of the other
// tiles of the block hold each tile's own partial result; every other datum is unchanged.
enum class SfpuReduce : uint8_t { Sum, Max, Min };
void sfpu_reduce_row(SfpuReduce pool, uint32_t dst, uint32_t ct_dim, uint32_t rt_dim, Loc loc);

// The Tensix semaphores between a core's TRISCs (tt-llk ckernel.h:265-338, t6_semaphore_*; ckernel_structs.h
// semaphore): SEMINIT sets the value to min and the wait-on-max bound to max; SEMPOST adds a token (the value capped
// at 15); SEMGET takes one (floored at 0); SEMWAIT stalls the issuing TRISC while the value is 0 (or at max). The
// emulator runs the three TRISCs' code in program order on one thread: a token is the time its poster's clock
// issued it, and a waiting TRISC's clock moves to the time of the token it waits for (timing.hpp). `who` is the TRISC
// whose code issues the instruction (the kernel's UNPACK / MATH / PACK; Trisc::None outside them: an error).
enum class Trisc : uint8_t { None, Unpack, Math, Pack };
void t6_semaphore_init(Trisc who, uint8_t index, uint8_t min_value, uint8_t max_value, Loc loc);
void t6_semaphore_post(Trisc who, uint8_t index, Loc loc);
void t6_semaphore_get(Trisc who, uint8_t index, Loc loc);
void t6_semaphore_wait(Trisc who, uint8_t index, bool on_max, Loc loc);
// The TRISC whose code runs now: set for the length of a full expression by the compute API's UNPACK(...),
// MATH(...) and PACK(...) (api/compute/common.h).
inline thread_local Trisc current_trisc = Trisc::None;
struct OnTrisc {
  Trisc prev;
  explicit OnTrisc(Trisc who) : prev(current_trisc) { current_trisc = who; }
  ~OnTrisc() { current_trisc = prev; }
  OnTrisc(const OnTrisc&) = delete;
  OnTrisc& operator=(const OnTrisc&) = delete;
};
// DST[dst] = op(DST[dst] * scale) on the whole tile, charged `cycles` (0: the op's table cost); `fn` names the API
// call. With `on_pack` the pack TRISC runs it (exp_packthread_tile: the SFPU driven from the pack thread on the DST
// half it holds between tile_regs_wait and tile_regs_release), charged to the packer's clock; else math does, on
// the half it holds.
void sfpu_unary_ex(Unary op, uint32_t dst, float scale, uint64_t cycles, bool on_pack, const char* fn, Loc loc);
// The cycles of exp_tile<approx = true, .., InputClamping::None, iterations = 32> on a whole tile (costs.cpp).
uint64_t exp_approx_unclamped_tile_cycles();
// The packer's ReLU (pack_relu_config, llk_pack_relu_config): with `zero`, pack_tile packs max(x, 0).
void pack_relu(bool zero, Loc loc);
void sfpu_scalar(SfpuBinary op, uint32_t dst, float scalar, Loc loc);
void fill_tile(uint32_t dst, float value, Loc loc);
// where_tile<format>(cond, a, b, out): format is the kernel-side DataFormat id of DST's tiles.
void where_tile(uint8_t format, uint32_t cond, uint32_t a, uint32_t b, uint32_t out, Loc loc);
enum class Compare : uint8_t { Eq, Ne, Gt, Ge, Lt, Le };
// DST[dst] = (DST[dst] <op> value) ? 1.0 : 0.0, element by element; `fn` names the API call. `against_zero`: the
// <op>z_tile form (value 0), whose LLK sequence differs from unary_<op>_tile's (costs.cpp).
void compare_tile(Compare op, uint32_t dst, float value, bool against_zero, const char* fn, Loc loc);
// DST[dst] = the float whose bits are `bits` (fill_tile_bitcast), rounded to bfloat16 unless fp32_dest_acc_en.
void fill_tile_bitcast(uint32_t dst, uint32_t bits, Loc loc);

// SFPU integer ops on the raw 32-bit words of DST tiles (Int32/UInt32 tiles unpacked straight to DST),
// two's complement modulo 2^32; the table lives in sfpu.cpp. `format` is the kernel-side DataFormat
// id of the API call's template argument (Int32: signed, UInt32: unsigned; UInt16 is not emulated).
// Each needs fp32_dest_acc_en. Comparisons give 1 where they hold, else 0. Rsub: DST[dst1] - DST[dst0].
enum class IntBinary : uint8_t { Add, Sub, Rsub, Mul, Eq, Ne, Lt, Gt, Le, Ge, Max, Min, FloorDiv, TruncDiv, FloorMod,
                                  Count };
void sfpu_int_binary(IntBinary op, uint8_t format, uint32_t dst0, uint32_t dst1, uint32_t odst, Loc loc);
// DST[dst] op param (Add or Sub), param the int32 bits (add_unary_tile_int32, sub_unary_tile_int32).
void sfpu_int_scalar(IntBinary op, uint32_t dst, uint32_t param, Loc loc);
// Every word of DST[dst] = value (fill_tile_int<format>).
void fill_tile_int(uint8_t format, uint32_t dst, uint32_t value, Loc loc);

}  // namespace emu::k
