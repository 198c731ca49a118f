import { audienceServers, channelRules, channelsWithAudience, type ChannelDeclaration } from '../../../src/domain/channels';

// Declared channels (docs/channels.md): which channel a submission, mount or stream belongs to.

const channel = (name: string, extra: Partial<ChannelDeclaration> = {}): ChannelDeclaration => ({
  name,
  ingest: { mounts: [], streams: [], aliases: [] },
  audience: [],
  report: { service: '', category: '', streamId: '', timeZone: '' },
  ...extra,
});

describe('channelRules', () => {
  it('When nothing is declared, then a submission keeps its channel and "main" is the default', () => {
    const rules = channelRules([]);
    expect(rules.resolve(undefined)).toEqual({ channel: 'main' });
    expect(rules.resolve('/live.ogg')).toEqual({ channel: '/live.ogg' });
    expect(rules.isDeclared('anything')).toBe(true);
  });

  it('When channels are declared, then a mount, a stream and an alias map to their channel and nothing names the first', () => {
    const rules = channelRules([
      channel('FM', { ingest: { mounts: ['/live.ogg'], streams: ['http://fm.example/stream'], aliases: ['studio-a'] } }),
      channel('Web'),
    ]);
    expect(rules.defaultChannel).toBe('FM');
    expect(rules.resolve(undefined)).toEqual({ channel: 'FM' });
    expect(rules.resolve('/live.ogg')).toEqual({ channel: 'FM' });
    expect(rules.resolve('http://fm.example/stream')).toEqual({ channel: 'FM' });
    expect(rules.resolve('studio-a')).toEqual({ channel: 'FM' });
    expect(rules.resolve('Web')).toEqual({ channel: 'Web' });
  });

  it('When a submission names an undeclared channel, then it keeps that name with a warning', () => {
    const choice = channelRules([channel('FM')]).resolve('/other.ogg');
    expect(choice.channel).toBe('/other.ogg');
    expect(choice.warning).toMatch(/"\/other\.ogg" is not declared \(channels: "FM"\)/);
  });
});

describe('audienceServers', () => {
  it('When a channel names audience mounts, then they join the server of the same origin, or a server of their own', () => {
    const servers = audienceServers(
      [{ url: 'http://icecast.example:8000/', adminUser: 'admin', adminPassword: 'pw', poll: 5, mounts: {} }],
      [
        channel('FM', { audience: [{ url: 'http://icecast.example:8000', mounts: ['/stream.mp3', '/stream.ogg'] }] }),
        channel('Web', { audience: [{ url: 'http://other.example:8000', mounts: ['/web.mp3'] }] }),
      ],
    );
    expect(servers).toEqual([
      { url: 'http://icecast.example:8000/', adminUser: 'admin', adminPassword: 'pw', poll: 5, mounts: { '/stream.mp3': 'FM', '/stream.ogg': 'FM' } },
      { url: 'http://other.example:8000', adminUser: 'admin', mounts: { '/web.mp3': 'Web' } },
    ]);
    expect([...channelsWithAudience(servers)].sort()).toEqual(['FM', 'Web']);
  });
});
