"""The paper's sections, one package a section (`sNN_<name>/`): its plans (`plan`: which runs its notebook
trains and reads in the smoke, quick and paper profiles, with the section's own tables), and where it has
them its readers (`read`), its confirmatory study's reader (`confirm`), its figures (`figures`) and its
claims (`claims`). A package's `__init__` is a docstring only, so importing a plan never imports readers.
Shared bases and the parameter checks are in `common`; `lib.profiles` gives each plan, and the tables
notebooks and the command line read, a public name and holds the registry the store's command line fills
sections from. Notebook 00 (the quickstart) reads 03's plan and has no package of its own.
"""
