"""Fixed-configuration dynamics on pinocchio: joint-space terms, regressor, reactions, effective
mass, capacity, joint friction."""
