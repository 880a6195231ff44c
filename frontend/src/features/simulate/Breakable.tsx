/**
 * A machine's or a toggle's name, free to break after each - _ and + (the side panel is narrow:
 * zen3-2s-nps1 over two lines, UTIL_FITS_CAPACITY over three), and nowhere else.
 */
import { Fragment } from "react";

export function Breakable({ text }: { text: string }) {
  const parts = text.split(/(?<=[-_+])/);
  return (
    <>
      {parts.map((p, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          {p}
        </Fragment>
      ))}
    </>
  );
}
