import http from 'node:http';
import type { AddressInfo } from 'node:net';

// TuneIn AIR's now-playing endpoint on loopback: `GET /Playing.ashx?partnerId=&partnerKey=&id=
// &title=&artist=&album=` (optionally `commercial=true`), as TuneIn's broadcaster API takes it
// and as AzuraCast's connector sends it (github.com/AzuraCast/AzuraCast,
// backend/src/Webhook/Connector/TuneIn.php). A wrong partner key is refused with 403 and a short
// XML text; a good call is 200 with the text the receipt keeps. The raw request target is kept, so
// a test sees the exact query svc sent.

export interface TuneInFake {
  url: string;
  partnerId: string;
  partnerKey: string;
  stationId: string;
  /** Every raw request target (`/Playing.ashx?...`), in order. */
  targets: string[];
  /** The titles TuneIn accepted, in order. */
  playing: { title: string; artist: string; album: string }[];
  close(): Promise<void>;
}

export async function startTuneInFake(): Promise<TuneInFake> {
  const fake = { partnerId: 'P123abc', partnerKey: 'K-secret-789xyz', stationId: 's123456', targets: [] as string[], playing: [] as TuneInFake['playing'] };
  const server = http.createServer((req, res) => {
    const target = req.url ?? '/';
    fake.targets.push(target);
    const url = new URL(target, 'http://tunein.invalid');
    const query = url.searchParams;
    if (req.method !== 'GET' || url.pathname !== '/Playing.ashx') return res.writeHead(404).end();
    if (query.get('partnerId') !== fake.partnerId || query.get('partnerKey') !== fake.partnerKey || query.get('id') !== fake.stationId) {
      return res
        .writeHead(403, { 'content-type': 'text/xml' })
        .end(`<opml><head><status>403</status><fault>Invalid partner credentials for partnerKey=${query.get('partnerKey') ?? ''}</fault></head></opml>`);
    }
    if (!query.get('title'))
      return res.writeHead(400, { 'content-type': 'text/xml' }).end('<opml><head><status>400</status><fault>Missing title</fault></head></opml>');
    fake.playing.push({ title: query.get('title') ?? '', artist: query.get('artist') ?? '', album: query.get('album') ?? '' });
    res.writeHead(200, { 'content-type': 'text/xml' }).end('<opml version="1"><head><status>200</status></head></opml>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...fake,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
