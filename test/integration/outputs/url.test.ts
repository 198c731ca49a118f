import { eventually } from '../../helpers/eventually';
import { asObject, postJson, request } from '../../helpers/http';
import { startFake, type FakeServer } from '../../fakes/fake-server';
import { startTuneInFake, type TuneInFake } from '../../fakes/tunein';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// The url output (docs/outputs.md "url: TuneIn AIR, radio.de and other directories") through a
// real svc: a fake TuneIn AIR receiver (test/fakes/tunein.ts) sees the exact query, each field
// URL-encoded and a missing one empty; the answer text is the receipt; a refusal fails with
// TuneIn's own words and no key in them; a POST sends the form body.

interface Status {
  name: string;
  state: string;
  target: string;
  lastSuccess: { dbid: number; receipt?: string } | null;
  lastError: { message: string } | null;
}

async function statuses(server: TestServer): Promise<Status[]> {
  return asObject((await request(`${server.url}/v1/outputs`)).json).outputs as Status[];
}

describe('url output', () => {
  let tunein: TuneInFake;
  let form: FakeServer;
  let server: TestServer;
  beforeAll(async () => {
    tunein = await startTuneInFake();
    form = await startFake('form', () => ({ status: 202, body: 'queued' }));
    const query = (key: string) => `partnerId=${tunein.partnerId}&partnerKey=${key}&id=${tunein.stationId}&title={{title}}&artist={{artist}}&album={{album}}`;
    server = await startTestServer({
      config: {
        outputs: [
          { name: 'tunein', type: 'url', url: `${tunein.url}/Playing.ashx?${query(tunein.partnerKey)}` },
          { name: 'tunein-wrong', type: 'url', url: `${tunein.url}/Playing.ashx?${query('not-the-key')}` },
          { name: 'form', type: 'url', method: 'POST', url: `${form.url}/np`, body: 'a={{artist}}&t={{title}}', headers: { 'X-Api-Key': 'form-key-123' } },
        ],
      } as never,
      outputPollMs: 50,
    });
  });
  afterAll(async () => {
    await server?.close();
    await tunein?.close();
    await form?.close();
  });

  it('When a track changes, then TuneIn gets the exact query with each field URL-encoded, and its answer is the receipt', async () => {
    await postJson(`${server.url}/v1/remoteinput`, { artist: 'Simon & Garfunkel', title: 'The Boxer (Live/1981)', album: 'Central Park ½' });
    const playing = await eventually(
      () => Promise.resolve(tunein.playing.length),
      (count) => count === 1,
    );
    expect(playing).toBe(1);
    const good = tunein.targets.find((target) => target.includes(tunein.partnerKey));
    expect(good).toBe(
      `/Playing.ashx?partnerId=P123abc&partnerKey=K-secret-789xyz&id=s123456&title=The%20Boxer%20(Live%2F1981)&artist=Simon%20%26%20Garfunkel&album=Central%20Park%20%C2%BD`,
    );
    const status = await eventually(
      () => statuses(server),
      (list) => list.find((one) => one.name === 'tunein')?.lastSuccess !== null,
    );
    expect(status.find((one) => one.name === 'tunein')).toMatchObject({
      state: 'ok',
      lastSuccess: { receipt: '<opml version="1"><head><status>200</status></head></opml>' },
    });
  });

  it("When the template names a field the track lacks, then it is sent empty; a refusal fails with the target's words and no key", async () => {
    tunein.targets.length = 0;
    await postJson(`${server.url}/v1/remoteinput`, { title: 'Untitled Jam' });
    await eventually(
      () => Promise.resolve(tunein.playing.length),
      (count) => count === 2,
    );
    expect(tunein.targets.find((target) => target.includes(tunein.partnerKey))).toBe(
      '/Playing.ashx?partnerId=P123abc&partnerKey=K-secret-789xyz&id=s123456&title=Untitled%20Jam&artist=&album=',
    );
    const list = await eventually(
      () => statuses(server),
      (all) => all.find((one) => one.name === 'tunein-wrong')?.state === 'failing',
    );
    const wrong = list.find((one) => one.name === 'tunein-wrong');
    expect(wrong?.lastError?.message).toMatch(/^HTTP 403: .*Invalid partner credentials for partnerKey=…/);
    expect(JSON.stringify(list)).not.toContain('not-the-key');
    expect(JSON.stringify(list)).not.toContain(tunein.partnerKey);
    expect(wrong?.target).toBe(tunein.url + '/…');
  });

  it('When the method is POST, then the body is the form template, the headers are sent and a 202 is delivered', async () => {
    await eventually(
      () => Promise.resolve(form.requests.length),
      (count) => count >= 2,
    );
    const last = form.requests.at(-1);
    expect(last).toMatchObject({ method: 'POST', path: '/np', body: 'a=&t=Untitled%20Jam' });
    expect(last?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(last?.headers['x-api-key']).toBe('form-key-123');
  });
});
