// Component tests: the views render the store's state with the names and
// states people and tests rely on (rendered to markup, no browser needed).
import { describe, it, expect, beforeEach } from 'vitest';
import { renderToStaticMarkup } from 'react-dom/server';
import { TopologyView } from './TopologyView';
import { SavingsView } from './SavingsView';
import { FindingsView, jumpToRecord, nearestRecordOf } from './FindingsView';
import { useLab, recordRing, workloadKey } from '../store/lab-store';
import { formToConfig, useUi } from '../store/ui-store';
import { emptyLabData } from '../store/apply-batch';
import { snapshot, record } from '../test-fixtures';
import { roundFrameBytes } from '@shared/sweep/theory';

// Server rendering reads a zustand 5 store through getInitialState (its
// server snapshot), so the tests place their state there.
const labInitial = { ...useLab.getInitialState() };
const uiInitial = { ...useUi.getInitialState() };
const setLab = (patch: Partial<ReturnType<typeof useLab.getState>>) =>
  Object.assign(useLab.getInitialState(), patch);
const setUi = (patch: Partial<ReturnType<typeof useUi.getState>>) =>
  Object.assign(useUi.getInitialState(), patch);

const attrsOf = (html: string, label: string) =>
  new RegExp(`<[^>]*aria-label="${label}"[^>]*>`).exec(html)?.[0] ?? '';

