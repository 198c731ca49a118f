import { redirect, startFake, type FakeServer } from './fake-server';
import { TINY_PNG } from '../helpers/images';

// The hosts images really come from: archive.org (where Cover Art Archive redirects) and
// Wikimedia Commons (`/wiki/Special:FilePath/{file}` redirects to upload.wikimedia.org). One
// local server plays both; it serves a small real PNG for any `/download/` or `/upload/` path.

export async function startImageHostFake(): Promise<FakeServer> {
  let self = '';
  const fake = await startFake('image-host', (request) => {
    if (request.path.startsWith('/wiki/Special:FilePath/')) {
      const file = request.path.slice('/wiki/Special:FilePath/'.length);
      return redirect(302, `${self}/upload/thumb/${encodeURIComponent(file)}/1000px-${encodeURIComponent(file)}`);
    }
    if (request.path.startsWith('/download/') || request.path.startsWith('/upload/') || request.path.startsWith('/images/')) {
      return { status: 200, headers: { 'Content-Type': 'image/png', 'Content-Length': String(TINY_PNG.length) }, body: TINY_PNG };
    }
    return { status: 404, headers: { 'Content-Type': 'text/plain' }, body: 'Not Found' };
  });
  self = fake.url;
  return fake;
}
