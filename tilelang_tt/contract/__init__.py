"""What the plan's producer (the compiler) and its readers (``main.cpp`` generation, the emulator
driver, the ttnn path, the plan view) share, so that each fact is written once.

* :mod:`~tilelang_tt.contract.arch`: architecture facts (also compiled into the emulator);
* :mod:`~tilelang_tt.contract.formats`: dtypes, their tt-metal data formats, storage and ttnn
  types; bfloat16 rounding;
* :mod:`~tilelang_tt.contract.plan`: ``tt.plan.json`` as one typed value, :class:`Plan`, written
  by the compiler and read (and checked) where a plan comes from outside; its entries by subject:
  :mod:`~tilelang_tt.contract.buffers` (tensor layouts and the plan's buffers),
  :mod:`~tilelang_tt.contract.kernels` (kernels, their arguments, per-core values),
  :mod:`~tilelang_tt.contract.vocabulary` (work partition, multicast and argument kinds the
  compiler's attributes share), :mod:`~tilelang_tt.contract.mesh` (a mesh of chips),
  :mod:`~tilelang_tt.contract.dims` (sizes known at run time) and
  :mod:`~tilelang_tt.contract.reading` (checked reading of JSON values, ``PlanError``);
* :mod:`~tilelang_tt.contract.l1`: one core's L1 as tt-metal and the emulator allocate it.

Standard library only, and importing a submodule imports nothing else: ``tilelang_tt/host/
ttnn_program.py`` loads this package by path where tilelang is absent (Python 3.12).
"""
