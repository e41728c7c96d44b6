"""Section 09, fixed-point stability (Paper B): recall and normalisation knobs against reachable,
input-dependent, stable fixed points. `plan`: its runs; `read`: its readers; `figures`; `claims`.

This file only names the room: importing a section's plan (the registry, the store's command line)
never imports its readers, figures or claims.
"""
