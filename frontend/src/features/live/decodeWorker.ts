/**
 * The live decode worker: inflates and decodes hub frames (zlib streams of Arrow IPC) off the main
 * thread, so a busy feed does not take animation frames from the grid. Started by features/live/liveDecoder.ts; answers each
 * request in order with the decoded columns' buffers transferred (liveDecodeProtocol.ts).
 */
import { decodeChunk } from "../../client/arrow";
import { handleRequest, type DecodeReply, type DecodeRequest } from "./liveDecodeProtocol";

// the app's TS program has the DOM lib, not the WebWorker one: the worker scope as used here
const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<DecodeRequest>) => void) | null;
  postMessage(m: DecodeReply, transfer: Transferable[]): void;
};

scope.onmessage = (ev) => {
  // answers may finish out of order (inflating is asynchronous): LiveFeed delivers in arrival order
  void handleRequest(ev.data, decodeChunk).then(({ reply, transfer }) => {
    scope.postMessage(reply, transfer);
  });
};
// apache-arrow is loaded: frames may come
scope.postMessage({ type: "ready" }, []);
