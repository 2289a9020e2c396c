// Emulated tt-metal host API: a program (circular buffers, semaphores, kernels, runtime args)
// recorded on the host and handed to the emulated device when its workload is enqueued.
#pragma once

#include <memory>

namespace tt::tt_metal {

struct ProgramState;

class Program {
public:
    Program();
    Program(Program&& other) noexcept;
    Program& operator=(Program&& other) noexcept;
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    ~Program();

    ProgramState& state() const { return *state_; }

private:
    std::unique_ptr<ProgramState> state_;
};

}  // namespace tt::tt_metal
