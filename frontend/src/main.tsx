/** Entry: mounts the placemap app. */
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import "./styles.css";
import { prefetchFirstFrame } from "./features/engine/player";
import { parseView } from "./features/urlState";

// the first frame's requests go out before React's first render
const view = parseView(window.location.search);
// (a live view waits for the hub feed instead: its keyframe is taken at the head)
if (view.rec && !view.live) prefetchFirstFrame(view.rec, view.t);

const el = document.getElementById("root");
if (el) {
  createRoot(el).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
