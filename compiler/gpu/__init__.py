"""Running captured kernels on the GPU: timing against the device's limits, editing, determinism."""
