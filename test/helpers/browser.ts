import fs from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { describeWithPeers, findProgram, PEERS } from './peers';
import { makeTempDir } from './temp-dir';

// Headless Chromium (Debian package `chromium`, installed by .ci/run) driven by playwright-core.

export const CHROMIUM = findProgram('chromium') ?? '/usr/bin/chromium';
export const ARTIFACTS = path.join(__dirname, '..', 'artifacts');

export function chromiumInstalled(): boolean {
  return PEERS.chromium.present();
}

/** `describe` with Chromium present; otherwise skipped with one line (a failure under CI). */
export function describeWithChromium(name: string, body: () => void): void {
  describeWithPeers(['chromium'], name, body);
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh browser with a new, empty profile directory. */
export async function launchBrowser(viewport: { width: number; height: number }, options: { timezoneId?: string } = {}): Promise<Browser> {
  const profile = makeTempDir('svc-chromium-');
  const context = await chromium.launchPersistentContext(profile.dir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    ...options,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      profile.cleanup();
    },
  };
}

export function artifactPath(name: string): string {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, name);
}

/**
 * Screenshots laid side by side, `perRow` to a row, on one image saved as test/artifacts/`name`
 * (a strip of a change, for a person to look at; nothing asserts on it).
 */
export async function saveStrip(
  browser: Browser,
  shots: readonly Buffer[],
  name: string,
  cell: { width: number; height: number },
  perRow = shots.length,
): Promise<void> {
  const board = await browser.context.newPage();
  try {
    const columns = Math.max(1, Math.min(perRow, shots.length));
    await board.setViewportSize({ width: (cell.width + 10) * columns, height: (cell.height + 10) * Math.ceil(shots.length / columns) });
    await board.setContent(
      `<body style="margin:0;background:#000">${shots.map((shot) => `<img style="margin:5px" src="data:image/png;base64,${shot.toString('base64')}">`).join('')}</body>`,
    );
    await board.screenshot({ path: artifactPath(name), fullPage: true });
  } finally {
    await board.close();
  }
}
