import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { until } from './eventually';
import { makeTempDir } from './temp-dir';
import { startXvfb } from './xvfb';

// The real Mixxx 2.3 (Debian's mixxx) under a private Xvfb display, driven the way a DJ drives it:
// its keyboard shortcuts, sent with xdotool. Facts taken from Mixxx itself, restated here:
// - the settings folder (`--settingsPath`) holds `soundconfig.xml` (a `SoundManagerConfig` with
//   `api`, `samplerate`, `force_network_clock` and `SoundDevice`/`output` elements) and one
//   `broadcast_profiles/<name>.bcp.xml` per Live Broadcasting connection (a `BroadcastProfile`
//   whose `Servertype` is `Icecast2`, `Format` `OGG` or `MP3`, `OggDynamicUpdate` 1 sends each
//   track's tags in a new Ogg header);
// - a machine without a sound card still needs an output device: an ALSA `null` PCM in the
//   user's `~/.asoundrc` is one, and `force_network_clock` makes the broadcast pace the engine;
// - on a first start Mixxx asks for the music library folder ("Choose music library directory");
// - the files named on the command line are loaded into decks from the second on;
// - its keyboard mapping (en_US.kbd.cfg): `l` plays or pauses deck 2, `d` deck 1, Ctrl+O loads a
//   file into deck 1 ("Load track to Deck 1"), Ctrl+L turns Live Broadcasting on and off.

const run = promisify(execFile);

export interface MixxxConnection {
  name: string;
  port: number;
  mount: string;
  password: string;
}

export interface Mixxx {
  /** Presses keys in Mixxx's main window, e.g. `ctrl+l`, `l`. */
  press(...keys: string[]): Promise<void>;
  /** Loads a file into deck 1 through File → Load track to Deck 1, as a DJ picks the next track. */
  loadDeck1(file: string): Promise<void>;
  log(): string;
  close(): Promise<void>;
}

function profile(connection: MixxxConnection): string {
  const values: Record<string, string | number> = {
    ProfileName: connection.name,
    SecureCredentialsStorage: 0,
    Enabled: 1,
    Host: '127.0.0.1',
    Port: connection.port,
    Servertype: 'Icecast2',
    Login: 'source',
    Password: connection.password,
    EnableReconnect: 0,
    Mountpoint: connection.mount,
    StreamName: 'svc test',
    StreamPublic: 0,
    Format: 'OGG',
    Bitrate: 96,
    Channels: 2,
    EnableMetadata: 0,
    MetadataFormat: '$artist - $title',
    OggDynamicUpdate: 1,
  };
  const elements = Object.entries(values).map(([key, value]) => `  <${key}>${value}</${key}>`);
  return `<!DOCTYPE broadcastprofile>\n<BroadcastProfile>\n${elements.join('\n')}\n</BroadcastProfile>\n`;
}

function writeSettings(home: string, settings: string, connections: readonly MixxxConnection[]): void {
  fs.writeFileSync(path.join(home, '.asoundrc'), 'pcm.svcnull {\n  type null\n  hint { show on description "no sound card" }\n}\n');
  fs.mkdirSync(path.join(settings, 'broadcast_profiles'), { recursive: true });
  fs.writeFileSync(
    path.join(settings, 'soundconfig.xml'),
    `<!DOCTYPE SoundManagerConfig>
<SoundManagerConfig samplerate="48000" latency="5" sync_buffers="2" force_network_clock="1" deck_count="2" api="ALSA">
 <SoundDevice name="svcnull" portAudioIndex="0">
  <output type="Master" index="0" channel="0" channel_count="2"/>
 </SoundDevice>
</SoundManagerConfig>
`,
  );
  for (const connection of connections) fs.writeFileSync(path.join(settings, 'broadcast_profiles', `${connection.name}.bcp.xml`), profile(connection));
}

/**
 * Starts Mixxx with `deck2File` in deck 2 and the given Live Broadcasting connections (not yet on
 * air), and waits until its main window is up.
 */
