"""Section 03, the budget law (Paper A §6.1): frontier speed against demand n_train / T_train, rescue
by test-time loops and the halting rule. `plan`: its runs; `read`: its readers; `confirm`: the C03-budget
study's reader; `figures`; `claims` (with the C03-budget tests).

This file only names the room: importing a section's plan (the registry, the store's command line)
never imports its readers, figures or claims.
"""
