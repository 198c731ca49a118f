import { field, loadFixtures, startFake, type FakeReply, type FakeServer, type RecordedRequest } from './fake-server';

// The Cover Art Archive's redirect service, with the rules of its own code:
// metabrainz/coverart_redirect @ 90ff5c7b, artwork_redirect/request.py (CoverArtRedirect.handle,
// handle_release, handle_release_group, resolve_cover, thumbnail, handle_redirect, handle_dir,
// validate_entity, validate_mbid) and artwork_redirect/server.py (Request.redirect):
// - only `release` and `release-group` (else 400 "Only release and release-group entities are
//   currently supported"); the MBID must be lower-case hex in 8-4-4-4-12 form (else 400
//   "invalid MBID specified"; an upper-case MBID is refused too);
// - `/release/{mbid}/front[-250|-500|-1200][.ext]` (and `back...`, or a numeric image id): 307 to
//   `<prefix>/mbid-{mbid}/mbid-{mbid}-{image id}[_thumb{size}].jpg`; a size other than 250, 500 or
//   1200 means the original image; 404 "No front cover image found for release with identifier ..."
//   when the release has no such image;
// - `/release/{mbid}/` without a file: 307 to `<prefix>/mbid-{mbid}/index.json` (404 without art);
// - `/release-group/{mbid}/front...`: the release group's chosen release with a front image, then as
//   above for that release; 404 "No cover art found for release group ..." without one; any other
//   file is 400 "<file> not supported for release groups.";
// - redirects are 307, text/plain "See: <location>", and every answer has
//   Access-Control-Allow-Origin: *. The prefix is archive.org/download, here the local image host.

const MBID = /^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$/;
/** Release-group listings do not name their group: release-group MBID -> fixture. */
const RELEASE_GROUPS: Record<string, string> = {
  'd3f1e2a0-6b1c-4a8e-9f2d-7c0b5e4a3d22': 'release-group-musique-vol-1',
};

interface Release {
  id: string;
  front: string | undefined;
  back: string | undefined;
  imageIds: string[];
}

const CORS = { 'Access-Control-Allow-Origin': '*' };

function text(status: number, body: string): FakeReply {
  return { status, headers: { 'Content-Type': 'text/html; charset=utf-8', ...CORS }, body: `<p>${body}</p>` };
}

function redirect307(location: string): FakeReply {
  return { status: 307, headers: { Location: location, 'Content-Type': 'text/plain; charset=utf-8', ...CORS }, body: `See: ${location}\n` };
}

/** `thumbnail()`: the part after the last '-' picks the size (250, 500, 1200), else the original. */
function thumbnailSuffix(file: string): string {
  if (!file.includes('-')) return '';
  const size = file.slice(file.lastIndexOf('-') + 1);
  for (const candidate of ['250', '500', '1200']) if (size.startsWith(candidate)) return `_thumb${candidate}`;
  return '';
}

export async function startCoverArtArchiveFake(imageHostUrl: string): Promise<FakeServer> {
  const prefix = `${imageHostUrl}/download`;
  const fixtures = loadFixtures('coverartarchive');
  const releases = new Map<string, Release>();
  const groups = new Map<string, string>();
  const toRelease = (body: unknown): Release => {
    const images = Array.isArray(field(body, 'images')) ? (field(body, 'images') as unknown[]) : [];
    const idOf = (flag: string) => {
      const image = images.find((candidate) => field(candidate, flag) === true);
      return image === undefined ? undefined : String(field(image, 'id'));
    };
    return {
      id: String(field(body, 'release')).split('/').pop() ?? '',
      front: idOf('front'),
      back: idOf('back'),
      imageIds: images.map((image) => String(field(image, 'id'))),
    };
  };
  for (const body of fixtures.values()) {
    const release = toRelease(body);
    releases.set(release.id, release);
  }
  for (const [groupId, name] of Object.entries(RELEASE_GROUPS)) {
    const body = fixtures.get(name);
    if (body !== undefined) groups.set(groupId, toRelease(body).id);
  }

  const imageOf = (release: Release, file: string): FakeReply => {
    const suffix = thumbnailSuffix(file);
    let imageId: string | undefined;
    if (file.startsWith('front') || file.startsWith('back')) {
      const kind = file.startsWith('front') ? 'front' : 'back';
      imageId = release[kind];
      if (imageId === undefined) return text(404, `No ${kind} cover image found for release with identifier ${release.id}`);
    } else {
      const numeric = /^\d+/.exec(file)?.[0];
      if (numeric === undefined) return text(400, `${file} does not not contain a valid cover image id`);
      if (!release.imageIds.includes(numeric)) return text(404, `cover image with id ${numeric} not found`);
      imageId = numeric;
    }
    return redirect307(`${prefix}/mbid-${release.id}/mbid-${release.id}-${imageId}${suffix}.jpg`);
  };

  const route = (request: RecordedRequest): FakeReply => {
    const [entity = '', mbid = '', file = ''] = request.path.split('/').slice(1);
    if (entity !== 'release' && entity !== 'release-group') return text(400, 'Only release and release-group entities are currently supported');
    if (mbid === '') return text(400, 'no MBID specified');
    if (!MBID.test(mbid)) return text(400, 'invalid MBID specified');
    if (entity === 'release-group') {
      const releaseId = groups.get(mbid);
      const release = releaseId === undefined ? undefined : releases.get(releaseId);
      if (!release || release.front === undefined) return text(404, `No cover art found for release group ${mbid}`);
      if (file === '') return redirect307(`${prefix}/mbid-${release.id}/index.json`);
      if (!file.startsWith('front')) return text(400, `${file} not supported for release groups.`);
      return imageOf(release, file);
    }
    const release = releases.get(mbid);
    if (!release) return text(404, file === '' ? `No cover art found for release ${mbid}` : `No front cover image found for release with identifier ${mbid}`);
    if (file === '') return redirect307(`${prefix}/mbid-${release.id}/index.json`);
    return imageOf(release, file);
  };
  return startFake('coverartarchive', route);
}
