// Judges a replay's outcome against a reproduction's expectations. Each
// expectation is named by its JSON path in the file, so a failure says which
// line of the file no longer holds.
import type { Finding, RoundReport } from '../lab/records';
import type { LinkView } from '../lab/state';
import type { FindingPattern, Repro } from './types';

/** What a replay produced (a subset of the run report). */
export interface ReplayOutcome {
  verdict: string;
  roundsCompleted: number;
  rounds: RoundReport[];
  dead: number[];
  findings: Finding[];
  links: LinkView[];
}

export interface ExpectationResult {
  /** JSON path of the expectation in the file. */
  name: string;
  ok: boolean;
  expected: string;
  actual: string;
}

const matches = (f: Finding, p: FindingPattern) =>
  (p.kind === undefined || f.kind === p.kind) &&
  (p.severity === undefined || f.severity === p.severity) &&
  (p.message === undefined || f.message.includes(p.message));

const describe = (p: FindingPattern) =>
  [p.severity, p.kind, p.message === undefined ? undefined : `'${p.message}'`].filter(Boolean).join(' ') ||
  'any finding';

export function checkExpectations(repro: Repro, out: ReplayOutcome): ExpectationResult[] {
  const e = repro.expectations;
  const res: ExpectationResult[] = [];
  const add = (name: string, ok: boolean, expected: string, actual: string) =>
    res.push({ name, ok, expected, actual });
  if (e.verdict !== undefined) add('expectations.verdict', out.verdict === e.verdict, e.verdict, out.verdict);
  if (e.roundsCompleted !== undefined)
    add(
      'expectations.roundsCompleted',
      out.roundsCompleted === e.roundsCompleted,
      String(e.roundsCompleted),
      String(out.roundsCompleted),
    );
  (e.rounds ?? []).forEach((re, i) => {
    const got = out.rounds.find((r) => r.round === re.round);
    const base = `expectations.rounds[${i}]`;
    if (re.verdict !== undefined)
      add(
        `${base}.verdict`,
        got?.verdict === re.verdict,
        `round ${re.round} ${re.verdict}`,
        got ? `round ${re.round} ${got.verdict}` : `round ${re.round} never reported`,
      );
    if (re.consensusSha256 !== undefined)
      add(
        `${base}.consensusSha256`,
        got?.consensusSha256 === re.consensusSha256,
        re.consensusSha256,
        got?.consensusSha256 === undefined
          ? `round ${re.round}: no consensus adopted`
          : `${got.consensusSha256} (merge order ${JSON.stringify(got.mergeOrder ?? [])}${
              re.mergeOrder ? `, saved run's ${JSON.stringify(re.mergeOrder)}` : ''
            })`,
      );
  });
  if (e.dead !== undefined) {
    const want = [...e.dead].sort((a, b) => a - b);
    const got = [...out.dead].sort((a, b) => a - b);
    add('expectations.dead', want.join() === got.join(), `[${want.join(', ')}]`, `[${got.join(', ')}]`);
  }
  (e.findings?.present ?? []).forEach((p, i) => {
    const hit = out.findings.find((f) => matches(f, p));
    add(
      `expectations.findings.present[${i}]`,
      hit !== undefined,
      `a finding: ${describe(p)}`,
      hit ? hit.message : `none of ${out.findings.length} findings`,
    );
  });
  (e.findings?.absent ?? []).forEach((p, i) => {
    const hit = out.findings.find((f) => matches(f, p));
    add(
      `expectations.findings.absent[${i}]`,
      hit === undefined,
      `no finding: ${describe(p)}`,
      hit ? hit.message : 'none',
    );
  });
  (e.linkBytes ?? []).forEach((lb, i) => {
    const l = out.links.find((x) => x.id === lb.link);
    const bytes =
      l === undefined
        ? undefined
        : lb.dir === 'up'
          ? l.bytesUp
          : lb.dir === 'down'
            ? l.bytesDown
            : l.bytesUp + l.bytesDown;
    const ok =
      bytes !== undefined &&
      (lb.min === undefined || bytes >= lb.min) &&
      (lb.max === undefined || bytes <= lb.max);
    add(
      `expectations.linkBytes[${i}]`,
      ok,
      `${lb.link} ${lb.dir} in ${lb.min ?? 0}..${lb.max ?? '∞'} B`,
      bytes === undefined ? 'link not seen' : `${bytes} B`,
    );
  });
  return res;
}