export async function startMixxx(deck2File: string, connections: readonly MixxxConnection[], musicDir: string): Promise<Mixxx> {
  const home = makeTempDir('svc-mixxx-');
  const settings = path.join(home.dir, 'settings');
  writeSettings(home.dir, settings, connections);
  const xvfb = await startXvfb('1600x900x24');
  const env = { ...process.env, HOME: home.dir, DISPLAY: xvfb.display, QT_QPA_PLATFORM: 'xcb', LIBGL_ALWAYS_SOFTWARE: '1' };
  const xdotool = async (...args: string[]) => (await run('xdotool', args, { env, timeout: 60_000 })).stdout.trim();
  // Every log line reaches mixxx.log at once: start-up is followed there.
  const mixxx = spawn('mixxx', ['--settingsPath', `${settings}/`, '--logFlushLevel', 'debug', deck2File], { env, stdio: ['ignore', 'ignore', 'ignore'] });
  const logFile = path.join(settings, 'mixxx.log');
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  const dialogNamed = async (windowName: string) => (await xdotool('search', '--name', windowName).catch(() => '')).split('\n')[0] ?? '';
  // A dialog takes keys only once it is ready, and may come late: answer it until `done`. After an
  // answer the dialog closes (or, not ready yet, stays up and is answered again a moment later).
  const answer = async (windowName: string, text: string, done: () => boolean, what: string) => {
    const deadline = Date.now() + 90_000;
    const left = () => Math.max(0, deadline - Date.now());
    const failed = () => new Error(`Mixxx: ${what} did not happen\n${log().slice(-3000)}`);
    while (!done()) {
      let dialog = '';
      await until(async () => done() || (dialog = await dialogNamed(windowName)) !== '', what, left(), 50).catch(() => {
        throw failed();
      });
      if (dialog === '') continue;
      await xdotool('windowfocus', '--sync', dialog).catch(() => '');
      await xdotool('key', 'ctrl+a');
      await xdotool('type', '--delay', '10', text);
      await xdotool('key', 'Return');
      await until(async () => done() || (await dialogNamed(windowName)) === '', `${what}: the dialog took the answer`, Math.min(left(), 1000), 50).catch(
        () => undefined,
      );
      if (left() === 0) throw failed();
    }
  };
  try {
    await answer('Choose music library directory', musicDir, () => log().includes('Displaying main window'), 'the main window');
  } catch (error) {
    mixxx.kill('SIGKILL');
    xvfb.process.kill();
    throw error;
  }
  // The main window is the widest of Mixxx's top-level windows.
  const main = async () => {
    let widest = { id: '', width: 0 };
    for (const id of (await xdotool('search', '--class', 'mixxx')).split('\n')) {
      const width = Number(/Geometry: (\d+)x/.exec(await xdotool('getwindowgeometry', id).catch(() => ''))?.[1] ?? 0);
      if (width > widest.width) widest = { id, width };
    }
    return widest.id;
  };
  const mainWindow = await main();
  const press = async (...keys: string[]) => {
    await xdotool('windowfocus', '--sync', mainWindow);
    for (const key of keys) await xdotool('key', '--window', mainWindow, key);
  };
  return {
    press,
    async loadDeck1(file) {
      const count = (line: string) => () => log().split(line).length - 1;
      const loads = count('slotLoadTrack "[Channel1]"');
      // Mixxx analyses every track once it is loaded into a deck (PlayerManager on newTrackLoaded):
      // its analyser queueing the track is the first line after the load has finished.
      const analysed = count('AnalyzerThread - Enqueueing next track');
      const [loadsBefore, analysedBefore] = [loads(), analysed()];
      await press('ctrl+o');
      await answer('Load track to Deck 1', file, () => loads() > loadsBefore, 'loading deck 1');
      await until(() => analysed() > analysedBefore, 'Mixxx finished loading deck 1 (its analyser queued the track)', 60_000, 50);
    },
    log,
    async close() {
      const exited = new Promise((resolve) => mixxx.once('exit', resolve));
      mixxx.kill('SIGKILL');
      await exited;
      xvfb.process.kill();
      home.cleanup();
    },
  };
}
