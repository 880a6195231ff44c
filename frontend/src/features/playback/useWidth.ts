/** An element's width in whole px (at least `min`), followed as it resizes: the timeline's and the
 * CPU lanes' drawing width. */
import { useEffect, useState, type RefObject } from "react";

export function useWidth(ref: RefObject<HTMLElement | null>, initial = 800, min = 200): number {
  const [width, setWidth] = useState(initial);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const ro = new ResizeObserver(() => {
      setWidth(Math.max(min, Math.floor(el.getBoundingClientRect().width)));
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
    };
  }, [ref, min]);
  return width;
}
