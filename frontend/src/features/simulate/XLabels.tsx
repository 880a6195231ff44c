/**
 * The values a sweep ran at, under its charts (SweepChart, SweepChange): numbers centred under
 * their points, machine names (a sweep over presets) slanted so that five fit in the side panel.
 */
export function XLabels({ values, px, y, slant }: { values: (number | string)[]; px: (v: number | string) => number; y: number; slant: boolean }) {
  return (
    <>
      {values.map((v) =>
        slant ? (
          <text key={v} x={px(v)} y={y - 4} textAnchor="end" transform={`rotate(-25 ${String(px(v))} ${String(y - 4)})`} data-testid="sweep-x-label">{v}</text>
        ) : (
          <text key={v} x={px(v)} y={y} textAnchor="middle" data-testid="sweep-x-label">{v}</text>
        ),
      )}
    </>
  );
}

