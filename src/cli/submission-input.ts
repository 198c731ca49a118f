import { errorMessage } from '../errors';
// `svc submit -`: turns stdin lines into submissions. Pure over an async iterable of lines.
//
// NDJSON is read line by line as it arrives (a live feed is submitted as it happens); a blank
// line is skipped; a bad line becomes an error naming its line number and the rest goes on.
// One pretty-printed JSON object spread over several lines is accepted too: when the first
// non-blank line is not JSON by itself, the input is read to the end and parsed as one
// document; if that fails as well, every line is judged on its own.

export type InputItem = { line: number; fields: Record<string, unknown> } | { line: number; error: string };

export async function* readSubmissions(lines: AsyncIterable<string>): AsyncGenerator<InputItem> {
  let lineNumber = 0;
  let held: { line: number; text: string }[] | null = null;
  let decided = false;

  for await (const text of lines) {
    lineNumber++;
    if (held) {
      held.push({ line: lineNumber, text });
      continue;
    }
    if (text.trim() === '') continue;
    if (!decided) {
      decided = true;
      if (!parsesAsJson(text)) {
        held = [{ line: lineNumber, text }];
        continue;
      }
    }
    yield judgeLine(lineNumber, text);
  }

  if (!held || held.length === 0) return;
  const first = held[0] as { line: number };
  const whole = held.map((entry) => entry.text).join('\n');
  if (parsesAsJson(whole)) {
    yield judgeValue(first.line, JSON.parse(whole));
    return;
  }
  for (const entry of held) {
    if (entry.text.trim() !== '') yield judgeLine(entry.line, entry.text);
  }
}

function judgeLine(line: number, text: string): InputItem {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { line, error: `invalid JSON: ${errorMessage(error)}` };
  }
  return judgeValue(line, value);
}

function judgeValue(line: number, value: unknown): InputItem {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { line, error: `expected a JSON object, got ${describeJsonType(value)}` };
  }
  return { line, fields: value as Record<string, unknown> };
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** `--parse TEMPLATE`: each non-blank line read with the template (cli/line-parser.ts), as it arrives. */
export async function* readTemplatedLines(lines: AsyncIterable<string>, parse: (line: string) => Record<string, string> | null): AsyncGenerator<InputItem> {
  let lineNumber = 0;
  for await (const text of lines) {
    lineNumber++;
    if (text.trim() === '') continue;
    const fields = parse(text);
    if (fields === null) yield { line: lineNumber, error: 'does not fit the --parse template' };
    else if (Object.keys(fields).length === 0) yield { line: lineNumber, error: 'every field of the --parse template is empty' };
    else yield { line: lineNumber, fields };
  }
}
