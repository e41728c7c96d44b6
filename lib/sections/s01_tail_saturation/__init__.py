"""Section 01, tail saturation (Paper A §4): does a trained loop reach a fixed point, and do tail metrics
predict generalization. `plan`: its runs; `read`: its readers; `figures`; `claims`.

This file only names the room: importing a section's plan (the registry, the store's command line)
never imports its readers, figures or claims.
"""
