import { TemplateError, parseTemplate, requireKnownField } from '../domain/template';

// `svc submit - --parse TEMPLATE` (docs/first-hour.md "Streaming tracks in"): the inverse of
// --format. Each stdin line is read with the template, `{{artist}}\t{{title}}` taking
// `Daft Punk<TAB>One More Time` apart. Pure.

export type LineParser = (line: string) => Record<string, string> | null;

/** `\t` in a template typed at a shell prompt means a tab, `\\` a backslash (as playerctl's output has them). */
function unescapeTemplate(source: string): string {
  return source.replace(/\\([t\\])/g, (_, char: string) => (char === 't' ? '\t' : '\\'));
}

/**
 * Compiles the template into a line reader. Literal text must appear as written; a field takes
 * the shortest text up to the next literal (the last field takes the rest of the line). A
 * field that comes out empty is left out; a line the template does not fit gives null.
 */
export function compileLineParser(source: string): LineParser {
  const template = unescapeTemplate(source);
  requireKnownField(template);
  const parts = parseTemplate(template);
  const fields: string[] = [];
  let pattern = '';
  parts.forEach((part, index) => {
    if ('text' in part) {
      pattern += escapeRegExp(part.text);
      return;
    }
    if (index > 0 && 'field' in parts[index - 1]) {
      throw new TemplateError(`{{${part.field}}} follows another field with nothing between them: the line cannot be split there`);
    }
    fields.push(part.field);
    pattern += index === parts.length - 1 ? '(.*)' : '(.*?)';
  });
  const matcher = new RegExp(`^${pattern}$`, 's');
  return (line) => {
    const match = matcher.exec(line.replace(/\r$/, ''));
    if (!match) return null;
    const result: Record<string, string> = {};
    fields.forEach((field, i) => {
      const value = (match[i + 1] ?? '').trim();
      if (value !== '' && !(field in result)) result[field] = value;
    });
    return result;
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
