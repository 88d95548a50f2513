// Link faults, applied and removed live (the fault lab): pick a link, a
// direction and one fault; the engine applies it at its end of the link.
// Every fault also appears in Findings (the engine reports it), so an effect
// can be traced to its cause.
import { useState } from 'react';
import type { LabView, LinkFault } from '@shared/lab/contract';
import type { LinkView, SessionSnapshot } from '@shared/lab/state';
import { NUMBER_RANGES, type NumberRange } from '@shared/lab/number-ranges';
import { CommitNumberInput } from './CommitNumberInput';
import { useLab, send } from '../store/lab-store';
import { useUi } from '../store/ui-store';
import { READOUT_MS, useSampled } from '../lib/use-sampled';

type FaultKind = 'latency' | 'bandwidth' | 'slicer' | 'stall' | 'corruptNext' | 'reset' | 'blackhole';

const KINDS: { kind: FaultKind; label: string }[] = [
  { kind: 'latency', label: 'latency + jitter' },
  { kind: 'bandwidth', label: 'bandwidth cap' },
  { kind: 'slicer', label: 'slicer' },
  { kind: 'stall', label: 'mid-frame stall' },
  { kind: 'corruptNext', label: 'corrupt next unit' },
  { kind: 'reset', label: 'connection reset' },
  { kind: 'blackhole', label: 'blackhole' },
];

export function faultOf(kind: FaultKind, dir: LinkFault['dir'], a: number, b: number): LinkFault {
  switch (kind) {
    case 'latency':
      return { dir, latencyMs: a, jitterMs: b };
    case 'bandwidth':
      return { dir, bandwidth: Math.max(1, a) };
    case 'slicer':
      return { dir, sliceBytes: Math.max(1, a), sliceGapMs: b };
    case 'stall':
      return { dir, stallMs: a };
    case 'corruptNext':
      return { dir, corruptNext: true };
    case 'reset':
      return { dir, reset: true };
    case 'blackhole':
      return { dir, blackhole: true };
  }
}

/** The range of a fault's first or second parameter: the lab's (the command validator's, `run --link-fault`'s). */
function paramRange(kind: FaultKind, which: 0 | 1): NumberRange {
  if (kind === 'bandwidth' && which === 0) return NUMBER_RANGES.bandwidth;
  if (kind === 'slicer' && which === 0) return NUMBER_RANGES.sliceBytes;
  return NUMBER_RANGES.faultMs;
}

/** Label of a holding fault, as the fault kinds read in the form. */
export function faultLabel(f: LinkFault): string {
  const kind: FaultKind = f.blackhole
    ? 'blackhole'
    : f.stallMs !== undefined
      ? 'stall'
      : f.sliceBytes !== undefined
        ? 'slicer'
        : f.bandwidth !== undefined
          ? 'bandwidth'
          : 'latency';
  return `${KINDS.find((k) => k.kind === kind)!.label} (${f.dir})`;
}

/**
 * Why faults cannot be applied or cleared from what is on screen, or null when they can: only
 * the lab's running topology takes them (a trace or a capture is a recording; taps watch a
 * cluster the lab did not start).
 */
export function faultBlocker(
  view: LabView,
  snapshot: Pick<SessionSnapshot, 'running'> | null,
): string | null {
  if (view.kind === 'trace')
    return 'A saved trace or capture is a recording: its links cannot be faulted. Back to live to fault the running topology.';
  if (view.kind === 'tap')
    return 'Taps watch a cluster the lab did not start: the lab cannot fault its links. Back to live to fault the lab topology.';
  if (!snapshot?.running) return 'No topology is running: Start one to apply link faults.';
  return null;
}

/** The faults holding now, by link id, from the links' views (the engine's state). */
export function activeFaults(links: readonly LinkView[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of links) if (l.fault) out[l.id] = faultLabel(l.fault);
  return out;
}

const PARAMS: Partial<Record<FaultKind, [string, string?]>> = {
  latency: ['latency ms', 'jitter ms'],
  bandwidth: ['bytes/s'],
  slicer: ['slice bytes', 'gap ms'],
  stall: ['stall ms'],
};

const DEFAULTS: Record<FaultKind, [number, number]> = {
  latency: [50, 10],
  bandwidth: [1_000_000, 0],
  slicer: [7, 1],
  stall: [2000, 0],
  corruptNext: [0, 0],
  reset: [0, 0],
  blackhole: [0, 0],
};

