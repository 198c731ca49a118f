import net from 'node:net';
import { until } from '../../helpers/eventually';
import { postJson } from '../../helpers/http';
import { runCli } from '../../helpers/run-cli';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { startListenBrainzFake, type ListenBrainzFake } from '../../fakes/listenbrainz';
import { startObsFake, type ObsFake } from '../../fakes/obs-websocket';
import { startTuneInFake, type TuneInFake } from '../../fakes/tunein';

// A station's reach (docs/outputs.md): TuneIn AIR, ListenBrainz, an OBS Text source and the RDS
// encoder in one config; every track change reaches all four within a second, and `svc outputs`
// shows each one's receipt.

describe('a station with TuneIn, ListenBrainz, OBS and its RDS encoder', () => {
  let tunein: TuneInFake;
  let listenbrainz: ListenBrainzFake;
  let obs: ObsFake;
  let encoder: net.Server;
  const radioTexts: { text: string; at: number }[] = [];
  let server: TestServer;

  beforeAll(async () => {
    [tunein, listenbrainz, obs] = await Promise.all([startTuneInFake(), startListenBrainzFake(), startObsFake()]);
    encoder = net.createServer((socket) => {
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        for (const line of chunk.split('\r\n')) if (line.startsWith('TEXT=')) radioTexts.push({ text: line.slice(5), at: Date.now() });
        socket.write('+\r\n');
      });
    });
    await new Promise<void>((resolve) => encoder.listen(0, '127.0.0.1', resolve));
    const encoderPort = (encoder.address() as net.AddressInfo).port;
    server = await startTestServer({
      config: {
        outputs: [
          {
            name: 'tunein',
            type: 'url',
            url: `${tunein.url}/Playing.ashx?partnerId=${tunein.partnerId}&partnerKey=${tunein.partnerKey}&id=${tunein.stationId}&title={{title}}&artist={{artist}}&album={{album}}`,
          },
          { name: 'listenbrainz', type: 'listenbrainz', token: listenbrainz.token, url: listenbrainz.url },
          { name: 'obs', type: 'obs', url: obs.url, password: obs.password, input: 'Now Playing' },
          { name: 'rds', type: 'rds', url: `tcp://127.0.0.1:${encoderPort}`, rtPlus: true },
        ],
      } as never,
    });
  });
  afterAll(async () => {
    await server?.close();
    await new Promise((resolve) => encoder?.close(resolve));
    await Promise.all([tunein?.close(), listenbrainz?.close(), obs?.close()]);
  });

  it('When three tracks change, then each reaches TuneIn, ListenBrainz, OBS and the encoder, and svc outputs shows every receipt', async () => {
    const tracks = [
      { artist: 'Massive Attack', title: 'Teardrop', album: 'Mezzanine' },
      { artist: 'Portishead', title: 'Roads', album: 'Dummy' },
      { artist: 'Air', title: 'Alone in Kyoto', album: 'Talkie Walkie' },
    ];
    for (const track of tracks) {
      await postJson(`${server.url}/v1/remoteinput`, track);
      const expected = `${track.artist} - ${track.title}`;
      const reached = () =>
        tunein.playing.some((one) => one.title === track.title) &&
        listenbrainz.accepted.some((one) => one.listenType === 'playing_now' && one.listen.track_metadata.track_name === track.title) &&
        obs.inputs.get('Now Playing')?.settings.text === expected &&
        radioTexts.some((one) => one.text === expected);
      // A hang guard only: how fast receipts come is bench/outputs-mixed.bench.js's row. ListenBrainz
      // takes one call a second: svc spaces its calls itself (src/outputs/listenbrainz.ts), so the
      // next change may come at once.
      await until(reached, `${track.title} reached every target`, 15_000, 10);
    }

    const table = await runCli(['outputs', '--url', server.url]);
    const rows = table.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^NAME\s+TYPE\s+STATE\s+PENDING\s+SUPERSEDED\s+LAST SUCCESS\s+LAST ERROR$/);
    expect(rows.slice(1).map((row) => row.split(/\s{2,}/).slice(0, 4))).toEqual([
      ['tunein', 'url', 'ok', '0'],
      ['listenbrainz', 'listenbrainz', 'ok', '0'],
      ['obs', 'obs', 'ok', '0'],
      ['rds', 'rds', 'ok', '0'],
    ]);
    expect(table.stdout).toMatch(/tunein .*\(dbid 3\) <opml version="1"><head><status>200<\/status>/);
    expect(table.stdout).toMatch(/listenbrainz .*\(dbid 3\) now playing 3; 2 not scrobbled: played \d+ s/);
    expect(table.stdout).toMatch(/obs .*\(dbid 3\) Now Playing: Air - Alone in Kyoto/);
    expect(table.stdout).toMatch(/rds .*\(dbid 3\) TEXT=Air - Alone in Kyoto/);
    expect(table.stdout).not.toContain(listenbrainz.token);
    expect(table.stdout).not.toContain(tunein.partnerKey);
  });
});
