// WIRE.md 3.3 worked payloads (the mux_tests values).
import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from './bytes';
import type { WireError } from './errors';
import {
  decodeRelayControl,
  decodeRelayControlWithLength,
  encodeRelayControl,
  type RelayControlMsg,
} from './relay-control';

describe('RelayControlMsg', () => {
  it.each<[RelayControlMsg, string]>([
    [{ type: 'Hello', host: 'exa', ranks: [0, 3, 4] }, '000365786103000304'],
    [{ type: 'HelloAck' }, '01'],
    [{ type: 'RankExit', rank: 2 }, '0202'],
    [{ type: 'DeclareDead', rank: 4 }, '0304'],
    [{ type: 'Hello', host: 'big', ranks: [300, 70000] }, '0003626967' + '02fb2c01fc70110100'],
  ])('%j <-> %s', (msg, hex) => {
    expect(bytesToHex(encodeRelayControl(msg))).toBe(hex);
    expect(decodeRelayControl(hexToBytes(hex))).toEqual(msg);
  });

  it('v4+ Hello carries model_sigs', () => {
    const msg: RelayControlMsg = { type: 'Hello', host: 'exa', ranks: [0, 3, 4], modelSigs: [] };
    expect(bytesToHex(encodeRelayControl(msg))).toBe('00036578610300030400');
    const sig = new Uint8Array(32).fill(0xcd);
    const withSig = encodeRelayControl({ type: 'Hello', host: 'h', ranks: [1], modelSigs: [sig] });
    expect(decodeRelayControl(withSig, { modelSigs: true })).toEqual({
      type: 'Hello',
      host: 'h',
      ranks: [1],
      modelSigs: [sig],
    });
  });

  it('ignores trailing bytes after the message, as flodl does', () => {
    const { msg, used } = decodeRelayControlWithLength(hexToBytes('00036578610300030400'));
    expect(msg).toEqual({ type: 'Hello', host: 'exa', ranks: [0, 3, 4] });
    expect(used).toBe(9);
  });

  it('rejects unknown variants and truncated payloads as BAD_PAYLOAD', () => {
    for (const hex of ['04', '', '0003657861', '02']) {
      try {
        decodeRelayControl(hexToBytes(hex));
        expect.unreachable(hex);
      } catch (e) {
        expect((e as WireError).code).toBe('BAD_PAYLOAD');
      }
    }
  });
});
