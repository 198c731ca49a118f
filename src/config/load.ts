import fs from 'node:fs';
import path from 'node:path';
import { ValidationError, reach, type AnyObject, type ObjectSchema } from 'yup';
import { closestName, withArticle } from '../domain/edit-distance';
import { deepMerge, isPlainObject } from '../domain/plain-object';
import { ConfigError, errorMessage } from '../errors';
import { CONFIG_SEARCH_PLACES, configSearchDirs } from './defaults';
import { expandHome } from './home-path';
import { ConfigSyntaxError, detectFormat, parseConfigText } from './parse-text';
import { configSchema, type Config, type FrozenConfig } from './schema';

// Precedence (docs/decisions.md): command-line flag > environment > config file > default.

/** Environment variables and the config key each one sets. */
const ENV_KEYS: Readonly<Record<string, readonly string[]>> = {
  SVC_PORT: ['port'],
  SVC_HOST: ['host'],
  SVC_SECRET: ['secret', 'client.secret'],
  SVC_SECRET_FILE: ['secretFile'],
  SVC_DATABASE: ['database.location'],
  SVC_URL: ['client.url'],
};

/** A flag value as commander hands it over, keyed by the dotted config key it sets. */
export type FlagOverrides = Readonly<Record<string, string | boolean | undefined>>;

export interface LoadOptions {
  /** `--config FILE`: load this file instead of searching. */
  configFile?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  flags?: FlagOverrides;
}

export interface LoadedConfig {
  config: FrozenConfig;
  /** The config file used, if any. */
  filepath: string | null;
}

type PlainObject = Record<string, unknown>;

export async function loadConfig(options: LoadOptions = {}): Promise<LoadedConfig> {
  const env = options.env ?? process.env;
  const configFile = options.configFile === undefined ? undefined : expandHome(options.configFile, env);
  const file = await readConfigFile(configFile, options.cwd ?? process.cwd(), env);
  const fileLabel = file ? `config file ${file.filepath}` : 'config file';

  const fromFile = file ? checkSource(file.config, fileLabel) : {};
  const fromEnv = checkSource(envOverrides(env), 'environment');
  const fromFlags = checkSource(flagOverrides(options.flags ?? {}), 'command line');

  const merged = [fromFile, fromEnv, fromFlags].reduce<PlainObject>((merged, layer) => deepMerge(merged, layer), configSchema.getDefault() as PlainObject);
  const config = validate(merged, 'configuration');
  checkDeadlines(config, fileLabel);
  config.database.location = expandHome(config.database.location, env);
  config.staticDir = expandHome(config.staticDir, env);
  if (config.secretFile !== '') readSecretFile(config, env);
  return { config: deepFreeze(config), filepath: file?.filepath ?? null };
}

/**
 * `secretFile` (docs/running.md "A system service"): the secret is the file's text without its
 * line ending, e.g. a systemd credential in $CREDENTIALS_DIRECTORY. Given with `secret` too, it is
 * refused: one of them would silently lose.
 */
function readSecretFile(config: Config, env: NodeJS.ProcessEnv): void {
  const file = expandHome(config.secretFile, env);
  if (config.secret !== '') throw configError(`secret and secretFile are both set: keep one (secretFile ${file})`);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw configError(`cannot read secretFile ${file}: ${firstLine(errorMessage(error))}`);
  }
  const secret = text.replace(/\r?\n$/, '');
  if (secret === '' || /[\r\n]/.test(secret)) throw configError(`secretFile ${file} must hold the secret on one line`);
  config.secret = secret;
}

async function readConfigFile(explicit: string | undefined, cwd: string, env: NodeJS.ProcessEnv): Promise<{ config: unknown; filepath: string } | null> {
  if (explicit !== undefined) {
    const filepath = path.resolve(cwd, explicit);
    if (!fs.existsSync(filepath)) throw configError(`config file not found: ${filepath}`);
    return loadFile(filepath);
  }
  // Checking for the files first keeps cosmiconfig (and YAML parsing) off the start-up path
  // of client commands when there is no config file at all. A package.json without an `svc`
  // key is no config: the search goes on (a project folder above is common).
  for (const dir of configSearchDirs(cwd, env)) {
    for (const name of CONFIG_SEARCH_PLACES) {
      const candidate = path.join(dir, name);
      if (!fs.existsSync(candidate)) continue;
      const loaded = await loadFile(candidate);
      if (loaded) return loaded;
    }
  }
  return null;
}

// Code goes through cosmiconfig; every other file is data, JSON or YAML (package.json: its `svc` key).
const COSMICONFIG_EXTENSIONS = new Set(['.js', '.cjs', '.mjs', '.ts', '.cts', '.mts']);

