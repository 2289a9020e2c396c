"""The functional Metalium emulator: ``run`` builds and runs a program without hardware."""

from tilelang_tt.emulator.driver import EmulatorError, EmulatorResult, run

__all__ = ["EmulatorError", "EmulatorResult", "run"]
