"""The small library every notebook imports: groups, tasks, the looped model and its layers, the training
step and loop, the run store, generic instruments, the paper's sections (one package each: plans,
readers, figures, claims), profiles, plots, the verdict rules and the claims ledger (see README.md,
"What is where")."""
