import fs from 'node:fs';
import path from 'node:path';
import type { SchemaDescription, SchemaInnerTypeDescription, SchemaObjectDescription } from 'yup';
import { loadConfig } from '../../../src/config/load';
import { configSchema } from '../../../src/config/schema';
import { ConfigError } from '../../../src/errors';
import { makeTempDir } from '../../helpers/temp-dir';

// docs/configuration.md "Where svc looks": a key no item of a list has is refused with the nearest
// one, in every list of the config, so that `poll` misspelt never starts a server that polls nothing.

/** A valid item of each list of objects, and one key of it misspelt. */
const LISTS: Record<string, { item: Record<string, unknown>; typo: [string, string] }> = {
  outputs: { item: { name: 'home', type: 'mqtt', url: 'mqtt://127.0.0.1:1883' }, typo: ['discoveryPrefx', 'discoveryPrefix'] },
  'playlog.kindRules': { item: { match: { title: '^Station ID' }, kind: 'jingle' }, typo: ['knd', 'kind'] },
  'playlog.icecast': {
    item: { url: 'http://127.0.0.1:8000', adminPassword: 'hackme', mounts: { '/live.mp3': 'main' }, poll: 5 },
    typo: ['pol', 'poll'],
  },
  channels: {
    item: { name: 'FM', ingest: { mounts: ['/live.ogg'] }, audience: [{ url: 'http://127.0.0.1:8000', mounts: ['/stream.mp3'] }] },
    typo: ['audince', 'audience'],
  },
  'recognition.streams': { item: { url: 'http://127.0.0.1:8000/studio2.mp3', channel: 'studio2', vinyl: false }, typo: ['chanel', 'channel'] },
};

/** Every list of objects in the schema, dotted. */
function objectLists(description: SchemaObjectDescription, prefix = ''): string[] {
  return Object.entries(description.fields).flatMap(([name, field]) => {
    const key = `${prefix}${name}`;
    const nested = field as SchemaDescription & Partial<SchemaObjectDescription> & Partial<SchemaInnerTypeDescription>;
    if (nested.type === 'object' && nested.fields) return objectLists(nested as SchemaObjectDescription, `${key}.`);
    const inner = nested.innerType as Partial<SchemaObjectDescription> | undefined;
    return nested.type === 'array' && inner?.type === 'object' ? [key] : [];
  });
}

function nestedUnder(key: string, value: unknown): Record<string, unknown> {
  return key
    .split('.')
    .reverse()
    .reduce<unknown>((inner, part) => ({ [part]: inner }), value) as Record<string, unknown>;
}

describe('a typo in an item of a config list', () => {
  const temp = makeTempDir('svc-list-items-');
  afterAll(() => temp.cleanup());

  const refusal = async (config: unknown): Promise<string> => {
    fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify(config));
    const error = await loadConfig({ cwd: temp.dir, env: {} }).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  };

  it('When the schema has a list of objects, then this test has an item for it', () => {
    expect(objectLists(configSchema.describe()).sort()).toEqual(Object.keys(LISTS).sort());
  });

  it.each(Object.entries(LISTS))('When an item of %s is valid, then the config loads', async (key, { item }) => {
    fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify(nestedUnder(key, [item])));
    await expect(loadConfig({ cwd: temp.dir, env: {} })).resolves.toBeDefined();
  });

  it.each(Object.entries(LISTS))('When the second item of %s has a misspelt key, then start-up stops with "did you mean"', async (key, { item, typo }) => {
    const [wrong, right] = typo;
    // A second item of its own (outputs' names are unique), with the key misspelt.
    const second = { ...item, ...('name' in item ? { name: 'second' } : {}), [right]: item[right] ?? 'x' };
    const misspelt = Object.fromEntries(Object.entries(second).map(([name, value]) => [name === right ? wrong : name, value]));
    const message = await refusal(nestedUnder(key, [item, misspelt]));
    expect(message).toContain(`${wrong}"`);
    expect(message).toMatch(new RegExp(`\\(did you mean "(${key.replace('.', '\\.')}\\[1\\]\\.)?${right}"\\?\\)$`));
    if (key !== 'outputs') expect(message).toContain(`unknown key "${key}[1].${wrong}"`);
  });

  it('When playlog.icecast[] misspells adminPassword, then start-up stops instead of logging 401s', async () => {
    const server = { url: 'http://127.0.0.1:8000', adminPasword: 'hackme', mounts: { '/live.mp3': 'main' }, poll: 5 };
    expect(await refusal({ playlog: { icecast: [server] } })).toMatch(
      /unknown key "playlog\.icecast\[0\]\.adminPasword" \(did you mean "playlog\.icecast\[0\]\.adminPassword"\?\)$/,
    );
  });

  it('When a kind rule has an invalid regular expression, then the message names the field, the pattern and the error', async () => {
    const message = await refusal({ playlog: { kindRules: [{ match: { artist: 'ok', title: '^(Station ID' }, kind: 'jingle' }] } });
    expect(message).toMatch(
      /invalid value for "playlog\.kindRules\[0\]\.match": field "title": "\^\(Station ID" is not a regular expression \(Invalid regular expression: .*Unterminated group\)$/,
    );
  });
});
