import { describe, expect, it } from 'vitest';
import {
  decodeRelaySpec,
  encodeRelaySpec,
  relaySpecFromEnv,
  RELAY_SPEC_ENV,
  RELAY_SPEC_ENV_OLD,
  type RelaySpecJson,
} from './relay-spec';

const spec: RelaySpecJson = {
  host: 'h0',
  controller_host: '127.0.0.1',
  controller_port: 41000,
  ranks: [0, 1],
  salt_hex: '0123456789abcdef0123456789abcdef',
  world_size: 4,
  data_channel: true,
  frame_ceiling_bytes: 0,
};
const hexOf = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('hex');

describe('RelaySpec (flodl launch contract)', () => {
  it('is lowercase hex of the JSON and round-trips', () => {
    const text = encodeRelaySpec(spec);
    expect(text).toMatch(/^[0-9a-f]+$/);
    expect(Buffer.from(text, 'hex').toString()).toBe(JSON.stringify(spec));
    expect(decodeRelaySpec(text)).toEqual(spec);
    expect(decodeRelaySpec(`  ${text.toUpperCase()}\n`)).toEqual(spec);
  });

  it('reads the current variable first, then the older name', () => {
    expect(relaySpecFromEnv({})).toBeUndefined();
    expect(relaySpecFromEnv({ [RELAY_SPEC_ENV_OLD]: 'ab' })).toEqual({
      name: RELAY_SPEC_ENV_OLD,
      value: 'ab',
    });
    expect(relaySpecFromEnv({ [RELAY_SPEC_ENV_OLD]: 'ab', [RELAY_SPEC_ENV]: 'cd' })?.name).toBe(
      RELAY_SPEC_ENV,
    );
  });

  it('frame_ceiling_bytes defaults to 0 (serde default)', () => {
    const { frame_ceiling_bytes: _, ...rest } = spec;
    expect(decodeRelaySpec(hexOf(rest)).frame_ceiling_bytes).toBe(0);
  });

  it.each([
    ['not hex', 'zz', /FLODL_INTERNAL_RELAY_JSON: not hex/],
    ['odd length', 'abc', /not hex/],
    ['hex of no JSON', Buffer.from('{nope').toString('hex'), /hex decodes to no JSON/],
    ['an array', hexOf([1]), /not an object/],
    ['no host', hexOf({ ...spec, host: undefined }), /field 'host'/],
    ['port past 65530', hexOf({ ...spec, controller_port: 65531 }), /field 'controller_port'/],
    ['rank past world', hexOf({ ...spec, ranks: [0, 4] }), /field 'ranks'.*world_size 4/],
    ['repeated rank', hexOf({ ...spec, ranks: [1, 1] }), /without repeats/],
    ['short salt', hexOf({ ...spec, salt_hex: 'abcd' }), /salt_hex.*32 chars/],
    ['data_channel a string', hexOf({ ...spec, data_channel: 'yes' }), /field 'data_channel'/],
    ['negative ceiling', hexOf({ ...spec, frame_ceiling_bytes: -1 }), /frame_ceiling_bytes/],
  ])('%s is a named RelaySpecError', (_, text, re) => {
    expect(() => decodeRelaySpec(text)).toThrow(re);
    try {
      decodeRelaySpec(text);
    } catch (e) {
      expect((e as Error).name).toBe('RelaySpecError');
    }
  });
});
