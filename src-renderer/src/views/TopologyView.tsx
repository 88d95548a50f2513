// The cluster as it stands: the controller, each host with its relay and
// ranks, live bytes per second on every link, and each rank's state.
// Selecting a rank or host offers the kill and pause controls.
import { memo } from 'react';
import type { LinkView, RankView, HostView } from '@shared/lab/state';
import { useLab, send } from '../store/lab-store';
import { useUi } from '../store/ui-store';
import { formatRate } from '../lib/format';
import { sizeShort, sizeWords } from '../lib/savings-theory';
import { READOUT_MS, useSampled } from '../lib/use-sampled';
import type { LinkRate } from '../store/apply-batch';
import { INDEX_TABLE_HELP, NewTopologyForm } from './NewTopologyForm';
import { DEFAULT_CONTROL_INDEX_TABLE } from '@shared/wire/control-msg-tables';
import { FaultControls } from './FaultControls';
import { liveActionBlocker } from '../lib/source';
import { NoTopology } from './NoTopology';
import { hasTopology } from '@shared/lab/topology';
import type { SessionSnapshot } from '@shared/lab/state';
import type { LabView } from '@shared/lab/contract';
import { liveRankCount, noRankLeft } from '../lib/rank-states';

/**
 * The state a rank chip carries. An exited rank (its process ended without being declared dead: a
 * clean Stop ends every live rank so) is its own state, never drawn as dead.
 */
export function rankDataState(state: RankView['state']): string {
  return state;
}

/** A rank's state in words, with what a pause led to (flodl: a rank declared dead is not readmitted). */
export function rankStateLabel(rank: RankView): string {
  if (rank.state === 'dead' && rank.stopped) return 'declared dead while paused';
  if (rank.state === 'dead' && rank.resumedAfterDeath) return 'dead · resumed, out of the reduce';
  return rank.state;
}

/**
 * A rank chip's accessible name: its rank and the state it draws, in the words it shows. The state
 * is otherwise colour and a small word that the name (an aria-label) would hide from a screen reader.
 */
export function rankChipName(rank: RankView): string {
  return `rank ${rank.rank}: ${rankStateLabel(rank)}`;
}

/** A host's button name: which host and its state (a relay's dead or stopped is drawn only as colour and a tag). */
export function hostChipName(host: HostView, direct: boolean): string {
  return `${direct ? `host ${host.name} (no relay)` : `relay ${host.name}`}: ${host.state}`;
}

/** Pause and Resume: Resume whenever the process is held by SIGSTOP, even once it was declared dead. */
export function pauseAction(rank: RankView | undefined): {
  type: 'pauseRank' | 'resumeRank';
  enabled: boolean;
} {
  if (!rank) return { type: 'pauseRank', enabled: false };
  if (rank.stopped || rank.state === 'paused') return { type: 'resumeRank', enabled: true };
  return { type: 'pauseRank', enabled: rank.state === 'alive' || rank.state === 'starting' };
}

/**
 * The controller's line: the round it is on, read from the ranks as the toolbar reads them. A trace's
 * point is never "stopped" while ranks were live at it (a trace's snapshot is never running), a
 * session whose ranks are all dead is not "on round N" (its reduce has ended), and taps know only
 * the rounds they saw.
 */
export function controllerLine(s: SessionSnapshot, view: LabView['kind']): string {
  const done = `${s.roundsCompleted} rounds done`;
  if (view === 'tap') return `${s.roundsCompleted} rounds seen`;
  if (view === 'trace') {
    if (liveRankCount(s) > 0) return `on round ${s.round}`;
    return s.ranks.every((r) => r.state === 'exited') ? `stopped · ${done}` : `no rank live · ${done}`;
  }
  if (!s.running) return `stopped · ${done}`;
  return noRankLeft(s) ? `reduce ended: no rank is alive · ${done}` : `on round ${s.round}`;
}

function sumRates(
  links: LinkView[],
  rates: Record<string, LinkRate>,
  pick: (l: LinkView) => boolean,
): LinkRate {
  let up = 0;
  let down = 0;
  for (const l of links) {
    if (!pick(l)) continue;
    up += rates[l.id]?.up ?? 0;
    down += rates[l.id]?.down ?? 0;
  }
  return { up, down };
}

