import fs from 'node:fs';
import path from 'node:path';
import { enrichmentConfig, startFakeServices, type FakeServices } from '../fakes/services';
import { postJson } from '../helpers/http';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process';
import { makeTempDir } from '../helpers/temp-dir';

// `svc serve --offline` (docs/enrichment.md): the real binary, with a config that enables every
// service and points it at the fakes; the flag alone must keep every request from going out.

describe('svc serve --offline', () => {
  let fakes: FakeServices;
  let temp: ReturnType<typeof makeTempDir>;
  let configFile: string;
  let serve: ServeProcess | undefined;

  beforeAll(async () => {
    fakes = await startFakeServices();
    temp = makeTempDir();
    configFile = path.join(temp.dir, 'svc.json');
    fs.writeFileSync(configFile, JSON.stringify({ ...enrichmentConfig(fakes), port: 0, database: path.join(temp.dir, 'svc.db') }));
  });
  afterAll(async () => {
    await fakes.close();
    temp.cleanup();
  });
  beforeEach(() => fakes.reset());
  afterEach(async () => {
    if (!serve) return;
    serve.child.kill('SIGTERM');
    await serve.exited;
    serve = undefined;
  });

  it('When started with --offline, then a submission makes no outbound request at all', async () => {
    serve = await startServeProcess(['--offline', '--config', configFile]);
    const response = await postJson(`${serve.url}/v1/remoteinput`, {
      artist: 'Massive Attack',
      title: 'Teardrop',
      isrc: 'GBAAA9800321',
      fpcalcfingerprint: 'AQAD',
      fpcalcduration: 10,
    });
    expect(response.status).toBe(200);
    expect(fakes.all()).toEqual([]);
  });

  it('When started without it, then the same config does reach the services (the check above can fail)', async () => {
    serve = await startServeProcess(['--config', configFile]);
    const response = await postJson(`${serve.url}/v1/remoteinput`, { artist: 'Portishead', title: 'Glory Box' });
    expect(response.status).toBe(200);
    expect(fakes.musicbrainz.calls().length).toBeGreaterThan(0);
  });
});
