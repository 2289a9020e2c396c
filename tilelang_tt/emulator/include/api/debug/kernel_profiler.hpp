// tt-metal 0.81.1 api/debug/kernel_profiler.hpp as a kernel sees it without PROFILE_KERNEL (kernel_profiler.hpp:
// 1098-1152): the profiler's zone and event macros, which compile to nothing. The emulator's own timing and trace
// (runtime/timing.hpp, runtime/trace.cpp) take their place.
#pragma once

#define DeviceValidateProfiler(condition) (void(sizeof(condition)))
#define DeviceZoneScopedMainN(name) (void(name))
#define DeviceZoneScopedMainChildN(name) (void(name))
#define DeviceZoneScopedN(name) (void(name))
#define DeviceZoneScopedSumN1(name) (void(name))
#define DeviceZoneScopedSumN2(name) (void(name))
#define DeviceTraceOnlyProfilerInit()
#define DeviceZoneSetCounter(counter) (void(sizeof(counter)))
#define DeviceTimestampedData(data_id, data) (void(sizeof(data_id) + sizeof(data)))
#define DeviceRecordEvent(event_id) (void(sizeof(event_id)))
#define DeviceProfilerInit()
#define DeviceIncrementTraceCount()
#define DeviceZoneScopedNIf(name, active) DeviceZoneScopedN(name)
