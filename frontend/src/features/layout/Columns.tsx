/**
 * The dashboard's three columns (the side panel, the grid and playback, the inspector) with a
 * splitter between each two: drag it, or focus it and use the arrow keys (Home/End to the limits);
 * a double click puts the default width back. A side column dragged below half its minimum (or
 * sent Home, or Enter on its splitter) folds away, giving the grid the window; dragging its
 * splitter back out, a double click, or Enter again brings it back. A folded column is inert: nothing
 * in it takes the keyboard's focus. The side columns keep their width in pixels when the window
 * resizes, the middle one takes the rest; the widths are remembered in the browser, in pixels too
 * (layoutStorage), and are no part of a shared link: the link opens the same view at the reader's
 * own widths. react-resizable-panels does the resizing and the separators' ARIA.
 */
import { useRef, useState, type ReactNode, type RefObject } from "react";
import { Group, Panel, Separator, useDefaultLayout, usePanelRef, type Layout, type LayoutChangedMeta, type PanelImperativeHandle } from "react-resizable-panels";
import { browserStorage, pixelStorage } from "./layoutStorage";

export const LAYOUT_ID = "placemap-columns";
export const LEFT_DEFAULT_PX = 250;
export const RIGHT_DEFAULT_PX = 320;
const SPLITTERS = ["left-splitter", "right-splitter"];
const SPLITTERS_PX = 10; // their width before they are laid out (5 px each; 9 folded)
/** What the library's percentages are of: the window's width (the columns span it) without the splitters. */
function panelsWidth(): number {
  const seps = SPLITTERS.map((id) => document.getElementById(id)).filter((e) => e !== null);
  const px = seps.length === SPLITTERS.length ? seps.reduce((a, e) => a + e.offsetWidth, 0) : SPLITTERS_PX;
  return document.documentElement.clientWidth - px;
}
// the side columns kept in pixels
const storage = pixelStorage(browserStorage, ["column-left", "column-right"], "column-center", panelsWidth);

export function Columns({ left, center, right }: { left: ReactNode; center: ReactNode; right: ReactNode }) {
  const { defaultLayout, onLayoutChanged: save } = useDefaultLayout({ id: LAYOUT_ID, storage });
  const [leftFolded, setLeftFolded] = useState(false);
  const [rightFolded, setRightFolded] = useState(false);
  const leftPanel = usePanelRef();
  const rightPanel = usePanelRef();
  // What is kept is what the reader chose: a drag, a key, a fold, a double click's reset and the
  // inspector's Enter (these two made here through the panel's API, which the library does not count
  // as user input), never the layout a mount or a window's resize gives, which would pin the
  // default widths as shares of the first window.
  const byHand = useRef(false);
  const onLayoutChanged = (layout: Layout, meta: LayoutChangedMeta) => {
    if (meta.isUserInteraction || byHand.current) save(layout, meta);
  };
  const chosen = (change: () => void) => {
    byHand.current = true;
    try {
      change();
    } finally {
      byHand.current = false;
    }
  };
  const reset = (panel: RefObject<PanelImperativeHandle | null>, px: number) => {
    chosen(() => panel.current?.resize(px));
  };
  return (
    <Group id={LAYOUT_ID} className="columns" orientation="horizontal" defaultLayout={defaultLayout} onLayoutChanged={onLayoutChanged}>
      <Panel
        id="column-left"
        panelRef={leftPanel}
        className="column"
        defaultSize={LEFT_DEFAULT_PX}
        minSize={200}
        maxSize="60%"
        collapsible
        collapsedSize={0}
        groupResizeBehavior="preserve-pixel-size"
        onResize={(size) => { setLeftFolded(size.inPixels === 0); }}
      >
        <div className="column-body" inert={leftFolded}>{left}</div>
      </Panel>
      <Separator
        id="left-splitter"
        className={leftFolded ? "splitter folded" : "splitter"}
        aria-label="width of the side panel"
        disableDoubleClick
        onDoubleClick={() => { reset(leftPanel, LEFT_DEFAULT_PX); }}
        title={leftFolded ? "the side panel, folded: drag right, double click or Enter to unfold it" : "drag to resize (or arrow keys); double click: default width; Enter: fold"}
      />
      <Panel id="column-center" className="column" minSize={320}>
        {center}
      </Panel>
      <Separator
        id="right-splitter"
        className={rightFolded ? "splitter folded" : "splitter"}
        aria-label="width of the inspector"
        disableDoubleClick
        onDoubleClick={() => { reset(rightPanel, RIGHT_DEFAULT_PX); }}
        // the library's Enter folds the column before a splitter (here the grid's, which cannot fold):
        // the inspector's splitter folds the inspector, as the side panel's folds the side panel
        onKeyDown={(e) => {
          if (e.key !== "Enter") return;
          const p = rightPanel.current;
          if (p) chosen(() => { if (p.isCollapsed()) p.expand(); else p.collapse(); });
        }}
        title={rightFolded ? "the inspector, folded: drag left, double click or Enter to unfold it" : "drag to resize (or arrow keys); double click: default width; Enter: fold"}
      />
      <Panel
        id="column-right"
        panelRef={rightPanel}
        className="column"
        defaultSize={RIGHT_DEFAULT_PX}
        minSize={240}
        maxSize="50%"
        collapsible
        collapsedSize={0}
        groupResizeBehavior="preserve-pixel-size"
        onResize={(size) => { setRightFolded(size.inPixels === 0); }}
      >
        <div className="column-body" inert={rightFolded}>{right}</div>
      </Panel>
    </Group>
  );
}
