// The piece of tt-llk's ckernel_defs.h (tt_llk_wormhole_b0/common/inc/ckernel_defs.h:73) kernels name: the
// ThreadId of each RISC-V of a Tensix core, the mailboxes' addresses (ckernel.h mailbox_write / mailbox_read).
#pragma once

namespace ckernel {

enum ThreadId { BriscThreadId = 0, UnpackThreadId = 1, MathThreadId = 2, PackThreadId = 3 };

}  // namespace ckernel
