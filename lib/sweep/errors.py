"""The one error a sweep raises for bad input, in a module of its own so that every other module
of the package (the grid, the value checks, the executors, the command line) can raise it without
importing each other."""


class SweepError(ValueError):
    """Bad input to a sweep: raised before any point runs, naming the parameter and what is allowed."""
