// relay-lab import: a pcap or pcapng capture of a flodl cluster (tcpdump,
// Wireshark) decoded unit by unit, and saved as a trace the window opens.
import fs from 'node:fs';
import { checkOutputs, inputFile } from '../files';
import { saltFromHex } from '@shared/wire/salt';
import { DEFAULT_FRAME_CEILING } from '@shared/wire/constants';
import { nodeMac } from '../../crypto/node-mac';
import { importCapture, writeImportTrace } from '../../capture/import-capture';
import { UsageError, numberFlag, optionalNumberFlag, parseFlags, printJson } from '../args';
import { indexTableFlag, sessionSaltFlag } from './role-flags';
import type { Command } from './types';

const USAGE = `usage: relay-lab import CAPTURE.pcap|CAPTURE.pcapng --salt HEX [--trace OUT.ndjson] [--json]
  [--snap-len BYTES (64KiB)] [--ceiling BYTES (1GiB)] [--control-version N] [--index-table v2|v2-late]

Reads a tcpdump/Wireshark capture (Ethernet, Linux cooked v1/v2, loopback;
IPv4/IPv6), reassembles its TCP connections, finds the flodl streams and
decodes every unit, verifying MACs with the salt. Bytes the capture misses
are named as gaps. Exit 1 when a unit was undecodable or bytes are missing.`;

export const importCommand: Command = {
  summary: 'decode a pcap/pcapng capture of a flodl cluster into a trace',
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        salt: { type: 'string' },
        trace: { type: 'string' },
        json: { type: 'boolean' },
        'snap-len': { type: 'string' },
        ceiling: { type: 'string' },
        'control-version': { type: 'string' },
        'index-table': { type: 'string' },
        help: { type: 'boolean' },
      },
      true,
    );
    if (values.help) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError('give exactly one capture file');
    const file = positionals[0];
    const input = inputFile('the capture', file);
    const saltHex = sessionSaltFlag(values.salt).hex;
    const tracePath = values.trace;
    checkOutputs([{ label: '--trace', path: tracePath }], [input]);
    const snapLen = numberFlag(values['snap-len'], 'snap-len', 'snapLen', 64 * 1024);
    const ceiling = numberFlag(values.ceiling, 'ceiling', 'ceiling', DEFAULT_FRAME_CEILING);
    const controlVersion = optionalNumberFlag(values['control-version'], 'control-version', 'version');
    const salt = saltFromHex(saltHex);
    const indexTable = indexTableFlag(values['index-table']);
    const result = importCapture(new Uint8Array(fs.readFileSync(file)), {
      mac: nodeMac(salt),
      snapLen,
      ceiling,
      controlVersion,
      indexTable,
    });
    if (tracePath !== undefined) await writeImportTrace(result, salt, tracePath, snapLen, indexTable);
    const streams = result.streams.map((s) => ({
      link: s.link.id,
      client: `${s.conn.client.addr}:${s.conn.client.port}`,
      server: `${s.conn.server.addr}:${s.conn.server.port}`,
      midStream: s.conn.midStream,
      units: s.units.filter((u) => u.verdict === 'ok').length,
      undecodable: s.undecodable,
      gapBytes: s.gapBytes,
      gaps: s.units
        .filter((u) => u.verdict === 'gap')
        .map((u) => ({ t: u.t, dir: u.dir, length: u.length, why: u.message })),
    }));
    const bad = streams.some((s) => s.undecodable > 0 || s.gapBytes > 0);
    if (values.json) {
      printJson({
        capture: file,
        format: result.format,
        packets: result.packets,
        tcpConnections: result.tcpConnections,
        flodlStreams: streams.length,
        ranksPerHost: result.ranksPerHost,
        streams,
        trace: tracePath ?? null,
      });
    } else {
      process.stdout.write(
        `${file}: ${result.format}, ${result.packets} packets, ${result.tcpConnections} TCP connections, ${streams.length} flodl streams\n`,
      );
      for (const s of streams)
        process.stdout.write(
          `  ${s.link.padEnd(18)} ${s.client} -> ${s.server}  ${s.units} units ok, ${s.undecodable} undecodable, ${s.gapBytes} bytes missing${s.midStream ? ' (starts mid-stream)' : ''}\n`,
        );
      if (tracePath !== undefined) process.stdout.write(`trace saved to ${tracePath}\n`);
    }
    return bad ? 1 : 0;
  },
};
