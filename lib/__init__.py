"""The small library every notebook imports: groups, tasks, the looped model, training, the run
store, instruments, profiles, plots and the claims ledger (see README.md, "What is where")."""
