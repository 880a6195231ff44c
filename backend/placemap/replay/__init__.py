"""Replay of the placement state: the state machine, keyframes, seek, and metrics derived at ingest."""