async function loadFile(filepath: string): Promise<{ config: unknown; filepath: string } | null> {
  if (COSMICONFIG_EXTENSIONS.has(path.extname(filepath).toLowerCase())) {
    return loadWithCosmiconfig((explorer) => explorer.load(filepath), filepath);
  }
  let text: string;
  try {
    text = fs.readFileSync(filepath, 'utf8');
  } catch (error) {
    throw configError(`cannot read config file ${filepath}: ${firstLine(errorMessage(error))}`);
  }
  // cosmiconfig's own YAML loader (js-yaml), so that YAML means the same whichever way it is
  // found; required only when there is YAML to parse, so a JSON file costs no cosmiconfig load.
  const parseYaml = (content: string): unknown => {
    const { defaultLoaders } = require('cosmiconfig') as typeof import('cosmiconfig');
    return defaultLoaders['.yaml'](filepath, content) as unknown;
  };
  try {
    if (path.basename(filepath) !== 'package.json') return { config: parseConfigText(filepath, text, detectFormat(filepath, text), parseYaml), filepath };
    const pkg = parseConfigText(filepath, text, 'json', parseYaml);
    return isPlainObject(pkg) && Object.hasOwn(pkg, 'svc') ? { config: pkg.svc, filepath } : null;
  } catch (error) {
    if (error instanceof ConfigSyntaxError) throw configError(error.report);
    throw error;
  }
}

type Explorer = ReturnType<(typeof import('cosmiconfig'))['cosmiconfig']>;

async function loadWithCosmiconfig(
  run: (explorer: Explorer) => Promise<{ config: unknown; filepath: string; isEmpty?: boolean } | null>,
  filepath: string,
): Promise<{ config: unknown; filepath: string } | null> {
  // Loaded on demand (a plain require, so it works under Jest's CommonJS runtime too).
  const { cosmiconfig } = require('cosmiconfig') as typeof import('cosmiconfig');
  const explorer = cosmiconfig('svc', { searchPlaces: CONFIG_SEARCH_PLACES, searchStrategy: 'none', cache: false });
  let result;
  try {
    result = await run(explorer);
  } catch (error) {
    throw configError(`cannot read config file ${filepath}: ${firstLine(errorMessage(error))}`);
  }
  if (!result) return null;
  return { config: result.isEmpty ? {} : result.config, filepath: result.filepath };
}

/** Rejects unknown keys and wrong types in one source, naming the key and the source. */
function checkSource(raw: unknown, label: string): PlainObject {
  if (raw === undefined || raw === null) return {};
  if (!isPlainObject(raw)) throw configError(`${label}: the configuration must be an object`);
  const source = expandShorthands(raw);
  const unknown = findUnknownKey(source, configSchema as ObjectSchema<AnyObject>, '');
  if (unknown) {
    const suggestion = closestName(unknown.key, unknown.siblings);
    const hint = suggestion ? ` (did you mean "${unknown.prefix}${suggestion}"?)` : '';
    throw configError(`${label}: unknown key "${unknown.prefix}${unknown.key}"${hint}`);
  }
  validate(source, label);
  return source;
}

/** `database: "<path or URL>"` is short for `database: {location: "<path or URL>"}`. */
export function expandShorthands<T extends PlainObject>(raw: T): T {
  return typeof raw.database === 'string' ? { ...raw, database: { location: raw.database } } : raw;
}

/**
 * Enrichment must end inside the processing budget, so a 408 only ever comes from a stuck store
 * (docs/title-first.md "The 408").
 */
function checkDeadlines(config: Config, label: string): void {
  const { deadlineSeconds } = config.enrichment;
  if (deadlineSeconds < config.processingTimeoutSeconds) return;
  throw configError(
    `${label}: "enrichment.deadlineSeconds" (${deadlineSeconds}) must be below "processingTimeoutSeconds" (${config.processingTimeoutSeconds})`,
  );
}

function validate(value: PlainObject, label: string): Config {
  try {
    return configSchema.validateSync(value, { strict: true, abortEarly: true });
  } catch (error) {
    if (error instanceof ValidationError) {
      const key = error.path ?? '';
      const actual = getPath(value, key.replace(/\[(\d+)\]/g, '.$1'));
      throw configError(`${label}: invalid value for "${key}": ${describeValidation(error, actual)}`);
    }
    throw error;
  }
}

/** Keys whose value is never repeated in a message, whatever its shape (a list, an object). */
const SECRET_NAME = /(secret|apikey|api_key|token|password)$/i;

