/**
 * The dashboard's three columns (the side panel, the grid and playback, the inspector) with a
 * splitter between each two: drag it, or focus it and use the arrow keys (Home/End to the limits);
 * a double click puts the default width back. The side columns keep their width in pixels when the
 * window resizes, the middle one takes the rest; the widths are remembered in the browser
 * (layoutStorage), and are no part of a shared link: the link opens the same view at the reader's
 * own widths. react-resizable-panels does the resizing and the separators' ARIA.
 */
import type { ReactNode } from "react";
import { Group, Panel, Separator, useDefaultLayout } from "react-resizable-panels";
import { browserStorage, guardedStorage } from "./layoutStorage";

export const LAYOUT_ID = "placemap-columns";
export const LEFT_DEFAULT_PX = 250;
export const RIGHT_DEFAULT_PX = 320;
const storage = guardedStorage(browserStorage);

export function Columns({ left, center, right }: { left: ReactNode; center: ReactNode; right: ReactNode }) {
  const { defaultLayout, onLayoutChanged } = useDefaultLayout({ id: LAYOUT_ID, storage, onlySaveAfterUserInteractions: true });
  return (
    <Group id={LAYOUT_ID} className="columns" orientation="horizontal" defaultLayout={defaultLayout} onLayoutChanged={onLayoutChanged}>
      <Panel id="left" className="column" defaultSize={LEFT_DEFAULT_PX} minSize={200} maxSize="60%" groupResizeBehavior="preserve-pixel-size">
        {left}
      </Panel>
      <Separator id="left-splitter" className="splitter" aria-label="width of the side panel" />
      <Panel id="center" className="column" minSize={320}>
        {center}
      </Panel>
      <Separator id="right-splitter" className="splitter" aria-label="width of the inspector" />
      <Panel id="right" className="column" defaultSize={RIGHT_DEFAULT_PX} minSize={240} maxSize="50%" groupResizeBehavior="preserve-pixel-size">
        {right}
      </Panel>
    </Group>
  );
}
