"""Floating-base quantities: centre of mass, centroidal momentum, ZMP, support polygon, capture
point."""
