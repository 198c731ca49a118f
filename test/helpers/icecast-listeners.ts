import http from 'node:http';
import type { IcecastServer } from './icecast';

// The audience of a real icecast2 (docs/play-log.md "Listener sessions"): players that tune in to a
// mount and leave, and the <mount> section that sends Icecast's URL-authentication calls to svc.

export interface Listener {
  /** What Icecast answered ('' when the connection closed first). */
  status: Promise<string>;
  /** Leaves (closes its connection), and resolves once the connection is closed. */
  leave(): Promise<void>;
}

/**
 * A listener on `mount`, as a player would be; its status code tells whether Icecast admitted it.
 * Listeners from one address are one listener to svc unless their user agents differ (docs/play-log.md
 * "Listeners per play"): give each its own `agent` where they stand for different people.
 */
export function listenerOn(icecast: IcecastServer, mount: string, agent = 'playlog-test-listener'): Listener {
  const listening = http.get(`${icecast.url}${mount}`, { headers: { 'User-Agent': agent } });
  // Leaving destroys the request, which may report the reset; the status says what Icecast answered.
  listening.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => listening.once('close', () => resolve()));
  const status = new Promise<string>((resolve) => {
    listening.once('response', (response) => {
      resolve(String(response.statusCode));
      response.resume();
    });
    void closed.then(() => resolve(''));
  });
  return {
    status,
    async leave() {
      listening.destroy();
      await closed;
    },
  };
}

/**
 * Icecast 2.4's URL authentication for `mount`, calling svc's POST /v1/icecast/listeners with the
 * secret in the URL; without `add`, the safe set-up that never refuses a listener when svc is down.
 */
export function urlAuthMount(svcUrl: string, secret: string, mount: string, options: { add: boolean }): string {
  // docs/play-log.md "URL authentication": mount_add tells svc the mount is live, and the secret
  // travels as Basic credentials (username/password), never in the URL Icecast logs.
  const target = `${svcUrl}/v1/icecast/listeners`;
  return `<mount type="normal"><mount-name>${mount}</mount-name>
    <authentication type="url">
      ${options.add ? `<option name="listener_add" value="${target}"/>` : ''}
      <option name="listener_remove" value="${target}"/>
      <option name="mount_add" value="${target}"/>
      <option name="mount_remove" value="${target}"/>
      <option name="username" value="icecast"/>
      <option name="password" value="${secret}"/>
      <option name="auth_header" value="icecast-auth-user: 1"/>
    </authentication>
  </mount>`;
}
