import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { OUTPUT_TYPES } from '../../src/config/output-types';
import { REPORT_FORMATS } from '../../src/reports/format';
import { runCli } from '../helpers/run-cli';
import { makeTempDir } from '../helpers/temp-dir';

// `svc completion bash` sourced in a real bash, completing as bash would: COMP_WORDS and
// COMP_CWORD set, the completion function called, COMPREPLY read back (docs/first-hour.md).

describe('svc completion', () => {
  const temp = makeTempDir('svc-completion-');
  let script: string;
  beforeAll(async () => {
    const result = await runCli(['completion', 'bash']);
    expect([result.code, result.stderr]).toEqual([0, '']);
    script = path.join(temp.dir, 'svc.bash');
    fs.writeFileSync(script, result.stdout);
    fs.writeFileSync(path.join(temp.dir, 'my.svcrc.yaml'), 'port: 1\n');
  });
  afterAll(() => temp.cleanup());

  /** What bash offers for the command line `words`, the cursor on the last word. */
  const complete = (...words: string[]): string[] => {
    const line = ['svc', ...words];
    const program = `source ${JSON.stringify(script)}
COMP_WORDS=(${line.map((word) => `'${word}'`).join(' ')})
COMP_CWORD=${line.length - 1}
COMP_LINE=${JSON.stringify(line.join(' '))}
_svc_complete
printf '%s\\n' "\${COMPREPLY[@]}"`;
    const bash = spawnSync('bash', ['--norc', '--noprofile', '-c', program], { cwd: temp.dir, encoding: 'utf8' });
    expect(bash.stderr).toBe('');
    return bash.stdout.split('\n').filter(Boolean).sort();
  };

  it('When the first word is being typed, then the commands are offered', () => {
    expect(complete('')).toEqual(expect.arrayContaining(['serve', 'submit', 'last', 'history', 'status', 'watch-images', 'completion']));
    expect(complete('s')).toEqual(['serve', 'status', 'submit']);
  });

  it("When a command's option is being typed, then that command's options are offered", () => {
    expect(complete('last', '--f')).toEqual(['--follow', '--format']);
    expect(complete('submit', '--pa')).toEqual(['--parse']);
    expect(complete('completion', '')).toEqual(expect.arrayContaining(['bash', 'fish', 'zsh']));
  });

  it('When --config wants its value, then file names are offered; a value like --port offers nothing', () => {
    expect(complete('serve', '--config', 'my')).toEqual(['my.svcrc.yaml']);
    expect(complete('serve', '--port', '')).toEqual([]);
  });

  it('When svc report <TAB>, then the report formats and check are offered, from the list the server checks against', () => {
    expect(complete('report', '')).toEqual(expect.arrayContaining([...REPORT_FORMATS, 'check']));
    expect(complete('report', 'check', '')).toEqual(expect.arrayContaining([...REPORT_FORMATS]));
    expect(complete('report', 'check', '')).not.toContain('check');
    expect(complete('report', 's')).toEqual(['soundexchange']);
  });

  it('When svc outputs add <TAB>, then every output type is offered, and no subcommand', () => {
    const offered = complete('outputs', 'add', '');
    expect(offered).toEqual(expect.arrayContaining([...OUTPUT_TYPES]));
    expect(offered).not.toContain('test');
    expect(offered).not.toContain('add');
    expect(complete('outputs', 'add', 'm')).toEqual(['mqtt']);
    expect(complete('outputs', '')).toEqual(expect.arrayContaining(['test', 'add']));
    expect(complete('outputs', 'test', '')).not.toContain('add');
  });

  it('When the shell is unknown, then usage error 2', async () => {
    const result = await runCli(['completion', 'tcsh']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bash, zsh, fish/);
  });
});
