// The table explains every field the dissector shows: every reference vector,
// every mux kind, every RelayControlMsg and ControlFrame message variant of
// both index tables, every handshake, len-frames, short captures and garbage.
import { describe, expect, it } from 'vitest';
import { concatBytes, hexToBytes } from '../wire/bytes';
import { DTYPE_BF16, DTYPE_F32 } from '../wire/constants';
import { encodeControlFrame } from '../wire/control-frame';
import { CONTROL_INDEX_TABLES, MSG_TABLES } from '../wire/control-msg-tables';
import { dissect, type Field } from '../wire/dissect';
import {
  encodeControlAck,
  encodeControlHandshake,
  encodeDataAck,
  encodeDataHandshake,
} from '../wire/handshake';
import { encodeLenFrame } from '../wire/len-frame';
import { nobleMac } from '../wire/mac';
import { encodeMuxRecord } from '../wire/mux';
import { encodeRelayControl, type RelayControlMsg } from '../wire/relay-control';
import { encodeRoundFrame, tensorFromValues } from '../wire/round-frame';
import { SALT_A, VECTORS } from '../wire/test-helpers';
import { LAYERS, isLayer, type Layer } from '../wire/units-json';
import { FIELD_EXPLANATIONS, describeField, explanationFor } from './field-explanations';

const mac = nobleMac(SALT_A);

function* walk(fields: Field[]): Generator<Field> {
  for (const f of fields) {
    yield f;
    if (f.children) yield* walk(f.children);
  }
}

/** A mux Control record around any payload (its tag is not checked by the walk). */
function rawControl(payload: Uint8Array): Uint8Array {
  const rec = encodeMuxRecord({ kind: 'Data', rank: 0, payload }, mac);
  rec[8] = 2;
  return rec;
}

/** Units of every kind the dissector knows, as [layer, bytes, what]. */
function units(): [Layer, Uint8Array, string][] {
  const out: [Layer, Uint8Array, string][] = [];
  for (const v of VECTORS) if (isLayer(v.unit.layer)) out.push([v.unit.layer, hexToBytes(v.hex), v.name]);
  const rf = encodeRoundFrame(
    {
      roundKind: 0,
      weight: 2,
      tensors: [
        tensorFromValues(DTYPE_F32, [2], [1.5, 2.5]),
        tensorFromValues(DTYPE_BF16, [2, 2], [0, 0, 0, 0]),
      ],
    },
    mac,
  );
  out.push(
    ['roundframe', rf, 'RoundFrame'],
    ['roundframe', concatBytes(rf, new Uint8Array(3)), 'RoundFrame + trailing'],
  );
  out.push(['mux', encodeMuxRecord({ kind: 'HostFrame', payload: rf }, mac), 'HostFrame']);
  out.push(['mux', encodeMuxRecord({ kind: 'Broadcast', payload: rf }, mac), 'Broadcast']);
  out.push(['lenframe', encodeLenFrame(rf), 'len-framed RoundFrame']);
  const relayMsgs: RelayControlMsg[] = [
    { type: 'Hello', host: 'h0', ranks: [0, 1] },
    { type: 'HelloAck' },
    { type: 'RankExit', rank: 2 },
    { type: 'DeclareDead', rank: 3 },
  ];
  for (const msg of relayMsgs) {
    const p = encodeRelayControl(msg);
    out.push(['mux', encodeMuxRecord({ kind: 'Control', msg }, mac), `Control ${msg.type}`]);
    out.push(['mux', rawControl(concatBytes(p, new Uint8Array(2))), `Control ${msg.type} + trailing`]);
  }
  out.push(['mux', rawControl(new Uint8Array([9])), 'Control undecodable']);
  // Every variant of both message families under both index tables: the
  // index, then zero bytes (0 is a valid varint, f64, None and empty vec),
  // which leaves bytes over as ignored trailing bytes.
  for (const table of CONTROL_INDEX_TABLES) {
    for (const [family, kind] of [
      ['ControlMsgWire', 1],
      ['TimingMsgWire', 2],
    ] as const) {
      MSG_TABLES[table][family].forEach((spec, index) => {
        const payload = concatBytes(new Uint8Array([index]), new Uint8Array(40));
        const cf = encodeControlFrame({ version: 2, msgKind: kind, payload }, mac);
        out.push(['controlframe', cf, `${table} ${spec.name}`]);
        out.push([
          'mux',
          encodeMuxRecord({ kind: 'Data', rank: 1, payload: cf }, mac),
          `Data ${table} ${spec.name}`,
        ]);
        out.push(['lenframe', encodeLenFrame(cf), `len ${table} ${spec.name}`]);
      });
    }
  }
  out.push([
    'controlframe',
    encodeControlFrame({ version: 2, msgKind: 1, payload: new Uint8Array([250]) }, mac),
    'undecodable message',
  ]);
  out.push([
    'controlframe',
    encodeControlFrame({ version: 2, msgKind: 5, payload: new Uint8Array(0) }, mac),
    'Heartbeat kind',
  ]);
  const hello = { version: 3, rank: 1, worldSize: 4 };
  out.push(
    ['handshake', encodeDataHandshake(hello), 'data handshake'],
    ['handshake', encodeDataAck(3), 'data ack'],
    ['handshake', encodeControlHandshake(hello, mac), 'control handshake'],
    ['handshake', concatBytes(encodeControlAck(3, mac), new Uint8Array(4)), 'control ack + trailing'],
    ['handshake', hexToBytes('e1170df1'), 'channel magic'],
  );
  // Every prefix of a few units (short captures), and each unit read as every layer (garbage).
  const withPrefixes: [Layer, Uint8Array, string][] = [];
  for (const [layer, bytes, what] of out.slice(-12)) {
    for (let cut = 0; cut < bytes.length; cut += 3)
      withPrefixes.push([layer, bytes.subarray(0, cut), `${what} cut ${cut}`]);
  }
  for (const [, bytes, what] of out.slice(0, 40))
    for (const layer of LAYERS) withPrefixes.push([layer, bytes, `${what} as ${layer}`]);
  return [...out, ...withPrefixes];
}

