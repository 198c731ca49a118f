import { field, json, loadFixtures, redirect, startFake, type FakeReply, type FakeServer, type RecordedRequest } from './fake-server';

// Cover Art Archive as documented (https://musicbrainz.org/doc/Cover_Art_Archive/API):
// /release/{mbid} and /release-group/{mbid} list the images (JSON); .../front[-250|-500|-1200]
// answers 307 to the image on archive.org (here: the local image host); 404 when there is
// no such release or no front image; 400 for a malformed MBID.

const MBID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Release-group listings do not name their group: release-group MBID -> fixture. */
const RELEASE_GROUPS: Record<string, string> = {
  'd3f1e2a0-6b1c-4a8e-9f2d-7c0b5e4a3d22': 'release-group-musique-vol-1',
};

interface Listing {
  /** MBID of the release the images belong to. */
  releaseId: string;
  frontImageId: string | undefined;
  body: unknown;
}

export async function startCoverArtArchiveFake(imageHostUrl: string): Promise<FakeServer> {
  const fixtures = loadFixtures('coverartarchive');
  const releases = new Map<string, Listing>();
  const groups = new Map<string, Listing>();
  const toListing = (body: unknown): Listing => {
    const releaseUrl = String(field(body, 'release'));
    const images = Array.isArray(field(body, 'images')) ? (field(body, 'images') as unknown[]) : [];
    const front = images.find((image) => field(image, 'front') === true);
    return { releaseId: releaseUrl.split('/').pop() ?? '', frontImageId: front === undefined ? undefined : String(field(front, 'id')), body };
  };
  for (const [name, body] of fixtures) if (name.startsWith('release-') && !name.startsWith('release-group-')) releases.set(toListing(body).releaseId, toListing(body));
  for (const [groupId, name] of Object.entries(RELEASE_GROUPS)) {
    const body = fixtures.get(name);
    if (body !== undefined) groups.set(groupId, toListing(body));
  }

  const route = (request: RecordedRequest): FakeReply => {
    const match = /^\/(release|release-group)\/([^/]+)(?:\/(front(?:-(?:250|500|1200))?))?\/?$/.exec(request.path);
    if (!match) return { status: 404, headers: { 'Content-Type': 'text/plain' }, body: 'Not Found' };
    const [, kind, id = '', piece] = match;
    if (!MBID.test(id)) return { status: 400, headers: { 'Content-Type': 'text/plain' }, body: 'invalid MBID specified' };
    const listing = (kind === 'release' ? releases : groups).get(id);
    if (!listing) return { status: 404, headers: { 'Content-Type': 'text/plain' }, body: 'Not Found' };
    if (piece === undefined) return json(200, listing.body);
    if (listing.frontImageId === undefined) return { status: 404, headers: { 'Content-Type': 'text/plain' }, body: 'Not Found' };
    const size = piece === 'front' ? '' : `_thumb${piece.slice('front-'.length)}`;
    const release = listing.releaseId;
    return redirect(307, `${imageHostUrl}/download/mbid-${release}/mbid-${release}-${listing.frontImageId}${size}.jpg`);
  };
  return startFake('coverartarchive', route);
}
