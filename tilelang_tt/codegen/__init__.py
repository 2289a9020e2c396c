"""Code generation: kernel sources, the host program and the plan."""
