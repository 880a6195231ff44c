"""Persistent storage of recordings: SQLite schema, chunk codec and the Store interface."""

from placemap.store.codec import decode_blob, decode_chunk, encode_chunk, encode_table
from placemap.store.store import ChunkRow, ChunkWrite, RecordingRow, Store, StoreError, TaskRow

__all__ = [
    "ChunkRow",
    "ChunkWrite",
    "RecordingRow",
    "Store",
    "StoreError",
    "TaskRow",
    "decode_blob",
    "decode_chunk",
    "encode_chunk",
    "encode_table",
]
