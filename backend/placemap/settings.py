"""Runtime settings of the backend (paths, bind address, limits), built in the app factory or the CLI.

Nothing here runs at import: `Settings.from_env()` reads the environment when called.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field

REPO_ROOT = Path(__file__).resolve().parents[2]
# A saved simulation (placemap.sim_record) stops, with a named error, after this many events: the
# size of recording the store's scale bench holds (`scripts/bench big`), about 1.2 GB at the ~12
# bytes a stored simulated event takes (hackbench -g 8, 733k events: 8.9 MB) and some 6 minutes of
# saving at ~280k events/s. A run of 600 s simulated on a big machine would otherwise fill the disk
# the real recordings live on. The metric needs no recording: the same scenario runs unsaved to its end.
SIM_MAX_SAVED_EVENTS = 100_000_000
# The published result tables (issue 3's calibration file), beside the checkout: what `placemap
# calibrate` reads by default and what the simulate form's published cells come from.
DEFAULT_CALIBRATION_CSV = REPO_ROOT.parent / "shared" / "calibration" / "userspace-hinting-rfc.csv"


class Settings(BaseModel):
    """Everything the server needs to know; defaults fit a checkout of the repo."""

    db_path: Path = Field(default_factory=lambda: REPO_ROOT / "data" / "placemap.db")
    host: str = "127.0.0.1"
    port: int = 8000
    max_upload_bytes: int = 2 * 1024**3
    collector: Path = Field(default_factory=lambda: REPO_ROOT / "collectors" / "bin" / "placemap-collect")
    frontend_dist: Path = Field(default_factory=lambda: REPO_ROOT / "frontend" / "dist")
    live_end_timeout_s: float = 60.0  # a live recording whose collector vanished turns ready after this
    sim_workers: int = Field(default=1, ge=1, le=8)  # simulation jobs at once, one process each (CPU-bound)
    # a saved simulation stops with a named error past this many events
    sim_max_saved_events: int = Field(default=SIM_MAX_SAVED_EVENTS, ge=1)
    # the published result tables the simulate form shows beside a what-if's change (placemap.sim_published);
    # absent: the form shows none
    calibration_csv: Path = DEFAULT_CALIBRATION_CSV
    # SCHED_FIFO priority of the event loop thread (placemap.realtime); None: an ordinary task
    realtime_priority: int | None = Field(default=None, ge=1, le=99)

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        """Defaults, then PLACEMAP_DB / PLACEMAP_COLLECT / PLACEMAP_LIVE_END_TIMEOUT /
        PLACEMAP_SIM_WORKERS / PLACEMAP_SIM_MAX_SAVED_EVENTS / PLACEMAP_REALTIME /
        PLACEMAP_CALIBRATION_CSV from the environment, then explicit overrides."""
        values: dict[str, object] = {}
        if db := os.environ.get("PLACEMAP_DB"):
            values["db_path"] = Path(db)
        if collect := os.environ.get("PLACEMAP_COLLECT"):
            values["collector"] = Path(collect)
        if live_end := os.environ.get("PLACEMAP_LIVE_END_TIMEOUT"):
            values["live_end_timeout_s"] = float(live_end)
        if sim_workers := os.environ.get("PLACEMAP_SIM_WORKERS"):
            values["sim_workers"] = int(sim_workers)
        if max_saved := os.environ.get("PLACEMAP_SIM_MAX_SAVED_EVENTS"):
            values["sim_max_saved_events"] = int(max_saved)
        if calibration := os.environ.get("PLACEMAP_CALIBRATION_CSV"):
            values["calibration_csv"] = Path(calibration)
        if realtime := os.environ.get("PLACEMAP_REALTIME"):
            if not realtime.strip().isdigit():
                raise ValueError(f"PLACEMAP_REALTIME={realtime!r}: expected a priority 1-99")
            values["realtime_priority"] = int(realtime)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls.model_validate(values)

    @property
    def upload_dir(self) -> Path:
        """Where uploads are spooled before the importer reads them (beside the database)."""
        return self.db_path.parent / "uploads"
