/**
 * "On the command line": the scenario a simulated run ran, as a file to download, and the
 * `placemap sim` command that runs the same pair (and seeds, or sweep) from it, so that a result seen in the
 * dashboard can be rerun, scripted or shared as text (scenario.ts: scenarioFileText, cliCommand).
 * The file is the scenario the page submitted, or a saved run's whole scenario from the server
 * (GET /api/recordings/{id}/scenario: a replay's recorded profile inline, which the recording's
 * metadata shortens), so that it reruns without the server's database.
 * ScenarioFile alone is the link, for a saved run's header.
 */
import { Fragment } from "react";
import { api } from "../../client/http";
import { cliCommand, scenarioFileText, type CliSweep } from "./scenario";

/** the scenario as the job ran it, or the saved run whose scenario it is */
export type ScenarioSource = { scenario: Record<string, unknown> } | { recordingId: string };

type FileProps = ScenarioSource & {
  testId: string;
  title: string;
};

function fileHref(src: ScenarioSource): string {
  if ("recordingId" in src) return api.scenarioUrl(src.recordingId);
  return jsonHref(src.scenario);
}

export function ScenarioFile({ testId, title, ...src }: FileProps) {
  const href = fileHref(src);
  return (
    <a href={href} download="scenario.json" data-testid={testId} title={title}>
      scenario.json
    </a>
  );
}

type Props = ScenarioSource & {
  /** the run had a baseline (hints or feature changes) */
  baseline: boolean;
  /** seeds the pair ran on, the scenario's first */
  seeds: number;
  /** the test ids' prefix: "simulate" (…-cli, …-scenario-file, …-cli-command), "whatif" or "sweep" */
  testPrefix?: string;
  /** the values (or machines, or toggles) a sweep ran the scenario at, the machines it ran across,
   * and those that are no preset (each a topology file to download, NAME.json) */
  sweep?: CliSweep;
};

/** A JSON file (a scenario, a host's topology), as a link downloads it. */
function jsonHref(value: Record<string, unknown>): string {
  return `data:application/json;charset=utf-8,${encodeURIComponent(scenarioFileText(value))}`;
}

export function Reproduce({ baseline, seeds, testPrefix = "simulate", sweep, ...src }: Props) {
  return (
    <div className="small" data-testid={`${testPrefix}-cli`}>
      on the command line: <ScenarioFile {...src} testId={`${testPrefix}-scenario-file`} title="the scenario this run ran" />{" "}
      {Object.entries(sweep?.hosts ?? {}).map(([name, topo]) => (
        <Fragment key={name}>
          <a href={jsonHref(topo)} download={`${name}.json`} data-testid={`${testPrefix}-host-file`} title={`the topology of the machine ${name}, which the command names by this file`}>
            {name}.json
          </a>{" "}
        </Fragment>
      ))}
      <code className="mono" data-testid={`${testPrefix}-cli-command`}>
        {/* a line breaks between arguments, never inside "--baseline", and inside a long list of
            values after a comma only (toggle=fork_affine,fork_spread,...) */}
        {cliCommand(baseline, seeds, sweep).split(" ").map((arg, i) => (
          <Fragment key={i}>
            {i > 0 && " "}
            <span className="cli-arg">
              {arg.split(/(?<=,)/).map((part, j) => (
                <Fragment key={j}>
                  {j > 0 && <wbr />}
                  <span className="cli-part">{part}</span>
                </Fragment>
              ))}
            </span>
          </Fragment>
        ))}
      </code>
    </div>
  );
}
