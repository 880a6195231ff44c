"""Chunks are served as stored (one zstd frame, Content-Encoding: zstd): the Debian chromium must
decode them to the Arrow IPC stream. Drives /usr/bin/chromium headless against the real server."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx
from conftest import Server, wait_done
from ftrace_lines import G4

CHROMIUM = Path("/usr/bin/chromium")

PAGE = """<!doctype html><html><body><pre id="out">pending</pre><script>
(async () => {
  const rid = new URLSearchParams(location.search).get("rid");
  const out = document.getElementById("out");
  try {
    const url = `/api/recordings/${rid}/chunks/0`;
    const r = await fetch(url);
    const buf = new Uint8Array(await r.arrayBuffer());
    const e = performance.getEntriesByName(new URL(url, location.href).href)[0];
    out.textContent = JSON.stringify({status: r.status, bytes: buf.length, first: Array.from(buf.slice(0, 4)),
      encoded: e.encodedBodySize, decoded: e.decodedBodySize});
  } catch (err) { out.textContent = JSON.stringify({error: String(err)}); }
})();
</script></body></html>"""


def test_chromium_decodes_a_zstd_chunk(server: Server, client: httpx.Client) -> None:
    assert CHROMIUM.is_file(), "the Debian chromium is part of the test machine (architecture.md)"
    dist = server.settings.frontend_dist
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "index.html").write_text(PAGE)
    rid = wait_done(client, client.post("/api/recordings", content=G4.read_bytes()).json()["id"])["id"]
    chunk = client.get(f"/api/recordings/{rid}/chunks").json()[0]
    raw_len = len(
        client.get(f"/api/recordings/{rid}/chunks/0", headers={"Accept-Encoding": "identity"}).content
    )
    proc = subprocess.run(
        [
            str(CHROMIUM),
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=10000",
            "--dump-dom",
            f"{server.url}/?rid={rid}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    m = re.search(r'<pre id="out">(.*?)</pre>', proc.stdout, re.S)
    assert m is not None, proc.stderr[-2000:]
    got: dict[str, Any] = json.loads(m.group(1))
    assert got.get("status") == 200, got
    assert got["encoded"] == chunk["bytes"], "chromium received the stored zstd frame"
    assert got["decoded"] == got["bytes"] == raw_len, "and decoded it to the IPC stream"
    assert got["first"] == [255, 255, 255, 255], "an Arrow IPC stream starts with the continuation marker"
