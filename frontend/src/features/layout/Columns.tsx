/**
 * The dashboard's three columns (the side panel, the grid and playback, the inspector) with a
 * splitter between each two: drag it, or focus it and use the arrow keys (Home/End to the limits);
 * a double click puts the default width back. A side column dragged below half its minimum (or
 * sent Home) folds away, giving the grid the window; dragging its splitter back out, a double
 * click, or Enter on the side panel's splitter brings it back. A folded column is inert: nothing
 * in it takes the keyboard's focus. The side columns keep their width in pixels when the window
 * resizes, the middle one takes the rest; the widths are remembered in the browser
 * (layoutStorage), and are no part of a shared link: the link opens the same view at the reader's
 * own widths. react-resizable-panels does the resizing and the separators' ARIA.
 */
import { useRef, useState, type ReactNode, type RefObject } from "react";
import { Group, Panel, Separator, useDefaultLayout, usePanelRef, type Layout, type LayoutChangedMeta, type PanelImperativeHandle } from "react-resizable-panels";
import { browserStorage, guardedStorage } from "./layoutStorage";

export const LAYOUT_ID = "placemap-columns";
export const LEFT_DEFAULT_PX = 250;
export const RIGHT_DEFAULT_PX = 320;
const storage = guardedStorage(browserStorage);

export function Columns({ left, center, right }: { left: ReactNode; center: ReactNode; right: ReactNode }) {
  const { defaultLayout, onLayoutChanged: save } = useDefaultLayout({ id: LAYOUT_ID, storage });
  const [leftFolded, setLeftFolded] = useState(false);
  const [rightFolded, setRightFolded] = useState(false);
  const leftPanel = usePanelRef();
  const rightPanel = usePanelRef();
  // What is kept is what the reader chose: a drag, a key, a fold, and a double click's reset (which
  // the library makes through the panel's API, no "user interaction" to it, so it is made here),
  // never the layout a mount or a window's resize gives, which would pin the default widths as
  // shares of the first window.
  const resetting = useRef(false);
  const onLayoutChanged = (layout: Layout, meta: LayoutChangedMeta) => {
    if (meta.isUserInteraction || resetting.current) save(layout, meta);
  };
  const reset = (panel: RefObject<PanelImperativeHandle | null>, px: number) => {
    resetting.current = true;
    try {
      panel.current?.resize(px);
    } finally {
      resetting.current = false;
    }
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
        title={rightFolded ? "the inspector, folded: drag left or double click to unfold it" : "drag to resize (or arrow keys); double click: default width"}
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
