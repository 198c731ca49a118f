import { allowedHostMatcher, isAllowedHostEntry } from '../../../src/domain/host-names';

// docs/running.md "Tunnels and public names": an allowedHosts entry is a name or *.domain, one label deep.

describe('allowedHosts entries', () => {
  it.each(['np.example.net', 'dj-laptop.local', '*.trycloudflare.com', '*.local', 'NP.Example.NET'])('When the entry is %s, then it is taken', (entry) => {
    expect(isAllowedHostEntry(entry)).toBe(true);
  });

  it.each(['*', '*.', 'np*.example.net', '*.*.example.net', 'a.*.example.net', 'np.example.net:443', 'https://np.example.net', '', ' np.example.net'])(
    'When the entry is %j, then it is refused',
    (entry) => {
      expect(isAllowedHostEntry(entry)).toBe(false);
    },
  );

  it('When *.example.net is listed, then exactly the names one label under it match', () => {
    const allowed = allowedHostMatcher(['*.Example.net', 'exact.test']);
    expect(['np.example.net', 'x-1.example.net', 'exact.test'].map(allowed)).toEqual([true, true, true]);
    expect(['example.net', 'a.b.example.net', 'evilexample.net', '.example.net', 'other.test'].map(allowed)).toEqual([false, false, false, false, false]);
  });
});
