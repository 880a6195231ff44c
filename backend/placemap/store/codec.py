"""Chunk codec: an Arrow table <-> one zstd-compressed Arrow IPC stream blob.

The compressed blob is a single standard zstd frame, so the server can send it verbatim with
`Content-Encoding: zstd`; the uncompressed size is stored beside it because pa.decompress needs it.
String columns are dictionary-encoded when that makes the IPC smaller (comm repeats a lot).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from placemap.schema.events import EVENT_SCHEMA

CODEC = "zstd"
# level 1: several times faster than the default 3 for a few percent more bytes
_ZSTD = pa.Codec(CODEC, compression_level=1)


@dataclass(frozen=True)
class Encoded:
    """A compressed IPC stream and the size it decompresses to."""

    data: bytes
    raw_bytes: int


def dictionary_encode(table: pa.Table) -> pa.Table:
    """Dictionary-encode the string columns whose distinct values are much fewer than the rows."""
    fields = []
    arrays = []
    for field, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_string(field.type) and table.num_rows > 0:
            combined = column.combine_chunks()
            encoded = combined.dictionary_encode()
            # Only pays off when values repeat: dictionary + int32 indices vs the plain strings.
            if len(encoded.dictionary) * 2 < len(combined):
                # the narrowest index type that fits: less to compress, decode and send
                n = len(encoded.dictionary)
                index_type = pa.int8() if n <= 127 else pa.int16() if n <= 32_767 else pa.int32()
                encoded = pa.DictionaryArray.from_arrays(encoded.indices.cast(index_type), encoded.dictionary)
                fields.append(pa.field(field.name, encoded.type, nullable=field.nullable))
                arrays.append(encoded)
                continue
        fields.append(field)
        arrays.append(column)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def encode_table(table: pa.Table) -> Encoded:
    """Any table as one compressed IPC stream (one record batch)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=max(table.num_rows, 1))
    return compress_ipc(sink.getvalue())


def compress_ipc(raw: bytes | pa.Buffer) -> Encoded:
    """An IPC stream already written (e.g. by the importer's --chunks output) as a stored blob."""
    data = _ZSTD.compress(raw, asbytes=True)
    return Encoded(data=data, raw_bytes=len(raw) if isinstance(raw, bytes) else raw.size)


def encode_chunk(table: pa.Table) -> Encoded:
    """An event table (EVENT_SCHEMA) as a compressed IPC stream with dictionary-encoded strings."""
    return encode_table(dictionary_encode(table.combine_chunks()))


def decode_blob(data: bytes, raw_bytes: int) -> pa.Table:
    """Decompress and read a blob written by encode_table / encode_chunk, as stored."""
    raw = _ZSTD.decompress(data, decompressed_size=raw_bytes)
    return pa.ipc.open_stream(raw).read_all()


def to_event_schema(table: pa.Table) -> pa.Table:
    """Undo dictionary encoding (and any column order drift): exactly EVENT_SCHEMA."""
    arrays = []
    for field in EVENT_SCHEMA:
        column = table.column(field.name)
        if pa.types.is_dictionary(column.type) or column.type != field.type:
            column = pc.cast(column, field.type)
        arrays.append(column)
    return pa.Table.from_arrays(arrays, schema=EVENT_SCHEMA)


def decode_chunk(data: bytes, raw_bytes: int) -> pa.Table:
    """A stored event chunk as a table in EVENT_SCHEMA (strings plain)."""
    return to_event_schema(decode_blob(data, raw_bytes))
