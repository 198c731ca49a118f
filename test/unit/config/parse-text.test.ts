import { ConfigSyntaxError, detectFormat, parseConfigText } from '../../../src/config/parse-text';

// The pure part of config syntax errors: format detection, positions, and the report.

const noYaml = (): unknown => {
  throw new Error('the YAML parser was not expected to run');
};

function reportOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigSyntaxError) return error.report;
    throw error;
  }
  throw new Error('expected a ConfigSyntaxError');
}

describe('detectFormat', () => {
  test.each([
    ['svc.json', 'port: 1', 'json'],
    ['svc.YML', '{"port": 1}', 'yaml'],
    ['svc.yaml', '{"port": 1}', 'yaml'],
    ['my.conf', '  {"port": 1}', 'json'],
    ['my.conf', '\uFEFF[1]', 'json'],
    ['my.conf', '# {not json}\nport: 1', 'yaml'],
    ['.svcrc', 'port: 1', 'yaml'],
    ['.svcrc.example', '', 'yaml'],
  ])('When the file is %s holding %j, then it is read as %s', (file, text, format) => {
    expect(detectFormat(file, text)).toBe(format);
  });
});

/** A YAML parser that fails as js-yaml does, at a 1-based line and column. */
const yamlFailingAt = (line: number, column: number, reason: string) => (): unknown => {
  throw Object.assign(new Error(`${reason} (${line}:${column})`), { mark: { line: line - 1, column: column - 1 }, reason });
};

describe('the place of a syntax error', () => {
  test('When JSON breaks on a later line, then line and column count from 1 on that line', () => {
    expect(reportOf(() => parseConfigText('f.json', '{\n  "port": 1,\n  x\n}', 'json', noYaml))).toMatch(/^f\.json:3:3: JSON: /);
  });

  test('When JSON ends too early, then the place is just after its last character', () => {
    expect(reportOf(() => parseConfigText('f.json', '{"port": 1', 'json', noYaml))).toMatch(/^f\.json:1:11: JSON: /);
  });
});

describe('the syntax error report', () => {
  test('When the line is indented with tabs, then the caret keeps the tabs so it lines up', () => {
    const report = reportOf(() => parseConfigText('f', 'a\n\t\tkey: x', 'yaml', yamlFailingAt(2, 4, 'problem')));
    expect(report.split('\n')).toEqual(['f:2:4: YAML: problem', '  \t\tkey: x', '  \t\t ^']);
  });

  test('When the problem is past the last line, then the last line with content is shown, caret after it', () => {
    const report = reportOf(() => parseConfigText('f', 'port: 1\nhost: "x\n\n', 'yaml', yamlFailingAt(4, 1, 'p')));
    expect(report.split('\n')).toEqual(['f:2:9: YAML: p', '  host: "x', '          ^']);
  });

  test.each(['secret', 'apiKey', 'api_key', 'token', 'password'])('When the line sets %s, then its value is masked at the same length', (key) => {
    const [, shown] = reportOf(() => parseConfigText('f', `  ${key}: "hunter2"`, 'yaml', yamlFailingAt(1, 3, 'p'))).split('\n');
    expect(shown).toBe(`    ${key}: "*******"`);
  });
});

describe('parseConfigText', () => {
  test('When the text is empty or blank, then it is an empty config whatever the format', () => {
    expect(parseConfigText('f.json', ' \n', 'json', noYaml)).toEqual({});
    expect(parseConfigText('f.yaml', '', 'yaml', noYaml)).toEqual({});
  });

  test('When JSON ends too early, then the report points after the last character', () => {
    expect(reportOf(() => parseConfigText('f.json', '{"port": 9', 'json', noYaml)).split('\n')[0]).toMatch(/^f\.json:1:11: JSON: /);
  });

  test('When the YAML parser gives a mark, then line and column are its 0-based mark plus one', () => {
    const parseYaml = (): unknown => {
      throw Object.assign(new Error('YAML Error in f:\nlong excerpt'), { mark: { line: 1, column: 2 }, reason: 'bad thing' });
    };
    expect(reportOf(() => parseConfigText('f', 'a: 1\nb: 2\n', 'yaml', parseYaml))).toBe('f:2:3: YAML: bad thing\n  b: 2\n    ^');
  });

  test('When the YAML parser gives no position, then one line names the file and its last message line', () => {
    const parseYaml = (): unknown => {
      throw new Error('YAML Error in f:\nsomething odd');
    };
    expect(reportOf(() => parseConfigText('f', 'a: 1', 'yaml', parseYaml))).toBe('f: YAML: something odd');
  });
});