export function TopologyView() {
  const snapshot = useLab((s) => s.snapshot);
  // The counters come ten times a second; the rates are read, not watched (they are measured
  // over two seconds anyway). Each redraw of this panel re-lays out the page.
  const links = useSampled(useLab, (s) => s.links, READOUT_MS);
  const rates = useSampled(useLab, (s) => s.linkRates, READOUT_MS);
  const cfg = snapshot?.config;
  const viewKind = useLab((s) => s.view.kind);
  const tapView = viewKind === 'tap';
  // A snapshot from an older engine or trace carries no table: those spoke v2.
  const indexTable = cfg?.controlIndexTable ?? DEFAULT_CONTROL_INDEX_TABLE;

  return (
    <section aria-label="Topology" className="panel topology">
      <header className="panel-head">
        <h2>Topology</h2>
        {cfg && !hasTopology(cfg) && (
          <span className="muted">{tapView ? 'taps: no topology' : 'no topology: one connection'}</span>
        )}
        {cfg && hasTopology(cfg) && tapView && (
          // A tap learns hosts and ranks from their Hellos; the mode, policy and model size of a
          // cluster the lab did not start are not on that wire (the config holds the lab's defaults).
          <span className="muted" title="mode, policy and model size are not known from outside">
            taps: hosts and ranks from their Hellos
          </span>
        )}
        {cfg && hasTopology(cfg) && !tapView && (
          <span className="muted mono">
            {cfg.mode} · {cfg.policy} ·{' '}
            <span title={sizeWords(cfg)} aria-label="model and frame size">
              {sizeShort(cfg)}
            </span>{' '}
            ·{' '}
            <span title={INDEX_TABLE_HELP} aria-label={`control index table ${indexTable}`}>
              index table {indexTable}
            </span>
          </span>
        )}
      </header>
      <div className="panel-body topo-body">
        {!snapshot ? (
          <p className="muted">No topology yet.</p>
        ) : !hasTopology(snapshot.config) ? (
          <NoTopology links={links} tap={tapView} />
        ) : (
          <>
            <div className="node controller" aria-label="controller">
              <div className="node-title">controller</div>
              <div className="muted small">data + control (coordinator)</div>
              <div className="mono small">
                {controllerLine(snapshot, viewKind)} · salt {snapshot.saltHex.slice(0, 8)}…
              </div>
            </div>
            <div className="hosts">
              {snapshot.hosts.map((h) => (
                <HostCard
                  key={h.host}
                  host={h}
                  ranks={snapshot.ranks.filter((r) => r.host === h.host)}
                  links={links}
                  rates={rates}
                  direct={snapshot.config.mode === 'direct'}
                />
              ))}
            </div>
          </>
        )}
      </div>
      <SelectionActionsMemo />
      {/* A new session has no link faults: the list starts empty with it. */}
      <FaultControlsMemo key={snapshot?.startedAt ?? 0} />
      <NewTopologyFormMemo />
    </section>
  );
}

function HostCard({
  host,
  ranks,
  links,
  rates,
  direct,
}: {
  host: HostView;
  ranks: RankView[];
  links: LinkView[];
  rates: Record<string, LinkRate>;
  /** direct mode: no relay; each rank has its own connection to the controller. */
  direct: boolean;
}) {
  const selectedHost = useUi((s) => s.selectedHost);
  const uplink = sumRates(links, rates, (l) => l.kind === 'uplink' && l.host === host.host);
  const uplinkCount = links.filter((l) => l.kind === 'uplink' && l.host === host.host).length;
  return (
    <div
      role="group"
      aria-label={`host ${host.name}`}
      data-state={host.state}
      className={`host ${host.state} ${selectedHost === host.host ? 'selected' : ''}`}
      onClick={(e) => {
        if (e.target === e.currentTarget)
          useUi.getState().set({ selectedHost: host.host, selectedRank: null });
      }}
    >
      <div className="uplink" title={`${uplinkCount} uplink connection(s) to the controller`}>
        <span className="arrow">↑</span>
        <span className="mono" aria-label={`uplink ${host.name} up`}>
          {formatRate(uplink.up)}
        </span>
        <span className="arrow">↓</span>
        <span className="mono" aria-label={`uplink ${host.name} down`}>
          {formatRate(uplink.down)}
        </span>
      </div>
      {direct ? (
        <button
          type="button"
          className={`node host-label ${host.state}`}
          aria-label={hostChipName(host, true)}
          aria-pressed={selectedHost === host.host}
          title="direct (lab-only): no relay; each rank talks to the controller on its own connections"
          onClick={() => useUi.getState().set({ selectedHost: host.host, selectedRank: null })}
        >
          <span className="node-title">
            {host.name} · no relay (direct) <HostStateTag state={host.state} />
          </span>
        </button>
      ) : (
        <button
          type="button"
          className={`node relay ${host.state}`}
          aria-label={hostChipName(host, false)}
          aria-pressed={selectedHost === host.host}
          onClick={() => useUi.getState().set({ selectedHost: host.host, selectedRank: null })}
        >
          <span className="node-title">
            {host.name} relay <HostStateTag state={host.state} />
          </span>
        </button>
      )}
      <div className="ranks">
        {ranks.map((r) => (
          <RankChip key={r.rank} rank={r} links={links} rates={rates} />
        ))}
      </div>
    </div>
  );
}

