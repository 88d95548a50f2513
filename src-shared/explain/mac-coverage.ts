// What a MAC field covers, as byte ranges of the unit (WIRE.md 2.3), so the
// hex pane can shade them when the MAC is selected.

export interface ByteRange {
  start: number;
  end: number;
}

interface KeyedField {
  key?: string;
  offset: number;
  length: number;
  children?: KeyedField[];
}

/** The ranges `macField` covers, given the fields it sits among (`siblings`); [] if it is not a MAC. */
export function macCoverage(macField: KeyedField, siblings: readonly KeyedField[]): ByteRange[] {
  const find = (key: string) => siblings.find((f) => f.key === key);
  switch (macField.key) {
    case 'mux.auth_tag': {
      // Header bytes 0..17 and the payload.
      const base = macField.offset - 17;
      const payload = find('mux.payload');
      const out = [{ start: base, end: base + 17 }];
      if (payload && payload.length)
        out.push({ start: payload.offset, end: payload.offset + payload.length });
      return out;
    }
    case 'cf.auth_tag': {
      // msg_kind, payload_len (header bytes 16..24) and the payload; not the magic or the version.
      const base = macField.offset - 8;
      const payload = find('cf.payload');
      const out = [{ start: base + 16, end: base + 24 }];
      if (payload && payload.length)
        out.push({ start: payload.offset, end: payload.offset + payload.length });
      return out;
    }
    case 'rf.footer': {
      // Every byte of the frame before the footer.
      const first = siblings[0];
      return first ? [{ start: first.offset, end: macField.offset }] : [];
    }
    case 'hs.auth_tag': {
      const first = siblings[0];
      return first ? [{ start: first.offset, end: macField.offset }] : [];
    }
    default:
      return [];
  }
}