describe('views', () => {
  beforeEach(() => {
    Object.assign(useLab.getInitialState(), labInitial, emptyLabData());
    Object.assign(useUi.getInitialState(), uiInitial);
  });

  it('Topology labels every host and rank and carries each rank state', () => {
    const snap = snapshot();
    snap.ranks[3] = { ...snap.ranks[3], state: 'paused' };
    snap.ranks[5] = { ...snap.ranks[5], state: 'dead' };
    snap.ranks[6] = { ...snap.ranks[6], state: 'exited' };
    setLab({ snapshot: snap });
    const html = renderToStaticMarkup(<TopologyView />);
    expect(html).toContain('aria-label="Topology"');
    expect(attrsOf(html, 'host h0')).toContain('data-state="up"');
    expect(attrsOf(html, 'host h1')).toContain('role="group"');
    // Each chip's name says its rank and its state: a screen reader hears what the colour shows.
    expect(attrsOf(html, 'rank 0: alive')).toContain('data-state="alive"');
    expect(attrsOf(html, 'rank 3: paused')).toContain('data-state="paused"');
    expect(attrsOf(html, 'rank 5: dead')).toContain('data-state="dead"');
    // An exited rank (a clean stop) is not dead: its own state, drawn and named so.
    expect(attrsOf(html, 'rank 6: exited')).toContain('data-state="exited"');
    expect(html.match(/aria-label="rank \d+: [^"]+"/g)).toHaveLength(8);
    expect(attrsOf(html, 'relay h0: up')).toContain('aria-pressed');
  });

  it("a rank chip's name says what its pause led to, in the words the chip shows", () => {
    const snap = snapshot();
    snap.ranks[2] = { ...snap.ranks[2], state: 'dead', stopped: true };
    snap.ranks[4] = { ...snap.ranks[4], state: 'dead', resumedAfterDeath: true };
    snap.hosts[1] = { ...snap.hosts[1], state: 'dead' };
    setLab({ snapshot: snap });
    const html = renderToStaticMarkup(<TopologyView />);
    expect(attrsOf(html, 'rank 2: declared dead while paused')).toContain('data-stopped="true"');
    expect(attrsOf(html, 'rank 4: dead · resumed, out of the reduce')).toContain('data-state="dead"');
    expect(attrsOf(html, 'relay h1: dead')).toMatch(/class="[^"]*dead/);
  });

  it('a stopped session draws its relays and ranks stopped, not dead; a rank killed before stays dead', () => {
    const snap = snapshot({ running: false });
    snap.ranks = snap.ranks.map((r) => ({ ...r, state: r.rank === 1 ? 'dead' : 'exited' }));
    snap.hosts = snap.hosts.map((h) => ({ ...h, state: 'stopped' }));
    setLab({ snapshot: snap });
    const html = renderToStaticMarkup(<TopologyView />);
    expect(attrsOf(html, 'rank 1: dead')).toContain('data-state="dead"');
    for (const r of [0, 2, 3, 4, 5, 6, 7]) {
      expect(attrsOf(html, `rank ${r}: exited`)).toContain('data-state="exited"');
      expect(attrsOf(html, `rank ${r}: exited`)).not.toMatch(/class="[^"]*dead/);
    }
    for (const h of ['h0', 'h1']) {
      expect(attrsOf(html, `relay ${h}: stopped`)).not.toMatch(/class="[^"]*dead/);
      expect(attrsOf(html, `relay ${h}: stopped`)).toContain('stopped');
    }
    // The words: one "dead" (rank 1's), the rest say exited, the relays say stopped.
    const text = html.replace(/<[^>]+>/g, ' ');
    expect(text.match(/\bdead\b/g)).toHaveLength(1);
    expect(text).toMatch(/h0 relay\s+stopped/);
  });

  it('a trace with no topology says so instead of showing the default one', () => {
    const snap = snapshot({ running: false, hosts: [], ranks: [] });
    snap.config = { ...snap.config, ranksPerHost: [], rounds: 0 };
    setLab({ snapshot: snap, links: snap.links.slice(0, 1) });
    const html = renderToStaticMarkup(<TopologyView />);
    expect(html).toContain('no topology: one connection');
    expect(html).toContain('aria-label="No topology"');
    expect(html).toContain(snap.links[0]!.id);
    // Not the lab's defaults as if they were the trace's (fold · elastic · 4.00 MiB f32).
    expect(html).not.toMatch(/fold · elastic/);
    expect(html).not.toContain('aria-label="controller"');
  });

  it('the taps view says it shows taps, never that a trace has no topology', () => {
    const snap = snapshot({ running: true, hosts: [], ranks: [] });
    snap.config = { ...snap.config, ranksPerHost: [], rounds: 0 };
    setLab({ snapshot: snap, links: snap.links.slice(0, 2), view: { kind: 'tap', taps: 1 } });
    const html = renderToStaticMarkup(<TopologyView />);
    expect(html).not.toMatch(/trace/i);
    expect(html).toMatch(/Taps on a cluster the lab did not start/);
    expect(html).toContain('aria-label="Tapped links"');
  });

  it("shows the session's control index table with what it means, and the form sets the next one", () => {
    const snap = snapshot();
    setLab({ snapshot: { ...snap, config: { ...snap.config, controlIndexTable: 'v2-late' } } });
    const html = renderToStaticMarkup(<TopologyView />);
    const shown = attrsOf(html, 'control index table v2-late');
    expect(shown).toMatch(/title="Which numbers the control messages use \(WIRE.md 3.5\)[^"]*Heartbeat = 5/);
    // The New topology form: one select with the two tables, v2 the default, its meaning as a tooltip.
    expect(html).toMatch(/<label title="Which numbers the control messages use[^"]*">Index table<select/);
    expect(html).toContain('<option value="v2" selected="">v2 (default)</option>');
    expect(html).toContain('<option value="v2-late">v2-late</option>');
    expect(formToConfig({ ...useUi.getInitialState().form, controlIndexTable: 'v2-late' })).toMatchObject({
      controlIndexTable: 'v2-late',
    });
    // A form saved before the setting existed sends none (the lab's default, v2, applies).
    expect(formToConfig(useUi.getInitialState().form)).not.toHaveProperty('controlIndexTable');
  });

  it('offers Resume rank for a paused rank, and disables Kill rank for a dead one', () => {
    const snap = snapshot();
    snap.ranks[3] = { ...snap.ranks[3], state: 'paused' };
    snap.ranks[5] = { ...snap.ranks[5], state: 'dead' };
    setLab({ snapshot: snap });
    setUi({ selectedRank: 3, selectedHost: 0 });
    let html = renderToStaticMarkup(<TopologyView />);
    expect(html).toMatch(/<button[^>]*>Resume rank<\/button>/);
    expect(html).not.toContain('>Pause rank<');
    expect(html).toMatch(/<button[^>]*class="danger"[^>]*>Kill rank<\/button>/);
    expect(html).not.toMatch(/<button[^>]*disabled=""[^>]*>Kill rank</);
    setUi({ selectedRank: 5, selectedHost: 1 });
    html = renderToStaticMarkup(<TopologyView />);
    expect(html).toMatch(/<button[^>]*disabled=""[^>]*>Kill rank<\/button>/);
    expect(html).toMatch(/<button[^>]*>Kill host<\/button>/);
  });

  it('in a trace or the taps, kill, pause and faults are disabled and say why', () => {
    const snap = snapshot({ running: true });
    const trace = { kind: 'trace' as const, name: 'a.ndjson', duration: 9, t: 4, complete: true, marks: [] };
    for (const view of [trace, { kind: 'tap' as const, taps: 1 }]) {
      setLab({ snapshot: snap, view });
      setUi({ selectedRank: 1, selectedHost: 0 });
      const html = renderToStaticMarkup(<TopologyView />);
      for (const b of ['Kill rank', 'Pause rank', 'Kill host', 'Apply fault'])
        expect(html, `${view.kind}: ${b}`).toMatch(new RegExp(`<button[^>]*disabled=""[^>]*>${b}</button>`));
      expect(html).toMatch(
        /<button[^>]*title="(A saved trace is a recording|Taps watch)[^"]*"[^>]*>Kill rank</,
      );
    }
    setLab({ view: { kind: 'live' } });
    expect(renderToStaticMarkup(<TopologyView />)).not.toMatch(/<button[^>]*disabled=""[^>]*>Kill rank</);
  });

  it('direct mode draws no relay boxes; a new session has no link faults listed', () => {
    const snap = snapshot();
    snap.config = { ...snap.config, mode: 'direct' };
    setLab({ snapshot: snap });
    const html = renderToStaticMarkup(<TopologyView />);
    expect(html).not.toContain('aria-label="relay h0');
    expect(html).toContain('h0 · no relay (direct)');
    expect(html).toContain('aria-label="host h0 (no relay): up"');
    setLab({ snapshot: snapshot() });
    expect(renderToStaticMarkup(<TopologyView />)).toContain('aria-label="relay h0: up"');
  });

  it('a comparison from another workload is not shown under the running topology', () => {
    const rows = [
      {
        mode: 'fold' as const,
        labOnly: false,
        rounds: 3,
        uplinkBytesPerHostPerRound: [100, 100],
        ratioToDirect: [0.25, 0.25],
        theoryRatio: [0.25, 0.25],
        msPerRound: 10,
      },
    ];
    setLab({
      snapshot: snapshot(),
      compare: { busy: false, rows, error: null, workload: '4,4|2097152|bf16' },
    });
    expect(renderToStaticMarkup(<SavingsView />)).not.toContain('Modes compared');
    setLab({
      snapshot: snapshot(),
      compare: { busy: false, rows, error: null, workload: workloadKey(snapshot().config) },
    });
    expect(renderToStaticMarkup(<SavingsView />)).toContain('Modes compared');
  });

  it('a rank declared dead while paused says so and can still be resumed (SIGCONT)', () => {
    // Issue 10: after the staleness a paused rank turned "dead" and both buttons greyed out.
    const snap = snapshot();
    snap.ranks[2] = { ...snap.ranks[2], state: 'dead', stopped: true };
    snap.ranks[4] = { ...snap.ranks[4], state: 'dead', resumedAfterDeath: true };
    setLab({ snapshot: snap });
    setUi({ selectedRank: 2, selectedHost: 0 });
    let html = renderToStaticMarkup(<TopologyView />);
    expect(html).toContain('declared dead while paused');
    expect(html).toMatch(/<button(?![^>]*disabled)[^>]*>Resume rank<\/button>/);
    setUi({ selectedRank: 4, selectedHost: 1 });
    html = renderToStaticMarkup(<TopologyView />);
    expect(html).toContain('dead · resumed, out of the reduce');
    expect(html).toMatch(/<button[^>]*disabled=""[^>]*>Pause rank<\/button>/);
  });

  it('Byte savings shows K and the measured ratio per host', () => {
    const per = 1000;
    setLab({
      snapshot: snapshot(),
      savings: [1, 2, 3].map((round) => ({
        round,
        uplink: [per + 25, per + 25],
        direct: [4 * per, 4 * per],
        k: [4, 4],
        perRank: [per, per],
      })),
    });
    const html = renderToStaticMarkup(<SavingsView />);
    expect(html).toContain('aria-label="Byte savings"');
    const row = attrsOf(html, 'savings h0');
    expect(row).toContain('data-k="4"');
    expect(row).toContain(`data-ratio="${((per + 25) / (4 * per)).toFixed(6)}"`);
    expect(html).toContain('K = 4');
    expect(html).toMatch(/<button[^>]*>Compare modes<\/button>/);
    // The formula with the live numbers, and what the table means in this mode.
    expect(html).toContain('ratio = uplink / (K × one rank) = 1.0 KiB / (4 × 1000 B) = 0.2562');
    expect(html).toMatch(/fold: the relay folds/);
  });

  it('Byte savings puts the wire format’s exact figure beside the measured one and says why K = 1 and forward exceed 1', () => {
    // Issue 30 #3 and #16: the theory read "1/2 = 0.5000" for a ratio that cannot go under (25 + F) / (2 × (4 + F)),
    // and nothing said why K = 1 and forward read above 1, or that a bf16 frame is half the "1 MiB" model.
    const snap = snapshot();
    snap.config = { ...snap.config, modelBytes: 1024 * 1024, dtype: 'bf16', ranksPerHost: [4, 4] };
    const F = roundFrameBytes(1024 * 1024, 'bf16');
    setLab({
      snapshot: snap,
      savings: [1, 2].map((round) => ({
        round,
        uplink: [25 + F, 25 + F],
        direct: [4 * (4 + F), 4 * (4 + F)],
        k: [4, 4],
        perRank: [4 + F, 4 + F],
        exact: true,
      })),
    });
    let html = renderToStaticMarkup(<SavingsView />);
    const theory = (25 + F) / (4 * (4 + F));
    const row = attrsOf(html, 'savings h0');
    expect(row).toContain(`data-theory="${theory.toFixed(6)}"`);
    expect(row).toContain(`data-ratio="${theory.toFixed(6)}"`);
    expect(html).toContain(`title="(25 + F) / (4 × (4 + F)) with F = ${F} B"`);
    expect(html).toContain('1.00 MiB model (f32 elements), sent as bf16, 2 B an element: F = 512.0 KiB');
    // Closed, the line says it: which size is the model's and which the frame's.
    expect(html).toMatch(/<summary>F = 512.0 KiB a frame \(1.00 MiB model as f32, sent as bf16\) · why/);
    expect(html).toMatch(
      /25 \+ F up a relay’s uplink \(the mux record’s 25-byte header\), 4 \+ F from a rank/,
    );
    expect(html).toMatch(/for K = 1 above 1/);
    expect(html).not.toContain('Estimated from counter samples');
    snap.config = { ...snap.config, mode: 'forward' };
    setLab({ snapshot: { ...snap } });
    html = renderToStaticMarkup(<SavingsView />);
    expect(html).toMatch(/Forward sends K records of 25 \+ F: \(25 \+ F\) \/ \(4 \+ F\), above 1/);
    expect(attrsOf(html, 'savings h0')).toContain(`data-theory="${((25 + F) / (4 + F)).toFixed(6)}"`);
    // The topology header says which size is the model's and which the frame's.
    expect(renderToStaticMarkup(<TopologyView />)).toContain('1.00 MiB model · bf16 frames 512.0 KiB');
  });

  it('Byte savings after a death shows the K the host folded and says what was excluded', () => {
    setLab({
      snapshot: snapshot(),
      savings: [1, 2, 3, 4].map((round) => ({
        round,
        uplink: [1025, round < 3 ? 1025 : 0],
        direct: [round < 3 ? 4000 : 3000, round < 3 ? 4000 : 0],
        k: [round < 3 ? 4 : 3, round < 3 ? 4 : 0],
        perRank: [1000, round < 3 ? 1000 : 0],
      })),
    });
    const html = renderToStaticMarkup(<SavingsView />);
    expect(attrsOf(html, 'savings h0')).toContain('data-k="3"');
    expect(attrsOf(html, 'savings h0')).toContain(`data-ratio="${(1025 / 3000).toFixed(6)}"`);
    expect(html).toMatch(/h0: ratio = [^<]*\(3 × 1000 B\)/);
    expect(html).toMatch(/excluded: 0 rounds not taken part in, 2 at another K/);
    expect(html).toMatch(/excluded: 2 rounds not taken part in/);
  });

  it('Findings list each finding with a jump to its record', () => {
    setLab({
      findings: [
        {
          id: 1,
          t: 1200,
          severity: 'error',
          kind: 'hmac',
          message: 'HostFrame from h1 failed its MAC',
          recordSeq: 42,
        },
      ],
    });
    const html = renderToStaticMarkup(<FindingsView />);
    expect(html).toContain('aria-label="Findings"');
    expect(html).toContain('HostFrame from h1 failed its MAC');
    expect(html).toContain('aria-label="Jump to record 42"');
  });

  it('a finding about a round pins the ladder to it while its unit stays selected; other reveals do not', () => {
    recordRing.clear();
    recordRing.push([record(27705, { rank: 2, round: 315 })]);
    // The stall of round 316 jumps to the last unit of its rank, the consensus of round 315.
    jumpToRecord(27705, 316);
    expect(useUi.getState().selectedSeq).toBe(27705);
    expect(useUi.getState().ladderPin).toEqual({ seq: 27705, round: 316 });
    // A finding of no round (a kill's DeclareDead) draws its unit's own round.
    jumpToRecord(27705);
    expect(useUi.getState().ladderPin).toBeNull();
    recordRing.clear();
  });

  it('a finding without a record finds the last record of its ranks at its time', () => {
    recordRing.clear();
    recordRing.push([
      record(1, { rank: 5, t: 100 }),
      record(2, { rank: 3, t: 150 }),
      record(3, { rank: 5, t: 200 }),
      record(4, { rank: 5, t: 300 }),
    ]);
    expect(nearestRecordOf([5], 250)).toBe(3);
    expect(nearestRecordOf([3, 7], 1000)).toBe(2);
    expect(nearestRecordOf([5], 50)).toBe(1);
    expect(nearestRecordOf([6], 1000)).toBeNull();
    setLab({
      findings: [
        { id: 2, t: 250, severity: 'warn', kind: 'dead', message: 'rank 5 declared dead', ranks: [5] },
      ],
    });
    expect(renderToStaticMarkup(<FindingsView />)).toContain('aria-label="Jump to a record of rank 5"');
    recordRing.clear();
  });
});