/** A host that is not up says which: dead (killed, or all its ranks died) or stopped (the session's Stop closed it). */
function HostStateTag({ state }: { state: HostView['state'] }) {
  if (state === 'dead') return <em className="bad">dead</em>;
  if (state === 'stopped')
    return (
      <em className="muted" title="the session was stopped: the relay closed, nothing failed">
        stopped
      </em>
    );
  return null;
}

function RankChip({
  rank,
  links,
  rates,
}: {
  rank: RankView;
  links: LinkView[];
  rates: Record<string, LinkRate>;
}) {
  const selected = useUi((s) => s.selectedRank === rank.rank);
  const loop = sumRates(links, rates, (l) => l.rank === rank.rank);
  const state = rankDataState(rank.state);
  return (
    <button
      type="button"
      aria-label={rankChipName(rank)}
      aria-pressed={selected}
      data-state={state}
      data-stopped={rank.stopped ? 'true' : undefined}
      className={`rank ${state} ${selected ? 'selected' : ''}`}
      title={`rank ${rank.rank} on h${rank.host}: ${rankStateLabel(rank)}${rank.pid ? `, pid ${rank.pid}` : ''}, ${rank.roundsCompleted} rounds`}
      onClick={() => useUi.getState().set({ selectedRank: rank.rank, selectedHost: rank.host })}
    >
      <span className="rank-name">r{rank.rank}</span>
      <span className="rank-state">{rankStateLabel(rank)}</span>
      <span className="mono tiny" title="bytes per second up the rank's loopback legs">
        ↑{formatRate(loop.up)}
      </span>
      <span className="mono tiny muted" title="bytes per second down the rank's loopback legs">
        ↓{formatRate(loop.down)}
      </span>
    </button>
  );
}

// The panels below the hosts read the stores they need themselves: a redraw of the hosts
// (their rates) does not redraw them.
const SelectionActionsMemo = memo(SelectionActions);
const FaultControlsMemo = memo(FaultControls);
const NewTopologyFormMemo = memo(NewTopologyForm);

function SelectionActions() {
  const snapshot = useLab((s) => s.snapshot);
  const selectedRank = useUi((s) => s.selectedRank);
  const selectedHost = useUi((s) => s.selectedHost);
  const rank = selectedRank !== null ? snapshot?.ranks.find((r) => r.rank === selectedRank) : undefined;
  const host = selectedHost !== null ? snapshot?.hosts.find((h) => h.host === selectedHost) : undefined;
  const rankGone = !rank || rank.state === 'dead' || rank.state === 'exited';
  const pause = pauseAction(rank);
  // In a trace or the taps' view the lab's topology is not the one shown: nothing here applies.
  const blocked = useLab((s) => liveActionBlocker(s.view));
  return (
    <div className="selection" aria-label="Selection">
      <div className="selection-what">
        {rank ? (
          <>
            <strong>rank {rank.rank}</strong> on h{rank.host} · {rankStateLabel(rank)}
            {rank.pid ? ` · pid ${rank.pid}` : ''} · {rank.roundsCompleted} rounds
          </>
        ) : host ? (
          <>
            <strong>host {host.name}</strong> · {host.state} · ranks {host.ranks.join(', ')}
          </>
        ) : (
          <span className="muted">Select a rank or a host.</span>
        )}
      </div>
      <div className="selection-buttons">
        <button
          type="button"
          className="danger"
          disabled={rankGone || blocked !== null}
          onClick={() => rank && void send({ type: 'killRank', rank: rank.rank })}
          title={blocked ?? 'SIGKILL the rank process (K)'}
        >
          Kill rank
        </button>
        <button
          type="button"
          disabled={!pause.enabled || blocked !== null}
          onClick={() => rank && void send({ type: pause.type, rank: rank.rank })}
          title={
            blocked ??
            (rank?.stopped && rank.state === 'dead'
              ? 'SIGCONT: the process runs again; flodl does not readmit a rank it declared dead (P)'
              : 'SIGSTOP / SIGCONT the rank process (P)')
          }
        >
          {pause.type === 'resumeRank' ? 'Resume rank' : 'Pause rank'}
        </button>
        <button
          type="button"
          className="danger"
          disabled={!host || host.state !== 'up' || blocked !== null}
          onClick={() => host && void send({ type: 'killHost', host: host.host })}
          title={blocked ?? 'Kill the host: its relay and every rank on it (H)'}
        >
          Kill host
        </button>
      </div>
    </div>
  );
}
