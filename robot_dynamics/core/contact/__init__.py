"""Contact and collision: momentum observer, contact thresholds, external wrench at a frame."""
