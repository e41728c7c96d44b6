"""Section 04, the architecture prior (Paper A §6.2): weight-tied loops against untied controls of the
same depth. `plan`: its runs; `read`: its readers; `confirm`: the C04-architecture study's reader;
`figures`; `claims` (with the C04-architecture tests).

This file only names the room: importing a section's plan (the registry, the store's command line)
never imports its readers, figures or claims.
"""
