import fs from 'node:fs/promises';
import path from 'node:path';
import { trackDataOf, type Output } from './output';
import { dlsFile, dlsTemplate, itemToggleOf } from './dls-file';

// `dls` (docs/outputs.md "dls: DAB+ through ODR-PadEnc"): the current track as the DLS text file
// with DL Plus tags that ODR-PadEnc (`--dls FILE`) reads before each label it sends. Written
// whole to a file beside it and renamed over it, so a reader never sees half a file. A new
// track flips the item toggle; nothing current clears the running bit.

export interface DlsConfig {
  name: string;
  /** The file ODR-PadEnc reads. */
  path: string;
  /** The label, default `{{artist}} - {{title}}`; `{{artist}}` and `{{title}}` are tagged. */
  format?: string;
}

export function createDlsOutput(config: DlsConfig): Output {
  const template = dlsTemplate(config.format);
  const directory = path.dirname(config.path);
  const temporary = path.join(directory, `.${path.basename(config.path)}.${process.pid}.tmp`);
  let lastDbid: number | undefined;
  let toggle: 0 | 1 | undefined;
  return {
    name: config.name,
    type: 'dls',
    feeds: { changed: 'track.changed', settled: 'track.settled', restored: 'track.deleted' },
    latestOnly: true,
    target: config.path,
    async send(message) {
      const track = trackDataOf(message);
      toggle ??= itemToggleOf(await fs.readFile(config.path, 'latin1').catch(() => ''));
      const current = typeof track.dbid === 'number' ? track.dbid : undefined;
      const next = current !== lastDbid && current !== undefined ? (toggle === 1 ? 0 : 1) : toggle;
      const text = dlsFile(template, track, { itemToggle: next, itemRunning: current === undefined ? 0 : 1 });
      try {
        await fs.writeFile(temporary, text, 'utf8');
        await fs.rename(temporary, config.path);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        return { outcome: 'retry', error: `cannot write the DLS file (${typeof code === 'string' ? code : 'error'})` };
      }
      toggle = next;
      lastDbid = current;
      return { outcome: 'delivered', receipt: text.split('\n').at(-2) ?? '' };
    },
    close: () => Promise.resolve(),
  };
}
