"""Section 07, seed contests (Paper A §8): do head or tail metrics measured in distribution predict
which seeds generalize. `plan`: its runs; `read`: its readers; `figures`; `claims`.

This file only names the room: importing a section's plan (the registry, the store's command line)
never imports its readers, figures or claims.
"""
