// Live reassembly from captured segments: in order per direction, holes named as gaps, a
// retransmission trimmed, a late join, a reset, a client port used again.
import { describe, expect, it } from 'vitest';
import { TCP_ACK, TCP_FIN, TCP_RST, TCP_SYN, type TcpSegment } from './capture-file';
import { LiveTcpStreams, type StreamSink } from './live-reassembly';

const SERVER = { host: '127.0.0.1', port: 9000 };

function harness() {
  const log: string[] = [];
  const streams = new LiveTcpStreams(
    SERVER,
    (ends): StreamSink => {
      const n = ends.clientPort;
      return {
        observe: (dir, b) => log.push(`${n} ${dir} data ${Buffer.from(b).toString()}`),
        lost: (dir, bytes) => log.push(`${n} ${dir} lost ${bytes}`),
        ended: (dir, by, reset) => log.push(`${n} ${dir} ended by ${by}${reset ? ' reset' : ''}`),
        dispose: () => log.push(`${n} disposed`),
      };
    },
    (ms) => ms,
  );
  return { log, streams };
}

function seg(up: boolean, seq: number, flags: number, text = '', clientPort = 5000): TcpSegment {
  const payload = Buffer.from(text);
  return {
    time: 1,
    src: '127.0.0.1',
    srcPort: up ? clientPort : SERVER.port,
    dst: '127.0.0.1',
    dstPort: up ? SERVER.port : clientPort,
    seq,
    ack: 0,
    flags,
    payloadLen: payload.length,
    payload,
  };
}

describe('live TCP reassembly', () => {
  it('hands on each direction in order and ends with the FINs', () => {
    const { log, streams } = harness();
    streams.segment(seg(true, 100, TCP_SYN));
    streams.segment(seg(false, 500, TCP_SYN | TCP_ACK));
    streams.segment(seg(true, 101, TCP_ACK, 'abc'));
    streams.segment(seg(false, 501, TCP_ACK, 'xy'));
    streams.segment(seg(true, 104, TCP_ACK | TCP_FIN, 'd'));
    streams.segment(seg(false, 503, TCP_ACK | TCP_FIN));
    streams.segment(seg(true, 106, TCP_ACK)); // the last ACK starts nothing
    expect(log).toEqual([
      '5000 up data abc',
      '5000 down data xy',
      '5000 up data d',
      '5000 up ended by client',
      '5000 down ended by server',
      '5000 disposed',
    ]);
    expect(streams.size).toBe(0);
  });

  it('names a hole as a gap of its size, trims a retransmission, and a FIN past a hole', () => {
    const { log, streams } = harness();
    streams.segment(seg(true, 0, TCP_SYN));
    streams.segment(seg(true, 1, TCP_ACK, 'aaaa'));
    streams.segment(seg(true, 9, TCP_ACK, 'cc')); // 4 bytes never seen
    streams.segment(seg(true, 9, TCP_ACK, 'ccdd')); // resent with 2 new bytes
    streams.segment(seg(true, 20, TCP_ACK | TCP_FIN)); // 7 more never seen
    expect(log).toEqual([
      '5000 up data aaaa',
      '5000 up lost 4',
      '5000 up data cc',
      '5000 up data dd',
      '5000 up lost 7',
      '5000 up ended by client',
    ]);
  });

  it('wraps sequence numbers at 2^32', () => {
    const { log, streams } = harness();
    streams.segment(seg(true, 0xfffffffd, TCP_SYN));
    streams.segment(seg(true, 0xfffffffe, TCP_ACK, 'abcd'));
    streams.segment(seg(true, 2, TCP_ACK, 'ef'));
    expect(log).toEqual(['5000 up data abcd', '5000 up data ef']);
  });

  it('joins a connection late at its first bytes, and a reset ends both directions', () => {
    const { log, streams } = harness();
    streams.segment(seg(false, 7000, TCP_ACK)); // a bare ACK of a connection never seen
    streams.segment(seg(true, 42, TCP_ACK, 'late'));
    streams.segment(seg(false, 9, TCP_RST));
    expect(log).toEqual([
      '5000 up data late',
      '5000 up ended by server reset',
      '5000 down ended by server reset',
      '5000 disposed',
    ]);
  });

  it('a SYN from a client port still open ends the old connection first; other ports are not its own', () => {
    const { log, streams } = harness();
    streams.segment(seg(true, 0, TCP_SYN));
    streams.segment(seg(true, 1, TCP_ACK, 'one'));
    streams.segment(seg(true, 900, TCP_SYN));
    streams.segment(seg(true, 901, TCP_ACK, 'two'));
    streams.segment({ ...seg(true, 1, TCP_ACK, 'other'), dstPort: 9001 });
    expect(log).toEqual([
      '5000 up data one',
      '5000 up ended by client',
      '5000 down ended by server',
      '5000 disposed',
      '5000 up data two',
    ]);
    streams.closeAll(2);
    expect(log.slice(-3)).toEqual(['5000 up ended by client', '5000 down ended by server', '5000 disposed']);
  });
});
