import type { Streams } from './io';

// Small pieces of `svc report` (docs/cli.md "`svc report`"): the file name the server gives, and the
// progress line on a terminal.

/** The name in a Content-Disposition header (RFC 8187 `filename*` first); never a path. */
export function fileNameOf(header: string | null): string {
  const extended = /filename\*=UTF-8''([^;]+)/i.exec(header ?? '');
  let name: string | undefined;
  if (extended) {
    try {
      name = decodeURIComponent(extended[1]);
    } catch {
      name = undefined;
    }
  }
  name ??= /filename="([^"]*)"/i.exec(header ?? '')?.[1];
  const safe = (name ?? '').replace(/[\\/]/g, '_').replace(/^\.+/, '');
  return safe === '' ? 'report.txt' : safe;
}

/** Bytes received so far, rewritten at most twice a second, on stderr when it is a terminal. */
export class ProgressLine {
  private bytes = 0;
  private shownAt = 0;

  constructor(private readonly io: Pick<Streams, 'status' | 'stderrIsTTY'>) {}

  add(bytes: number): void {
    this.bytes += bytes;
    const now = Date.now();
    if (!this.io.stderrIsTTY || now - this.shownAt < 500) return;
    this.shownAt = now;
    this.io.status(`report: ${(this.bytes / 1024).toFixed(0)} KiB received`);
  }

  end(): void {
    if (this.shownAt > 0) this.io.status('');
  }
}
