import net from 'node:net';
import { trackDataOf, type Delivery, type Output } from './output';
import { rdsLines, rdsLinesTemplate } from './rds-text';

// `rds` (docs/outputs.md "rds: an FM station's RDS encoder"): one short TCP connection per
// track change to the encoder's ASCII command port, sending `TEXT=` (and `RTP=`, `DPS=` where
// configured) lines ended by CR LF, then closing, as Inovonics, Pira and other encoders take
// them from playout systems. At once on a change; only the newest when behind.

export interface RdsConfig {
  name: string;
  /** `tcp://host:port` */
  url: string;
  /** The RadioText, default `{{artist}} - {{title}}`. */
  format?: string;
  /** A dynamic PS text; absent: no `DPS=` line (the station name stays). */
  ps?: string;
  /** Also send RadioText Plus tags (ITEM.ARTIST, ITEM.TITLE) as `RTP=`. */
  rtPlus?: boolean;
}

/** How long a connection stays after the lines went out, for the encoder to read them. */
const LINGER_MS = 1000;

export function createRdsOutput(config: RdsConfig): Output {
  const address = new URL(config.url);
  const host = address.hostname.replace(/^\[|\]$/g, '');
  const port = Number(address.port);
  const template = rdsLinesTemplate(config.format ?? '{{artist}} - {{title}}', config.ps, config.rtPlus ?? false);
  return {
    name: config.name,
    type: 'rds',
    feeds: { changed: 'track.changed', restored: 'track.deleted' },
    latestOnly: true,
    target: `tcp://${address.host}`,
    async send(message, signal) {
      const lines = rdsLines(template, trackDataOf(message));
      const delivery = await sendLines(host, port, lines, signal);
      return delivery.outcome === 'delivered' ? { ...delivery, receipt: lines[0] ?? '' } : delivery;
    },
    close: () => Promise.resolve(),
  };
}

/** Connects, writes the lines, closes; delivered once the encoder's end has taken every byte. */
function sendLines(host: string, port: number, lines: readonly string[], signal: AbortSignal): Promise<Delivery> {
  return new Promise((resolve) => {
    let settled = false;
    let written = false;
    const socket = net.connect({ host, port });
    const finish = (delivery: Delivery) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(delivery);
    };
    const onAbort = () => finish({ outcome: 'retry', error: 'timed out after 10 s' });
    signal.addEventListener('abort', onAbort, { once: true });
    socket.on('error', (error: Error & { code?: string }) =>
      finish({ outcome: 'retry', error: error.code === 'ECONNREFUSED' ? 'connection refused' : `connection error (${error.code ?? 'unknown'})` }),
    );
    // Whatever the encoder answers ("+", "OK") is read and dropped: the lines are the message.
    socket.on('data', () => undefined);
    // Closed gently: the encoder's side closes, or a moment after every byte went out (an
    // encoder that keeps its side open). Destroyed at once, unread answer bytes could reset the
    // connection before the encoder read the lines.
    socket.on('close', () => finish(written ? { outcome: 'delivered' } : { outcome: 'retry', error: 'connection closed' }));
    socket.on('connect', () => {
      socket.end(lines.map((line) => `${line}\r\n`).join(''), 'latin1', () => {
        written = true;
        setTimeout(() => finish({ outcome: 'delivered' }), LINGER_MS).unref();
      });
    });
  });
}
