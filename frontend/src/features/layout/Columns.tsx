/**
 * The dashboard's three columns (the side panel, the grid and playback, the inspector) with a
 * splitter between each two: drag it, or focus it and use the arrow keys (Home/End to the limits);
 * a double click puts the default width back. A side column dragged below half its minimum (or
 * sent Home, or Enter on its splitter) folds away, giving the grid the window; dragging its
 * splitter back out, a double click, or Enter again brings it back. A folded column is inert: nothing
 * in it takes the keyboard's focus. The side columns keep their width in pixels when the window
 * resizes, the middle one takes the rest; the widths are remembered in the browser, in pixels too
 * (layoutStorage), and are no part of a shared link: the link opens the same view at the reader's
 * own widths. Enter unfolds a column at the width it had before it was folded, after a reload too
 * (the storage keeps it), or at its default width when none was chosen. react-resizable-panels
 * does the resizing and the separators' ARIA.
 */
import { useRef, useState, type KeyboardEvent, type ReactNode, type RefObject } from "react";
import { Group, Panel, Separator, useDefaultLayout, usePanelRef, type Layout, type LayoutChangedMeta, type PanelImperativeHandle } from "react-resizable-panels";
import { browserStorage, pixelStorage } from "./layoutStorage";

const LAYOUT_ID = "placemap-columns";

/** A side column: its panel's and splitter's ids, sizes and words. */
interface SideSpec {
  panel: string;
  splitter: string;
  what: string; // what the column is, for the splitter's label and title
  defaultPx: number;
  minPx: number;
  maxSize: string;
  unfold: "left" | "right"; // the way its folded splitter is dragged to unfold it
}
const LEFT: SideSpec = { panel: "column-left", splitter: "left-splitter", what: "the side panel", defaultPx: 250, minPx: 200, maxSize: "60%", unfold: "right" };
const RIGHT: SideSpec = { panel: "column-right", splitter: "right-splitter", what: "the inspector", defaultPx: 320, minPx: 240, maxSize: "50%", unfold: "left" };
const SIDES = [LEFT, RIGHT];

const SPLITTERS_PX = 10; // the splitters' width before they are laid out (5 px each; 9 folded)
/** What the library's percentages are of: the window's width (the columns span it) without the splitters. */
function panelsWidth(): number {
  const seps = SIDES.map((side) => document.getElementById(side.splitter)).filter((e) => e !== null);
  const px = seps.length === SIDES.length ? seps.reduce((a, e) => a + e.offsetWidth, 0) : SPLITTERS_PX;
  return document.documentElement.clientWidth - px;
}
// the side columns kept in pixels
const storage = pixelStorage(browserStorage, SIDES.map((side) => side.panel), "column-center", panelsWidth);

/** A side column's state: folded or not, and its panel's handle. */
interface SideState {
  folded: boolean;
  setFolded: (v: boolean) => void;
  ref: RefObject<PanelImperativeHandle | null>;
}

function useSide(): SideState {
  const [folded, setFolded] = useState(false);
  return { folded, setFolded, ref: usePanelRef() };
}

function sidePanel(side: SideSpec, st: SideState, children: ReactNode) {
  return (
    <Panel
      id={side.panel}
      panelRef={st.ref}
      className="column"
      defaultSize={side.defaultPx}
      minSize={side.minPx}
      maxSize={side.maxSize}
      collapsible
      collapsedSize={0}
      groupResizeBehavior="preserve-pixel-size"
      onResize={(size) => { st.setFolded(size.inPixels === 0); }}
    >
      <div className="column-body" inert={st.folded}>{children}</div>
    </Panel>
  );
}

export function Columns({ left, center, right }: { left: ReactNode; center: ReactNode; right: ReactNode }) {
  const { defaultLayout, onLayoutChanged: save } = useDefaultLayout({ id: LAYOUT_ID, storage });
  const leftSide = useSide();
  const rightSide = useSide();
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
  const splitter = (side: SideSpec, st: SideState) => {
    // Enter folds and unfolds the splitter's side column here, before the library's own handler
    // (a listener on the element, which a capture at the root runs before and which yields to a
    // handled event): the library's unfolds at the width it remembers for the visit only, or its
    // minimum, and folds the column before the splitter, which for the inspector's is the grid.
    const onEnter = (e: KeyboardEvent) => {
      const p = st.ref.current;
      if (e.key !== "Enter" || !p) return;
      e.preventDefault();
      chosen(() => { if (p.isCollapsed()) p.resize(storage.openWidth(side.panel) ?? side.defaultPx); else p.collapse(); });
    };
    return (
      <Separator
        id={side.splitter}
        className={st.folded ? "splitter folded" : "splitter"}
        aria-label={`width of ${side.what}`}
        disableDoubleClick
        onDoubleClick={() => { chosen(() => st.ref.current?.resize(side.defaultPx)); }}
        onKeyDownCapture={onEnter}
        title={st.folded ? `${side.what}, folded: drag ${side.unfold}, double click or Enter to unfold it` : "drag to resize (or arrow keys); double click: default width; Enter: fold"}
      />
    );
  };
  return (
    <Group id={LAYOUT_ID} className="columns" orientation="horizontal" defaultLayout={defaultLayout} onLayoutChanged={onLayoutChanged}>
      {sidePanel(LEFT, leftSide, left)}
      {splitter(LEFT, leftSide)}
      <Panel id="column-center" className="column" minSize={320}>
        {center}
      </Panel>
      {splitter(RIGHT, rightSide)}
      {sidePanel(RIGHT, rightSide, right)}
    </Group>
  );
}
