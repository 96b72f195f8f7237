"""Live joint-state streams: merging, differentiation, the shared ring buffer, effort conversion,
live torques."""
