import { rawRequest } from '../../helpers/raw-http';
import { startTestServer } from '../../helpers/test-server';

// Issue 54 (Low): listener_remove durations that Icecast never sends (auth_url.c writes whole
// seconds with "%lu") were taken as numbers (`0x10` as 16 s, `1e13`) or ignored while the answer
// still said `"recorded":true`. Now only whole seconds count, and `recorded` says what happened.

const SECRET = 'durations-secret-54';
const MOUNT = '/live.mp3';

describe('listener_remove durations and honest answers (issue 54 Low)', () => {
  it.each(['1e13', '10000000000000', '-1', 'NaN', '0x10', '1.5', ' 5'])(
    'When a never-added listener is removed with duration %p, then nothing is recorded and the answer says so',
    async (duration) => {
      const t = await startTestServer({
        config: { secret: SECRET, playlog: { icecast: [{ url: 'http://127.0.0.1:8000', adminUser: 'admin', mounts: { [MOUNT]: 'main' } }] } },
      });
      try {
        const answer = await rawRequest(`${t.url}/v1/icecast/listeners?secret=${SECRET}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: `action=listener_remove&server=127.0.0.1&port=8000&client=41&mount=${encodeURIComponent(MOUNT)}&ip=192.0.2.4&agent=x&duration=${encodeURIComponent(duration)}`,
        });
        expect([answer.status, answer.headers['icecast-auth-user'], JSON.parse(answer.text)]).toEqual([
          200,
          '1',
          { action: 'listener_remove', recorded: false },
        ]);
      } finally {
        await t.close();
      }
    },
  );

  it('When a listener of a mount svc does not count is added, then the answer says nothing was recorded; one of a counted mount, recorded', async () => {
    const t = await startTestServer({
      config: { secret: SECRET, playlog: { icecast: [{ url: 'http://127.0.0.1:8000', adminUser: 'admin', mounts: { [MOUNT]: 'main' } }] } },
    });
    try {
      const add = (mount: string) =>
        rawRequest(`${t.url}/v1/icecast/listeners?secret=${SECRET}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: `action=listener_add&server=127.0.0.1&port=8000&client=42&mount=${encodeURIComponent(mount)}&ip=192.0.2.4&agent=x`,
        });
      expect(JSON.parse((await add('/other.mp3')).text)).toEqual({ action: 'listener_add', recorded: false });
      expect(JSON.parse((await add(MOUNT)).text)).toEqual({ action: 'listener_add', recorded: true });
    } finally {
      await t.close();
    }
  });
});