export function FaultControls() {
  // The link views carry each link's faults; their counters change ten times a second, which
  // this panel does not show (a fault set or cleared is listed within half a second).
  const links = useSampled(useLab, (s) => s.links, READOUT_MS);
  // A trace point or the taps may show running ranks: faults act only on the lab's live topology.
  const blocked = useLab((s) => faultBlocker(s.view, s.snapshot));
  const running = blocked === null;
  const selectedRank = useUi((s) => s.selectedRank);
  const selectedHost = useUi((s) => s.selectedHost);
  const [link, setLink] = useState('');
  const [dir, setDir] = useState<LinkFault['dir']>('up');
  const [kind, setKind] = useState<FaultKind>('latency');
  const [a, setA] = useState(DEFAULTS.latency[0]);
  const [b, setB] = useState(DEFAULTS.latency[1]);
  const [fieldErrors, setFieldErrors] = useState<{ a?: string | null; b?: string | null }>({});
  const refused = Boolean(fieldErrors.a || fieldErrors.b);
  // The faults holding now are the engine's (each link's view): a new topology starts with none.
  const active = activeFaults(links);

  // Without an explicit choice, aim at the selection: a rank's data leg, else its host's uplink.
  const preferred =
    (selectedRank !== null &&
      links.find((l) => l.rank === selectedRank && l.kind === 'loopback' && l.channel === 'data')?.id) ||
    (selectedHost !== null &&
      links.find((l) => l.host === selectedHost && l.kind === 'uplink' && l.channel === 'data')?.id) ||
    links[0]?.id ||
    '';
  const target = link && links.some((l) => l.id === link) ? link : preferred;
  const params = PARAMS[kind];

  const apply = async () => {
    const fault = faultOf(kind, dir, a, b);
    await send({ type: 'setLinkFault', link: target, fault });
  };
  const clear = async (id: string) => {
    await send({ type: 'setLinkFault', link: id, fault: null });
  };

  return (
    <details className="faults">
      <summary>
        Link faults
        {Object.keys(active).length > 0 && (
          <span className="tag warn">{Object.keys(active).length} active</span>
        )}
      </summary>
      <div className="form-grid">
        <label className="span2">
          Link
          <select aria-label="Fault link" value={target} onChange={(e) => setLink(e.target.value)}>
            {links.map((l) => (
              <option key={l.id} value={l.id}>
                {l.id}
              </option>
            ))}
          </select>
        </label>
        <label>
          Fault
          <select
            aria-label="Fault kind"
            value={kind}
            onChange={(e) => {
              const k = e.target.value as FaultKind;
              setKind(k);
              setA(DEFAULTS[k][0]);
              setB(DEFAULTS[k][1]);
            }}
          >
            {KINDS.map((k) => (
              <option key={k.kind} value={k.kind}>
                {k.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Direction
          <select
            aria-label="Fault direction"
            value={dir}
            onChange={(e) => setDir(e.target.value as LinkFault['dir'])}
          >
            <option value="up">up (toward controller)</option>
            <option value="down">down</option>
            <option value="both">both</option>
          </select>
        </label>
        {params && (
          <CommitNumberInput
            label={params[0]}
            value={a}
            range={paramRange(kind, 0)}
            onCommit={setA}
            onError={(e) => setFieldErrors((f) => ({ ...f, a: e }))}
          />
        )}
        {params?.[1] && (
          <CommitNumberInput
            label={params[1]}
            value={b}
            range={paramRange(kind, 1)}
            onCommit={setB}
            onError={(e) => setFieldErrors((f) => ({ ...f, b: e }))}
          />
        )}
      </div>
      <div className="selection-buttons faults-buttons">
        <button
          type="button"
          className="danger"
          disabled={!running || !target || refused}
          title={blocked ?? (refused ? 'Correct the values marked above first' : undefined)}
          onClick={() => void apply()}
        >
          Apply fault
        </button>
        <button
          type="button"
          disabled={!running || !target}
          title={blocked ?? undefined}
          onClick={() => void clear(target)}
        >
          Clear fault
        </button>
      </div>
      {Object.keys(active).length > 0 && (
        <ul className="active-faults" aria-label="Active faults">
          {Object.entries(active).map(([id, what]) => (
            <li key={id}>
              <span className="mono">{id}</span> {what}
              <button
                type="button"
                className="link"
                aria-label={`Clear fault on ${id}`}
                disabled={!running}
                title={blocked ?? undefined}
                onClick={() => void clear(id)}
              >
                clear
              </button>
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}
