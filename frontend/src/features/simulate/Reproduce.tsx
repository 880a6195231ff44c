/**
 * "On the command line": the scenario a simulated run ran, as a file to download, and the
 * `placemap sim` command that runs the same pair (and seeds) from it, so that a result seen in the
 * dashboard can be rerun, scripted or shared as text (scenario.ts: scenarioFileText, cliCommand).
 * ScenarioFile alone is the link, for a saved run's header.
 */
import { Fragment } from "react";
import { cliCommand, scenarioFileText } from "./scenario";

interface FileProps {
  /** the scenario as the job ran it */
  scenario: Record<string, unknown>;
  testId: string;
  title: string;
}

export function ScenarioFile({ scenario, testId, title }: FileProps) {
  const href = `data:application/json;charset=utf-8,${encodeURIComponent(scenarioFileText(scenario))}`;
  return (
    <a href={href} download="scenario.json" data-testid={testId} title={title}>
      scenario.json
    </a>
  );
}

interface Props {
  scenario: Record<string, unknown>;
  /** the run had a baseline (hints or feature changes) */
  baseline: boolean;
  /** seeds the pair ran on, the scenario's first */
  seeds: number;
}

export function Reproduce({ scenario, baseline, seeds }: Props) {
  return (
    <div className="small" data-testid="simulate-cli">
      on the command line: <ScenarioFile scenario={scenario} testId="simulate-scenario-file" title="the scenario this run submitted" />{" "}
      <code className="mono" data-testid="simulate-cli-command">
        {/* a line breaks between arguments only, never inside "--baseline" */}
        {cliCommand(baseline, seeds).split(" ").map((arg, i) => (
          <Fragment key={i}>
            {i > 0 && " "}
            <span className="cli-arg">{arg}</span>
          </Fragment>
        ))}
      </code>
    </div>
  );
}
