/**
 * Hub frames on the wire: each is a zlib stream (RFC 1950) of one Arrow IPC stream, compressed once
 * per batch for every viewer by the server (backend/placemap/live/hub.py; the server offers no
 * per-connection permessage-deflate). Inflated with the platform's DecompressionStream (native
 * zlib, in the decode worker and on the main thread alike); stored chunks are not framed this way.
 */

/** The bytes of a live frame are not a whole zlib stream (cut short, or not compressed at all). */
export class FrameInflateError extends Error {
  override name = "FrameInflateError";
}

/** The Arrow IPC stream inside one hub frame. */
export async function inflateFrame(bytes: Uint8Array): Promise<Uint8Array> {
  try {
    // a Blob copies the bytes, so a view into a larger (or transferred) buffer is safe to pass
    const out = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Uint8Array(await new Response(out).arrayBuffer());
  } catch (e) {
    throw new FrameInflateError(`a live frame is not a zlib stream (${e instanceof Error ? e.message : String(e)})`);
  }
}
