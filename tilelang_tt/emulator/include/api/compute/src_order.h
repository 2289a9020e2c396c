#pragma once

#include "api/compute/common.h"
