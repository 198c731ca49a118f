import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../../src/config/load';
import type { PlayListeners } from '../../../src/domain/play';
import { encodeVorbis, makeTone } from '../../helpers/audio-files';
import { eventually, until } from '../../helpers/eventually';
import { request } from '../../helpers/http';
import { freePort, startIcecast, startSource, type IcecastServer, type IcecastSource } from '../../helpers/icecast';
import { urlAuthMount } from '../../helpers/icecast-listeners';
import { describeWithPeers } from '../../helpers/peers';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/channels.md "Declaring channels", run as written (only its two port numbers are replaced by
// free ones): a real ezstream streams two tracks into svc's listener on /live.ogg, a real icecast2
// carries the audience on /stream.mp3 with the safe URL-authentication block, and three curl
// listeners, connected through both tracks, are counted on each of the DJ's plays.

const SECRET = 'channels-studio-secret';

interface Play {
  dbid: number;
  title: string;
  channel: string;
  end_reason: string | null;
  listeners: PlayListeners | null;
}

/** The docs' first yaml block under "Declaring channels". */
function docsExample(): string {
  const page = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'channels.md'), 'utf8');
  const section = page.slice(page.indexOf('## Declaring channels'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('docs/channels.md has no yaml block under "Declaring channels"');
  return block;
}

function runEzstream(configFile: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile('ezstream', ['-v', '-c', configFile], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

describeWithPeers(['icecast2', 'ezstream', 'sox', 'oggenc', 'vorbiscomment', 'curl'], 'channels: from the studio to the audience', () => {
  const temp = makeTempDir('svc-channels-');
  let t: TestServer | undefined;
  let icecast: IcecastServer | undefined;
  let audienceSource: IcecastSource | undefined;
  const curls: ChildProcess[] = [];
  afterAll(async () => {
    for (const curl of curls) if (curl.exitCode === null) curl.kill('SIGKILL');
    audienceSource?.stop();
    await icecast?.close();
    await t?.close();
    temp.cleanup();
  });

  it("When the DJ streams into /live.ogg and three listeners hear /stream.mp3, then each of the DJ's plays counts the three", async () => {
    const icecastPort = await freePort();
    const example = docsExample().replaceAll('http://127.0.0.1:8000', `http://127.0.0.1:${icecastPort}`).replace('port: 8001', 'port: 0');
    fs.writeFileSync(path.join(temp.dir, '.svcrc.yaml'), example);
    const loaded = (await loadConfig({ cwd: temp.dir, env: {} })).config;
    t = await startTestServer({ config: { secret: SECRET, channels: loaded.channels, icecastSource: loaded.icecastSource, reports: loaded.reports } as never });
    const listenerPort = t.server.icecast?.port;
    expect(listenerPort).toBeGreaterThan(0);

    // The audience's Icecast, with the safe block of docs/play-log.md on /stream.mp3.
    icecast = await startIcecast({ port: icecastPort, extraConfig: urlAuthMount(t.url, SECRET, '/stream.mp3', { add: false }) });
    audienceSource = await startSource(icecast, '/stream.mp3');
    for (let i = 0; i < 3; i++) {
      const curl = spawn('curl', ['-s', '-o', '/dev/null', '-A', `curl-listener-${i}`, `${icecast.url}/stream.mp3`], { stdio: 'ignore' });
      curls.push(curl);
    }
    const audience = icecast;
    await until(async () => {
      const source = (await audience.sources()).find((one) => String(one.listenurl).endsWith('/stream.mp3'));
      return Number(source?.listeners) === 3;
    }, 'three curl listeners on /stream.mp3');

    // The DJ: ezstream into svc's listener, as docs/dj-software.md configures it.
    const one = encodeVorbis(makeTone(temp.dir, 'one', 440, 3), { artist: 'DJ Set', title: 'Opening', album: 'Live' });
    const two = encodeVorbis(makeTone(temp.dir, 'two', 660, 3), { artist: 'DJ Set', title: 'Closing', album: 'Live' });
    const playlist = path.join(temp.dir, 'playlist.txt');
    fs.writeFileSync(playlist, `${one}\n${two}\n`);
    const ezstream = path.join(temp.dir, 'ezstream.xml');
    fs.writeFileSync(
      ezstream,
      `<ezstream>
  <servers><server><hostname>127.0.0.1</hostname><port>${listenerPort}</port><password>${SECRET}</password></server></servers>
  <streams><stream><mountpoint>/live.ogg</mountpoint><format>Ogg</format></stream></streams>
  <intakes><intake><type>playlist</type><filename>${playlist}</filename><stream_once>yes</stream_once></intake></intakes>
</ezstream>
`,
      { mode: 0o600 },
    );
    const run = await runEzstream(ezstream);
    expect(run.code).toBe(0);

    // The source went away: the last play ends (source_disconnect). Then the listeners leave, and
    // Icecast's listener_remove calls tell svc how long each listened: the plays are counted again.
    const server = t;
    await eventually(
      async () => ((await request(`${server.url}/v1/history`)).json as { tracks: Play[] }).tracks,
      (tracks) => tracks.length === 2 && tracks[0]?.end_reason === 'source_disconnect',
      20_000,
    );
    for (const curl of curls) curl.kill('SIGTERM');
    const plays = await eventually(
      async () => ((await request(`${server.url}/v1/history`)).json as { tracks: Play[] }).tracks.reverse(),
      (tracks) => tracks.every((play) => play.listeners?.atp === 3),
      30_000,
    );
    expect(plays.map((play) => [play.title, play.channel, play.listeners?.atp, play.listeners?.peak])).toEqual([
      ['Opening', 'KNEW-FM', 3, 3],
      ['Closing', 'KNEW-FM', 3, 3],
    ]);
    // No silent zero: the channel had its audience all along.
    expect(((await request(`${server.url}/v1/status`)).json as Record<string, unknown>).unheard_channels).toBeUndefined();
  });
});
