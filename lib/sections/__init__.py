"""The sections' plans, one module a paper section: which runs each section's notebook trains and reads
in the smoke, quick and paper profiles, with the section's own tables (seeds, picks, test lengths).
Shared bases and the parameter checks are in `common`; `lib.profiles` re-exports every plan and table
and holds the registry the store's command line fills sections from. Notebook 00 (the quickstart) reads
03's plan and has no module of its own.
"""
