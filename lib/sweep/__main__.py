"""`python -m lib.sweep`. The command line lives in lib.sweep.cli, not here: what workers and Slurm
jobs unpickle (`lib.sweep.point.run_point`) must belong to an importable module, never to
`__main__` (whose functions would be pickled by value or not found)."""
from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
