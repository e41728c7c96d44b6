"""Section 05, the operator wall (Paper A §6.3): S5, A5 and S4 met operator-first or jointly at equal
budgets, and forced seriality. `plan`: its runs; `read`: its readers; `confirm`: the C05-wall study's
reader; `figures`; `claims` (with the C05-wall tests).

This file only names the room: importing a section's plan (the registry, the store's command line)
never imports its readers, figures or claims.
"""
