/**
 * The live decode worker: decodes hub frames (Arrow IPC) off the main thread, so a busy feed does
 * not take animation frames from the grid. Started by features/live/liveDecoder.ts; answers each
 * request in order with the decoded columns' buffers transferred (liveDecodeProtocol.ts).
 */
import { decodeChunk } from "../../client/arrow";
import { handleDecode, type DecodeReply, type DecodeRequest } from "./liveDecodeProtocol";

// the app's TS program has the DOM lib, not the WebWorker one: the worker scope as used here
const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<DecodeRequest>) => void) | null;
  postMessage(m: DecodeReply, transfer: Transferable[]): void;
};

scope.onmessage = (ev) => {
  const { reply, transfer } = handleDecode(ev.data, decodeChunk);
  scope.postMessage(reply, transfer);
};
// apache-arrow is loaded: frames may come
scope.postMessage({ type: "ready" }, []);
