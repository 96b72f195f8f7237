"""`python -m robot_dynamics ...` is the `robot_dynamics` command line."""
from robot_dynamics.cli import main

raise SystemExit(main())
