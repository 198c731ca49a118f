import { isPlainObject } from '../domain/plain-object';
import { errorMessage } from '../errors';

// Turns the text of a data config file (JSON or YAML) into a value, or into one line that says
// where and what the problem is, followed by the offending line and a caret (as compilers do).
// Pure: the caller reads the file and supplies the YAML parser.

export type DataFormat = 'json' | 'yaml';

/** A YAML parser; js-yaml (through cosmiconfig) throws an error with `mark` and `reason`. */
export type YamlParse = (text: string) => unknown;

export class ConfigSyntaxError extends Error {
  constructor(
    /** `file:line:column: problem`, then the line and a caret. */
    readonly report: string,
  ) {
    super(report);
    this.name = 'ConfigSyntaxError';
  }
}

/**
 * The format of a file: by extension when it is one we know, else by content. Content that
 * starts with `{` or `[` is JSON; anything else is YAML (which covers `key: value` files).
 */
export function detectFormat(filepath: string, text: string): DataFormat {
  const lower = filepath.toLowerCase();
  if (lower.endsWith('.json')) return 'json';
  if (lower.endsWith('.yaml') || lower.endsWith('.yml')) return 'yaml';
  return /^\s*[{[]/.test(stripBom(text)) ? 'json' : 'yaml';
}

export function parseConfigText(filepath: string, text: string, format: DataFormat, parseYaml: YamlParse): unknown {
  const body = stripBom(text);
  if (body.trim() === '') return {};
  return format === 'json' ? parseJson(filepath, body) : parseYamlText(filepath, body, parseYaml);
}

function parseJson(filepath: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = errorMessage(error);
    // V8: "Expected ',' or '}' after property value in JSON at position 10" (newer versions add
    // "(line 1 column 11)"); "Unexpected end of JSON input" has no position: it is the end.
    const position = /at position (\d+)/.exec(message);
    const offset = position ? Number(position[1]) : text.length;
    // Newer V8 quotes the text around the problem ('Unexpected token 'h', "...hunter2..." is not
    // valid JSON'), and the token itself may be a character of a secret: neither is repeated.
    const problem = message
      .replace(/\s*in JSON at position \d+.*$/s, '')
      .replace(/^Unexpected token .*? is not valid JSON$/s, 'Unexpected character')
      .replace(/^Unexpected end of JSON input$/, 'unexpected end of the file');
    const { line, column } = lineAndColumn(text, offset);
    throw new ConfigSyntaxError(syntaxReport(filepath, text, line, column, `JSON: ${lowerFirst(problem)}`));
  }
}

function parseYamlText(filepath: string, text: string, parseYaml: YamlParse): unknown {
  try {
    return parseYaml(text);
  } catch (error) {
    // js-yaml's YAMLException: `mark` is 0-based, `reason` is the problem without the excerpt.
    const { mark, reason } = (error instanceof Error ? error : {}) as { mark?: unknown; reason?: unknown };
    if (isPlainObject(mark) && typeof mark.line === 'number' && typeof mark.column === 'number') {
      throw new ConfigSyntaxError(
        syntaxReport(filepath, text, mark.line + 1, mark.column + 1, `YAML: ${typeof reason === 'string' ? reason : 'syntax error'}`),
      );
    }
    const first = errorMessage(error).split('\n').filter(Boolean).pop() ?? 'syntax error';
    throw new ConfigSyntaxError(`${filepath}: YAML: ${first}`);
  }
}

/** 1-based line and column of a character offset. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.min(offset, text.length));
  const lines = before.split('\n');
  return { line: lines.length, column: (lines[lines.length - 1] ?? '').length + 1 };
}

// The offending line is shown with every value that may be a secret masked: stderr ends up in
// logs. A line that sets a secret key shows the key only; a line that starts with no key at all
// (a list item, a value on the line after its key, a block of text) may be part of a secret's
// value, and shows only its punctuation; a line that starts with another key is shown as is.
const SECRET_KEY = /(secret|apikey|api_key|token|password)["']?\s*:/i;
const LEADING_KEY = /^\s*[{,]?\s*["']?[\w.$-]+["']?\s*:/;

function maskSecretValues(line: string): string {
  const secret = SECRET_KEY.exec(line);
  const mask = (from: number) => line.slice(0, from) + line.slice(from).replace(/[^\s{}[\],"':-]/g, '*');
  if (secret) return mask(secret.index + secret[0].length);
  return LEADING_KEY.test(line) ? line : mask(0);
}

/** `file:line:column: problem`, the offending line, and a caret under the column. */
function syntaxReport(filepath: string, text: string, line: number, column: number, problem: string): string {
  const lines = text.replace(/\r$/gm, '').split('\n');
  // A problem found at the end of the file (an unclosed quote or bracket) is shown just after
  // the last line that has something on it, not on an empty line.
  if (lines.slice(line - 1).every((rest) => rest.trim() === '')) {
    const last = lines.findLastIndex((candidate) => candidate.trim() !== '');
    if (last >= 0) {
      line = last + 1;
      column = (lines[last] ?? '').length + 1;
    }
  }
  const shown = maskSecretValues(lines[line - 1] ?? '');
  // Keep tabs under tabs so the caret lines up however the terminal expands them.
  const pad = shown.slice(0, column - 1).replace(/[^\t]/g, ' ');
  return `${filepath}:${line}:${column}: ${problem}\n  ${shown}\n  ${pad}^`;
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
