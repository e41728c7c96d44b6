"""Section 02, tau calibration (Paper A §5): the tau instrument against a serial positive control, a
shortcut control and the damage cones. `plan`: its runs; `read`: its readers; `figures`; `claims`.

This file only names the room: importing a section's plan (the registry, the store's command line)
never imports its readers, figures or claims.
"""
