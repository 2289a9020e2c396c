// tt-metal 0.81.1 api/dataflow/noc_semaphore.h: the Semaphore class, which api/semaphore.h defines.
#pragma once

#include "api/semaphore.h"
