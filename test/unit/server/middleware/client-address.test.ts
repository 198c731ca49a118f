import type { IncomingMessage } from 'node:http';
import { trustedProxies } from '../../../../src/domain/trusted-proxies';
import { realClientAddress, requestClient } from '../../../../src/server/middleware/client-address';
import { rawRequest } from '../../../helpers/raw-http';
import { serveMiddleware, type MiddlewareApp } from '../../../helpers/middleware-app';

// src/server/middleware/client-address.ts alone: `ctx.ip` is the real client behind a trusted
// proxy (docs/running.md "Behind a proxy"), and the peer itself for anyone else.

/** A request as node:http hands it over, with only what requestClient reads. */
function incoming(peer: string, headers: Record<string, string>): IncomingMessage {
  return { socket: { remoteAddress: peer }, headers } as unknown as IncomingMessage;
}

describe('realClientAddress, the client address middleware', () => {
  // 127.0.0.1 is the proxy; a request sent from 127.0.0.2 is a client that talks to svc directly.
  const trusted = trustedProxies(['127.0.0.1']);
  let app: MiddlewareApp;

  beforeAll(async () => {
    app = await serveMiddleware([realClientAddress(trusted)]);
  });
  afterAll(() => app.close());

  const ipOf = async (headers: Record<string, string>, localAddress?: string) => {
    const res = await rawRequest(app.url, { headers, ...(localAddress ? { localAddress } : {}) });
    return (JSON.parse(res.text) as { ip: string }).ip;
  };

  it('When the trusted proxy names the client in X-Forwarded-For, then ctx.ip is that client', async () => {
    expect(await ipOf({ 'X-Forwarded-For': '203.0.113.7' })).toBe('203.0.113.7');
  });

  it('When the client wrote its own X-Forwarded-For before the proxy added the real one, then the right-most untrusted hop wins', async () => {
    expect(await ipOf({ 'X-Forwarded-For': '198.51.100.1, 203.0.113.7' })).toBe('203.0.113.7');
  });

  it('When the proxy sends Forwarded (RFC 7239) and no X-Forwarded-For, then its for= is the client', async () => {
    expect(await ipOf({ Forwarded: 'for="[2001:db8::5]:4711";proto=https' })).toBe('2001:db8::5');
  });

  it('When a peer that is not a trusted proxy sends forwarding headers, then they are ignored', async () => {
    expect(await ipOf({ 'X-Forwarded-For': '203.0.113.7' }, '127.0.0.2')).toBe('127.0.0.2');
  });

  it('When a trusted proxy forwards a hop that is no address, then the client is the peer itself', async () => {
    expect(await ipOf({ 'X-Forwarded-For': 'made-up-name' })).toBe('127.0.0.1');
  });

  it('When the fast paths ask requestClient, then they get the same answer without a Koa context', () => {
    expect(requestClient(incoming('127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }), trusted)).toBe('203.0.113.7');
    expect(requestClient(incoming('192.0.2.9', { 'x-forwarded-for': '203.0.113.7' }), trusted)).toBe('192.0.2.9');
    expect(requestClient(incoming('127.0.0.1', {}), trusted)).toBe('127.0.0.1');
    expect(requestClient(incoming('127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }), trustedProxies([]))).toBe('127.0.0.1');
  });
});
