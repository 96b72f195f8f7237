"""The live pipeline: one joint-state stream in, everything dynamics_node publishes out."""
