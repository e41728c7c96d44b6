"""Section 06, portability (Paper A §7): budget annealing against from-scratch training.
`plan`: its runs; `read`: its readers; `figures`; `claims`.

This file only names the room: importing a section's plan (the registry, the store's command line)
never imports its readers, figures or claims.
"""
