"""The placement simulator: Linux's CFS task placement (fork, wakeup, load balancing) on any
topology, with the what-if toggles of placement-model.md. Pure: no I/O, no wall clock inside
the core, seeded and deterministic."""
