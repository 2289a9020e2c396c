// tt-metal 0.81.1 api/remote_circular_buffer.h: the remote (global) circular buffers, which the emulator
// does not model. A kernel may include this header and use them only in code its defines leave out (ttnn's
// reader_bmm_tile_layout_in1_sender_writer_padding.cpp: under ENABLE_GLOBAL_CB): a call does not compile.
#pragma once

#include "api/dataflow/dataflow_api.h"
