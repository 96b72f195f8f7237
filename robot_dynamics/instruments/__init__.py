"""Measuring instruments: benchmarks, reliability runs, the relays they compare with, process
handling."""
