// The layering rule (docs/architecture.md "Layout"): imports run one way between the folders of src/,
//   cli -> app -> {server, ingest} -> {pipeline, images, outputs, reports, recognition} -> {playlog, requests} -> enrich
//     -> {store/open-store.ts, config}
//     -> {store/sqlite, store/postgres} -> store (the contracts) -> domain -> ground
// where the ground is src/errors.ts, log.ts, metrics.ts, signals.ts and version.ts. A folder imports only
// folders below it (peers on one level do not import each other: neither backend imports the
// other, and the contracts in src/store/*.ts import no backend); `npm run layers` checks it in CI.
'use strict';

const LAYERS = [
  ['cli'],
  ['app'],
  ['server', 'ingest'],
  ['pipeline', 'images', 'outputs', 'reports', 'recognition'],
  ['playlog', 'requests'],
  ['enrich'],
  ['store/(open-store|health|image-memory-cache)\\.ts$', 'config'],
  ['store/sqlite', 'store/postgres'],
  ['store/(?!(open-store|health|image-memory-cache)\\.ts$)[^/]+$'],
  ['domain'],
  ['(errors|log|signals|version|metrics)\\.ts$'],
];

/** A rule's name: the folder, or "store-contracts" and "ground" for the two file patterns. */
const nameOf = (folder) =>
  folder.startsWith('(') ? 'ground' : folder.startsWith('store/(?!') ? 'store-contracts' : folder.replace(/\\.ts\$$/, '').replace(/\W+/g, '-');

const pathOf = (name) => (name.endsWith('$') ? `^src/${name}` : `^src/${name}/`);

const forbidden = [];
LAYERS.forEach((level, depth) => {
  const above = LAYERS.slice(0, depth).flat();
  for (const folder of level) {
    const peers = level.filter((other) => other !== folder);
    const refused = [...above, ...peers];
    if (refused.length === 0) continue;
    forbidden.push({
      name: `layering-${nameOf(folder)}`,
      comment: `${folder} may import only the layers below it (docs/architecture.md "Layout")`,
      severity: 'error',
      from: { path: pathOf(folder) },
      to: { path: `(${refused.map(pathOf).join('|')})` },
    });
  }
});

forbidden.push(
  {
    name: 'pipeline-through-play-log-port',
    comment: 'the record use cases reach the play log through its port (src/playlog/port.ts) and its policy only, never its internals',
    severity: 'error',
    from: { path: '^src/pipeline/' },
    to: { path: '^src/playlog/', pathNot: '^src/playlog/(port|play-policy)\\.ts$' },
  },
  {
    name: 'router-reads-no-config',
    comment:
      'the server and each router, middleware, stream or fast path is handed what it uses (src/server/ports.ts, cut by src/app/server-ports.ts); nothing under src/server/ reads the config (the pure URL formatter of config/client-target.ts aside)',
    severity: 'error',
    from: { path: '^src/server/' },
    to: { path: '^src/config/', pathNot: '^src/config/client-target\\.ts$' },
  },
  { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
  {
    name: 'src-not-from-test-or-bench',
    comment: 'production code never imports tests, fakes or benchmarks',
    severity: 'error',
    from: { path: '^src/' },
    to: { path: '^(test|bench)/' },
  },
  {
    name: 'every-src-file-in-a-layer',
    comment: 'a new folder takes a named place in LAYERS before anything may import it',
    severity: 'error',
    from: { path: '^src/' },
    to: { path: '^src/', pathNot: `(${LAYERS.flat().map(pathOf).join('|')})` },
  },
);

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['cjs', 'es6'],
  },
};
