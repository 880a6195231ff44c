/** The CPU lanes' "busy per column" / "each span" switch, as the replay's timeline and the live lanes show it. */
export function SummedToggle({ summed, onSummed, testId }: { summed: boolean; onSummed: (summed: boolean) => void; testId: string }) {
  return (
    <button
      type="button"
      className="linkish"
      data-testid={testId}
      aria-pressed={summed}
      title="each CPU's pixel columns: how busy, and who ran most of each (a window too busy to draw span by span is always summed)"
      onClick={() => { onSummed(!summed); }}
    >
      {summed ? "each span" : "busy per column"}
    </button>
  );
}