function describeValidation(error: ValidationError, actual: unknown): string {
  const message = error.errors[0] ?? error.message;
  const hidden = SECRET_NAME.test(error.path ?? '');
  const shown = hidden ? `a ${Array.isArray(actual) ? 'list' : typeof actual} (not shown: it may be a secret)` : JSON.stringify(actual);
  // yup's typeError text ("must be a `number` type, but the final value was: ...") is long; shorten it.
  const typeMatch = /must be a `(\w+)` type/.exec(message);
  if (typeMatch) return `expected ${withArticle(typeMatch[1] ?? '')}, got ${shown}`;
  return hidden ? 'not a valid value (not shown: it may be a secret)' : message.replace(/^\S+ /, '');
}

/**
 * Lists whose items check their own keys, with the type in the message (schema.ts "output-keys":
 * an mqtt output has no key "homeAsistant"); every other list of objects is checked item by item here.
 */
const SELF_CHECKED_LISTS = new Set(['outputs']);

interface UnknownKey {
  prefix: string;
  key: string;
  siblings: string[];
}

/** The first key no schema field has, with the keys that level does have (for "did you mean"). */
function findUnknownKey(value: PlainObject, schema: ObjectSchema<AnyObject>, prefix: string): UnknownKey | null {
  for (const [key, child] of Object.entries(value)) {
    const fieldSchema = Object.hasOwn(schema.fields, key) ? schema.fields[key] : undefined;
    if (!fieldSchema) return { prefix, key, siblings: Object.keys(schema.fields) };
    const nested = isPlainObject(child)
      ? objectFields(fieldSchema) && findUnknownKey(child, fieldSchema as ObjectSchema<AnyObject>, `${prefix}${key}.`)
      : Array.isArray(child) && !SELF_CHECKED_LISTS.has(`${prefix}${key}`)
        ? findUnknownItemKey(child, fieldSchema, `${prefix}${key}`)
        : null;
    if (nested) return nested;
  }
  return null;
}

/** Each object of a list of objects (`playlog.icecast[0].pol`), named with its index. */
function findUnknownItemKey(items: readonly unknown[], listSchema: unknown, path: string): UnknownKey | null {
  const inner = (listSchema as { innerType?: unknown }).innerType;
  if (!objectFields(inner)) return null;
  for (const [index, item] of items.entries()) {
    if (!isPlainObject(item)) continue;
    const found = findUnknownKey(item, inner as ObjectSchema<AnyObject>, `${path}[${index}].`);
    if (found) return found;
  }
  return null;
}

function objectFields(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && 'fields' in schema;
}

function envOverrides(env: NodeJS.ProcessEnv): PlainObject {
  const result: PlainObject = {};
  for (const [name, keys] of Object.entries(ENV_KEYS)) {
    const raw = env[name];
    // Empty counts as unset (docs/decisions.md), as no-color.org defines it for NO_COLOR.
    if (raw === undefined || raw === '') continue;
    for (const key of keys) setPath(result, key, coerce(key, raw, `environment variable ${name}`));
  }
  return result;
}

function flagOverrides(flags: FlagOverrides): PlainObject {
  const result: PlainObject = {};
  for (const [key, raw] of Object.entries(flags)) {
    if (raw === undefined) continue;
    setPath(result, key, typeof raw === 'boolean' ? raw : coerce(key, raw, 'command line'));
  }
  return result;
}

/** Strings from the environment or the command line take the type of the key's default. */
function coerce(key: string, raw: string, label: string): unknown {
  const example = getPath(configSchema.getDefault(), key);
  // A key with no default (icecastSource.port: off unless set) takes the type of its schema.
  const type = example === undefined ? (reach(configSchema, key) as { type?: string }).type : typeof example;
  if (type === 'number') {
    const trimmed = raw.trim();
    const value = trimmed === '' ? NaN : Number(trimmed);
    if (!Number.isFinite(value)) throw configError(`${label}: invalid value for "${key}": expected a number, got ${JSON.stringify(raw)}`);
    return value;
  }
  if (type === 'boolean') {
    if (/^(true|1|yes)$/i.test(raw)) return true;
    if (/^(false|0|no)$/i.test(raw)) return false;
    throw configError(`${label}: invalid value for "${key}": expected true or false, got ${JSON.stringify(raw)}`);
  }
  return raw;
}

function configError(message: string): ConfigError {
  return new ConfigError(`config error: ${message}`);
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}

function getPath(target: PlainObject, key: string): unknown {
  return key.split('.').reduce<unknown>((node, part) => (typeof node === 'object' && node !== null ? (node as PlainObject)[part] : undefined), target);
}

function setPath(target: PlainObject, key: string, value: unknown): void {
  const parts = key.split('.');
  const last = parts.pop() as string;
  let node = target;
  for (const part of parts) {
    if (!isPlainObject(node[part])) node[part] = {};
    node = node[part] as PlainObject;
  }
  node[last] = value;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
