"""`python -m robot_dynamics ...` is the `robot_dynamics` command line."""

from robot_dynamics.cli import main

# Guarded: the nodes' service worker process (multiprocessing 'spawn') re-imports __main__.
if __name__ == '__main__':
    raise SystemExit(main())
