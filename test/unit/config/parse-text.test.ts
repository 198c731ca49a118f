import { ConfigSyntaxError, detectFormat, lineAndColumn, parseConfigText, syntaxReport } from '../../../src/config/parse-text';

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

describe('lineAndColumn', () => {
  test('When the offset is on a later line, then both count from 1 on that line', () => {
    expect(lineAndColumn('ab\ncde\nf', 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn('ab\ncde\nf', 5)).toEqual({ line: 2, column: 3 });
    expect(lineAndColumn('ab\ncde\nf', 99)).toEqual({ line: 3, column: 2 });
  });
});

describe('syntaxReport', () => {
  test('When the line is indented with tabs, then the caret keeps the tabs so it lines up', () => {
    expect(syntaxReport('f', 'a\n\t\tkey: x', 2, 4, 'problem').split('\n')).toEqual(['f:2:4: problem', '  \t\tkey: x', '  \t\t ^']);
  });

  test('When the problem is past the last line, then the last line with content is shown, caret after it', () => {
    expect(syntaxReport('f', 'port: 1\nhost: "x\n\n', 4, 1, 'p').split('\n')).toEqual(['f:2:9: p', '  host: "x', '          ^']);
  });

  test.each(['secret', 'apiKey', 'api_key', 'token', 'password'])('When the line sets %s, then its value is masked at the same length', (key) => {
    const [, shown] = syntaxReport('f', `  ${key}: "hunter2"`, 1, 3, 'p').split('\n');
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
