// What one complete unit is and whether flodl would accept it: the kind name
// the engine's own tap uses (so a tapped or imported trace reads like the
// lab's), the rank it concerns, and the verdict of the codec's decoders via
// `dissect` (outer MAC/header first, then the nested RoundFrame/ControlFrame).
import type { UnitLayer } from '@shared/lab/records';
import { readU32LE } from '@shared/wire/bytes';
import { channelOfMagic, type Channel } from '@shared/wire/channel';
import {
  CONTROL_HANDSHAKE_MAGIC_ACK,
  CONTROL_HANDSHAKE_MAGIC_RANK,
  HANDSHAKE_MAGIC_CONTROLLER_ACK,
  HANDSHAKE_MAGIC_RANK,
  MUX_HEADER_LEN,
} from '@shared/wire/constants';
import { dissect } from '@shared/wire/dissect';
import type { WireErrorCode } from '@shared/wire/errors';
import type { Mac } from '@shared/wire/mac';
import { muxKindOfByte } from '@shared/wire/mux';
import { NESTED_KIND, nestedLayerOf, opaquePayloadVerdict } from '@shared/wire/nested';
import { decodeRelayControl, type RelayControlMsg } from '@shared/wire/relay-control';
import type { ControlIndexTable } from '@shared/wire/control-msg-tables';

export interface JudgeContext {
  mac: Mac;
  ceiling: number;
  controlVersion?: number;
  /** The control message index table the capture's cluster speaks (default v2). */
  indexTable?: ControlIndexTable;
}

export interface UnitFacts {
  kind: string;
  rank?: number;
  verdict: 'ok' | WireErrorCode;
  message?: string;
  summary: string;
  /** A relay's Hello names its host and ranks (the link's identity). */
  hello?: { host: string; ranks: number[] };
  /** The channel a magic or handshake selects. */
  channel?: Exclude<Channel, 'http'>;
}

/** Handshake magics and the channel each belongs to. */
export const HANDSHAKE_KINDS: Record<number, { channel: 'data' | 'control'; ack: boolean }> = {
  [HANDSHAKE_MAGIC_RANK]: { channel: 'data', ack: false },
  [HANDSHAKE_MAGIC_CONTROLLER_ACK]: { channel: 'data', ack: true },
  [CONTROL_HANDSHAKE_MAGIC_RANK]: { channel: 'control', ack: false },
  [CONTROL_HANDSHAKE_MAGIC_ACK]: { channel: 'control', ack: true },
};

/** The kind of a len-framed blob or mux payload by its leading magic (the shared rule, wire/nested.ts). */
export function innerKindOf(payload: Uint8Array): 'RoundFrame' | 'ControlFrame' | null {
  const layer = nestedLayerOf(payload);
  return layer ? NESTED_KIND[layer] : null;
}

export function judgeWholeUnit(layer: UnitLayer, bytes: Uint8Array, ctx: JudgeContext): UnitFacts {
  switch (layer) {
    case 'channelMagic': {
      const ch = channelOfMagic(bytes);
      if (ch !== 'data' && ch !== 'control')
        return {
          kind: 'magic',
          verdict: 'BAD_MAGIC',
          message: 'not a data/control channel magic',
          summary: 'channel magic',
        };
      return {
        kind: `${ch.toUpperCase()} magic`,
        verdict: 'ok',
        channel: ch,
        summary: `channel magic ${ch.toUpperCase()} 0x${readU32LE(bytes, 0).toString(16).toUpperCase()}`,
      };
    }
    case 'handshake':
      return judgeHandshake(bytes, ctx);
    case 'mux':
      return judgeMux(bytes, ctx);
    case 'lenframe':
      return judgeLenFrame(bytes, ctx);
  }
}

function judgeHandshake(bytes: Uint8Array, ctx: JudgeContext): UnitFacts {
  const info = HANDSHAKE_KINDS[readU32LE(bytes, 0)];
  const d = dissect('handshake', bytes, { mac: ctx.mac });
  const kind = info ? `${info.channel}Handshake${info.ack ? 'Ack' : ''}` : 'handshake';
  const rank = info && !info.ack && bytes.length >= 12 ? readU32LE(bytes, 8) : undefined;
  const version = bytes.length >= 8 ? readU32LE(bytes, 4) : undefined;
  return {
    kind,
    rank,
    channel: info?.channel,
    verdict: d.verdict,
    message: d.message,
    summary: `${d.kind}${rank !== undefined ? ` rank=${rank}` : ''} v${version ?? '?'}`,
  };
}

function judgeMux(bytes: Uint8Array, ctx: JudgeContext): UnitFacts {
  const d = dissect('mux', bytes, {
    mac: ctx.mac,
    ceiling: ctx.ceiling,
    controlVersion: ctx.controlVersion,
    indexTable: ctx.indexTable,
  });
  const kindByte = bytes[8];
  const recKind = muxKindOfByte(kindByte) ?? `kind 0x${kindByte.toString(16)}`;
  const headerRank = readU32LE(bytes, 9);
  const payloadLen = bytes.length - MUX_HEADER_LEN;
  let verdict = d.verdict;
  let message = d.message;
  if (verdict === 'ok' && d.inner && d.inner.verdict !== 'ok') {
    verdict = d.inner.verdict;
    message = `${d.inner.kind}: ${d.inner.message ?? d.inner.verdict}`;
  }
  if (recKind === 'Control') {
    // Named even when the MAC fails (a wrong salt): the verdict says it would be rejected.
    let msg: RelayControlMsg | null;
    try {
      msg = decodeRelayControl(bytes.subarray(MUX_HEADER_LEN));
    } catch {
      msg = null;
    }
    if (msg?.type === 'Hello')
      return {
        kind: 'Hello',
        verdict,
        message,
        hello: verdict === 'ok' ? { host: msg.host, ranks: msg.ranks } : undefined,
        summary: `Hello host=${msg.host} ranks=[${msg.ranks.join(',')}]`,
      };
    if (msg?.type === 'RankExit' || msg?.type === 'DeclareDead')
      return { kind: msg.type, rank: msg.rank, verdict, message, summary: `${msg.type} rank=${msg.rank}` };
    if (msg) return { kind: msg.type, verdict, message, summary: msg.type };
  }
  const inner = d.inner ? ` ${d.inner.kind}` : '';
  return {
    kind: recKind,
    rank: recKind === 'Data' ? headerRank : undefined,
    verdict,
    message,
    summary: `${recKind}${recKind === 'Data' ? ` r=${headerRank}` : ''}${inner} ${payloadLen} B`,
  };
}

function judgeLenFrame(bytes: Uint8Array, ctx: JudgeContext): UnitFacts {
  const d = dissect('lenframe', bytes, {
    mac: ctx.mac,
    ceiling: ctx.ceiling,
    controlVersion: ctx.controlVersion,
    indexTable: ctx.indexTable,
  });
  const kind = innerKindOf(bytes.subarray(4)) ?? 'LenFrame';
  let verdict = d.verdict;
  let message = d.message;
  const opaque = d.inner ? null : opaquePayloadVerdict('lenframe');
  if (verdict === 'ok' && opaque) {
    verdict = opaque.code;
    message = opaque.message;
  } else if (verdict === 'ok' && d.inner && d.inner.verdict !== 'ok') {
    verdict = d.inner.verdict;
    message = d.inner.message;
  }
  return { kind, verdict, message, summary: `${d.inner?.kind ?? kind} ${bytes.length - 4} B` };
}
