"""Section 08, easy-to-hard (Paper A §6): prefix sums trained short and tested long.
`plan`: its runs; `read`: its readers; `figures`; `claims`.

This file only names the room: importing a section's plan (the registry, the store's command line)
never imports its readers, figures or claims.
"""
