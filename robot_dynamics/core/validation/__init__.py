"""URDF inertia validation: physical-consistency checks, their report, mesh inertia."""
