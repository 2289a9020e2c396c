"""What the plan's producer (the compiler) and its readers (``main.cpp`` generation, the emulator
driver, the ttnn path, the plan view) share, so that each fact is written once.

* :mod:`~tilelang_tt.contract.arch`: architecture facts (also compiled into the emulator);
* :mod:`~tilelang_tt.contract.formats`: dtypes, their tt-metal data formats, storage and ttnn
  types; bfloat16 rounding;
* :mod:`~tilelang_tt.contract.plan`: the checked, typed view of ``tt.plan.json``;
* :mod:`~tilelang_tt.contract.l1`: one core's L1 as tt-metal and the emulator allocate it.

Standard library only, and importing a submodule imports nothing else: ``tilelang_tt/host/
ttnn_program.py`` loads this package by path where tilelang is absent (Python 3.12).
"""
