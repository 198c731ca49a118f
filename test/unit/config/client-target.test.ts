import { clientTarget, reachableHost, serverUrl } from '../../../src/config/client-target';
import { expandHome } from '../../../src/config/home-path';

const server = { host: '127.0.0.1', port: 8899, secret: '', client: { url: '', secret: '' } };

describe('clientTarget', () => {
  it('When client.url and client.secret are unset, then the server part of the config is used', () => {
    expect(clientTarget({ ...server, port: 8893, secret: 's' })).toEqual({ url: 'http://127.0.0.1:8893', secret: 's' });
  });

  it('When client.url and client.secret are set, then they win over the server part', () => {
    expect(clientTarget({ ...server, secret: 's', client: { url: 'http://box:1', secret: 'c' } })).toEqual({ url: 'http://box:1', secret: 'c' });
  });

  it('When the server listens on a wildcard address, then the client dials loopback', () => {
    expect(['0.0.0.0', '::'].map(reachableHost)).toEqual(['127.0.0.1', '127.0.0.1']);
    expect(reachableHost('192.168.1.5')).toBe('192.168.1.5');
    expect(serverUrl('::1', 80)).toBe('http://[::1]:80');
  });
});

describe('expandHome', () => {
  const env = { HOME: '/home/dj' };
  it('When a path starts with ~ or ~/, then it is under HOME; otherwise it is kept', () => {
    expect(['~', '~/svc.db', '~dj/x', './~/x', 'postgres://h/db', ':memory:'].map((value) => expandHome(value, env))).toEqual([
      '/home/dj',
      '/home/dj/svc.db',
      '~dj/x',
      './~/x',
      'postgres://h/db',
      ':memory:',
    ]);
  });
});
