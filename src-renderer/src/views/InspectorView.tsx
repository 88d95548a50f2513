// Three linked panes, like Wireshark's: the selected record, its field tree
// (from the dissector, nested payloads included) and a hex + ASCII view.
// Selecting a field highlights its bytes; clicking a byte selects its field.
import { useEffect, useMemo, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { RecordBytes } from '@shared/lab/contract';
import type { UnitRecord } from '@shared/lab/records';
import { hasTopology } from '@shared/lab/topology';
import {
  CONTROL_INDEX_TABLE_LABELS,
  DEFAULT_CONTROL_INDEX_TABLE,
  type ControlIndexTable,
} from '@shared/wire/control-msg-tables';
import { useLab, recordRing, send } from '../store/lab-store';
import { useUi } from '../store/ui-store';
import { dissectRecord, type RecordDissection } from '../lib/dissect-record';
import {
  ancestorKeys,
  fieldAt,
  hexToBytes,
  pathKey,
  visibleFieldRows,
  type FieldPath,
} from '../lib/field-ranges';
import { formatInt, formatTime } from '../lib/format';
import { describeField } from '@shared/explain/field-explanations';
import { macCoverage, type ByteRange } from '@shared/explain/mac-coverage';
import { HexView } from './HexView';
import { FieldHelp } from './FieldHelp';
import { RejectionPanel } from './RejectionPanel';
import { treeKeyMove } from '../lib/pane-keys';
import { bytesAsSent } from '../lib/rejection';
import { verdictNote } from '../lib/verdict-note';

interface Loaded {
  seq: number;
  record: UnitRecord;
  bytes: Uint8Array;
  meta: RecordBytes;
  dissection: RecordDissection;
}

export function InspectorView() {
  const selectedSeq = useUi((s) => s.selectedSeq);
  const selectedField = useUi((s) => s.selectedField);
  // A reproduction's Inspect may mark bytes of its decisive unit (repro-store.ts).
  const marked = useUi((s) => (s.markedBytes && s.markedBytes.seq === selectedSeq ? s.markedBytes : null));
  const saltHex = useLab((s) => s.snapshot?.saltHex);
  const controlVersion = useLab((s) => s.snapshot?.config.controlVersion);
  const indexTable = useLab((s) => s.snapshot?.config.controlIndexTable);
  const snapLen = useLab((s) => s.snapshot?.config.snapLen);
  // Look the record up when the selection changes (not on every frame of new records). A unit the
  // ring let go comes back with its bytes from the engine (the session's recording on disk).
  const ringRecord = useMemo(
    () => (selectedSeq !== null ? recordRing.findBySeq(selectedSeq) : undefined),
    [selectedSeq],
  );
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const [showSent, setShowSent] = useState(false);
  // A trace without a topology carries the default policy, which is not the run's: say there was none.
  const policy = useLab((s) =>
    s.snapshot && !hasTopology(s.snapshot.config) ? null : s.snapshot?.config.policy,
  );
  useEffect(() => setShowSent(false), [selectedSeq]);

  useEffect(() => {
    if (selectedSeq === null) return;
    let cancelled = false;
    setError(null);
    void send({ type: 'getRecordBytes', seq: selectedSeq }).then((reply) => {
      if (cancelled) return;
      const rec = ringRecord ?? (reply.ok ? reply.record : undefined);
      if (!reply.ok || !reply.bytes || !rec) {
        setLoaded(null);
        setError(reply.ok ? 'the lab kept no bytes for this record' : reply.message);
        return;
      }
      const bytes = hexToBytes(reply.bytes.hex);
      // Fewer bytes than were captured: the lab let them go. Say so; the dissector is not asked
      // about bytes that were never missing on the wire.
      if (bytes.length < rec.captured) {
        setLoaded(null);
        setError(
          `The lab no longer holds this unit's bytes (${bytes.length} of the ${rec.captured} captured): ` +
            'they were let go to bound memory, nothing was lost on the wire.',
        );
        return;
      }
      const dissection = dissectRecord(
        rec.layer,
        bytes,
        reply.bytes.saltHex || saltHex || '0'.repeat(32),
        controlVersion,
        indexTable,
      );
      setLoaded({ seq: selectedSeq, record: rec, bytes, meta: reply.bytes, dissection });
      // Open the top levels so the headers read at once.
      setExpanded(new Set(dissection.fields.map((_, i) => String(i))));
    });
    return () => {
      cancelled = true;
    };
  }, [selectedSeq, ringRecord, saltHex, controlVersion, indexTable]);

  const current = loaded && loaded.seq === selectedSeq ? loaded : null;
  const record = ringRecord ?? current?.record;
  const selectField = (path: FieldPath | null) => {
    useUi.getState().set({ selectedField: path });
    if (path) setExpanded((prev) => new Set([...prev, ...ancestorKeys(path.slice(0, -1))]));
  };

  return (
    <section aria-label="Inspector" className="panel inspector">
      <header className="panel-head">
        <h2>Inspector</h2>
        {record && <span className="muted mono">#{record.seq}</span>}
      </header>
      {!record ? (
        selectedSeq !== null && error ? (
          <p className="bad pad" role="alert">
            {error}
          </p>
        ) : (
          <p className="muted pad">
            {selectedSeq !== null ? 'Reading the unit…' : 'Select a record to inspect its fields and bytes.'}
          </p>
        )
      ) : (
        <>
          <RecordPane
            record={record}
            meta={current?.meta ?? null}
            dissection={current?.dissection ?? null}
            indexTable={indexTable ?? DEFAULT_CONTROL_INDEX_TABLE}
            snapLen={snapLen}
          />
          <RejectionPanel record={record} policy={policy} showSent={showSent} onShowSent={setShowSent} />
          {error && (
            <p className="bad pad" role="alert">
              {error}
            </p>
          )}
          <FieldTree
            dissection={current?.dissection ?? null}
            expanded={expanded}
            onToggle={(key) =>
              setExpanded((prev) => {
                const next = new Set(prev);
                if (next.has(key)) next.delete(key);
                else next.add(key);
                return next;
              })
            }
            selected={selectedField}
            onSelect={selectField}
          />
          <FieldHelp
            field={
              current && selectedField ? (fieldAt(current.dissection.fields, selectedField) ?? null) : null
            }
            saltHex={current?.meta.saltHex || saltHex}
          />
          {marked && (
            <p className="small pad" aria-label="Marked bytes">
              Marked: bytes {marked.offset}–{marked.offset + marked.length - 1}, {marked.label}
            </p>
          )}
          <HexView
            bytes={current ? (showSent ? bytesAsSent(current.bytes, record) : current.bytes) : null}
            flipped={record.corruption?.offset}
            fields={current?.dissection.fields ?? []}
            selected={selectedField}
            onSelect={selectField}
            covered={[
              ...(current && selectedField ? coveredBy(current.dissection.fields, selectedField) : []),
              ...(marked ? [{ start: marked.offset, end: marked.offset + marked.length }] : []),
            ]}
          />
        </>
      )}
    </section>
  );
}

function RecordPane({
  record: r,
  meta,
  dissection,
  indexTable,
  snapLen,
}: {
  record: UnitRecord;
  meta: RecordBytes | null;
  dissection: RecordDissection | null;
  indexTable: ControlIndexTable;
  snapLen?: number;
}) {
  // Captured short: the snap length cut the unit as it crossed (never the window letting bytes go).
  const short = r.captured < r.length;
  return (
    <div className="insp-record" aria-label="Record">
      <dl className="kv">
        <dt>kind</dt>
        <dd>
          <strong>{r.kind}</strong> <span className="muted">({r.layer})</span>
        </dd>
        <dt>link</dt>
        <dd className="mono">
          {r.link} {r.dir === 'up' ? '↑ up' : '↓ down'}
        </dd>
        <dt>time</dt>
        <dd className="mono">{formatTime(r.t)} s</dd>
        <dt>who</dt>
        <dd className="mono">
          {r.host !== undefined ? `h${r.host}` : '–'} {r.rank !== undefined ? `rank ${r.rank}` : ''}{' '}
          {r.round !== undefined ? `round ${r.round}` : ''}
        </dd>
        <dt>length</dt>
        <dd className="mono">
          {formatInt(r.length)} B{short ? `, captured ${formatInt(r.captured)} B` : ''}
        </dd>
        <dt>verdict</dt>
        <dd className={r.verdict === 'ok' ? 'ok' : 'bad'}>
          {r.verdict}
          {dissection && verdictNote(r, dissection) && (
            <span className="muted"> · {verdictNote(r, dissection)}</span>
          )}
        </dd>
        <dt>info</dt>
        <dd>{r.summary}</dd>
        {r.link.endsWith('.control') && (
          <>
            <dt>index table</dt>
            <dd className="mono" title={CONTROL_INDEX_TABLE_LABELS[indexTable]}>
              {indexTable}
            </dd>
          </>
        )}
      </dl>
      {short && (
        <p className="notice" role="note">
          Captured short: the snap length{snapLen ? ` (${formatInt(snapLen)} B)` : ''} kept{' '}
          {formatInt(meta?.captured ?? r.captured)} of {formatInt(r.length)} bytes as the unit crossed (New
          topology → Snap length sets it). Fields past the captured bytes are not shown.
        </p>
      )}
    </div>
  );
}

function FieldTree({
  dissection,
  expanded,
  onToggle,
  selected,
  onSelect,
}: {
  dissection: RecordDissection | null;
  expanded: Set<string>;
  onToggle: (key: string) => void;
  selected: FieldPath | null;
  onSelect: (p: FieldPath) => void;
}) {
  const rows = useMemo(
    () => (dissection ? visibleFieldRows(dissection.fields, expanded) : []),
    [dissection, expanded],
  );
  const selectedKey = selected ? pathKey(selected) : null;
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 20,
    overscan: 10,
  });
  useEffect(() => {
    if (selectedKey === null) return;
    const i = rows.findIndex((r) => pathKey(r.path) === selectedKey);
    if (i >= 0) virtualizer.scrollToIndex(i, { align: 'auto' });
  }, [selectedKey, rows, virtualizer]);

  return (
    <div
      className="insp-tree"
      ref={scrollRef}
      role="tree"
      aria-label="Fields"
      tabIndex={0}
      title="↑ ↓ move between fields, → opens, ← closes or goes to the parent, Enter opens or closes"
      onKeyDown={(e) => {
        const move = treeKeyMove(
          rows.map((r) => ({ key: pathKey(r.path), depth: r.depth, hasChildren: r.hasChildren })),
          selectedKey,
          expanded,
          e.key,
        );
        if (!move) return;
        e.preventDefault();
        if (move.toggle) onToggle(move.toggle);
        if (move.select !== undefined) onSelect(rows[move.select].path);
      }}
    >
      {!dissection ? (
        <p className="muted pad">Decoding…</p>
      ) : (
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const row = rows[item.index];
            const key = pathKey(row.path);
            const open = expanded.has(key);
            return (
              <div
                key={key}
                role="treeitem"
                aria-level={row.depth + 1}
                aria-expanded={row.hasChildren ? open : undefined}
                aria-selected={key === selectedKey}
                aria-label={`${row.field.name}: ${row.field.value}`}
                aria-description={describeField(row.field.key)}
                title={describeField(row.field.key)}
                data-key={row.field.key}
                data-offset={row.field.offset}
                data-length={row.field.length}
                className={`tree-row ${key === selectedKey ? 'selected' : ''}`}
                style={{ transform: `translateY(${item.start}px)`, paddingLeft: 6 + row.depth * 14 }}
                onClick={() => onSelect(row.path)}
              >
                <span
                  className="twisty"
                  onClick={(e) => {
                    e.stopPropagation();
                    if (row.hasChildren) onToggle(key);
                  }}
                >
                  {row.hasChildren ? (open ? '▾' : '▸') : ''}
                </span>
                <span className="fname">{row.field.name}</span>
                <span className="fvalue mono">{row.field.value}</span>
                <span className="frange muted mono">
                  [{row.field.offset}, +{row.field.length}]
                </span>
              </div>
            );
          })}
        </div>
      )}
    </div>
  );
}

/** The bytes the selected field covers if it is a MAC (WIRE.md 2.3), else none. */
function coveredBy(fields: RecordDissection['fields'], path: FieldPath): ByteRange[] {
  const field = fieldAt(fields, path);
  const parent = path.length > 1 ? fieldAt(fields, path.slice(0, -1)) : undefined;
  return field ? macCoverage(field, parent?.children ?? fields) : [];
}