describe('field explanations', () => {
  it('explain every field the dissector shows', () => {
    const missing = new Set<string>();
    const seen = new Set<string>();
    for (const [layer, bytes, what] of units()) {
      const d = dissect(layer, bytes, { mac });
      for (const f of walk(d.fields)) {
        if (!f.key || !explanationFor(f.key)) missing.add(`${what}: ${f.name} (${f.key ?? 'no key'})`);
        else seen.add(f.key);
      }
    }
    expect([...missing]).toEqual([]);
    // The walk reaches the units the issue names.
    for (const k of [
      'mux.kind',
      'relay.msg',
      'rf.weight',
      'rf.tensor.data',
      'rf.footer',
      'cf.msg_kind',
      'ctl.msg',
      'ctl.step_count',
      'hs.world_size',
      'len.len',
      'ctl.trailing',
      'relay.trailing',
    ])
      expect(seen, k).toContain(k);
  });

  it('each entry has a meaning, what flodl does, a WIRE.md section and a unique filter name', () => {
    const keys = new Set<string>();
    for (const x of FIELD_EXPLANATIONS) {
      expect(x.key).toMatch(/^(mux|relay|rf|cf|ctl|hs|len|lab)\.[a-z_.]+$/);
      expect(keys.has(x.key), x.key).toBe(false);
      keys.add(x.key);
      expect(x.meaning.length, x.key).toBeGreaterThan(5);
      expect(x.flodl.length, x.key).toBeGreaterThan(5);
      expect(x.wire).toMatch(/^WIRE\.md \d+(\.\d+)?$/);
    }
  });

  it('names every variant of both index tables and every mux kind as a value', () => {
    const ctl = explanationFor('ctl.msg')!.values!;
    for (const table of CONTROL_INDEX_TABLES)
      for (const family of ['ControlMsgWire', 'TimingMsgWire'] as const)
        for (const spec of MSG_TABLES[table][family]) expect(Object.keys(ctl)).toContain(spec.name);
    expect(Object.keys(explanationFor('mux.kind')!.values!)).toEqual([
      'Data',
      'Control',
      'HostFrame',
      'Broadcast',
    ]);
    expect(describeField('mux.auth_tag')).toMatch(/header bytes 0\.\.17.*WIRE\.md 2\.3/);
    expect(describeField('nope')).toBe('');
  });
});
