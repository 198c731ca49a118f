import { Argument, type Command } from 'commander';
import { SHELLS, completionScript, type CompletionCommand, type Shell } from '../completion-scripts';
import type { CliContext, SetResult } from '../context';
import { EXIT } from '../exit-codes';
import { OUTPUT_TYPES } from '../../config/output-types';
import { REPORT_FORMATS } from '../../reports/format';

// `svc completion bash|zsh|fish`: prints a completion script made from the program itself.

/**
 * Argument words commander cannot tell (a first argument that is a format or `check`, a
 * subcommand's argument), from the lists the code itself checks against.
 */
const ARGUMENT_WORDS: Readonly<Record<string, Pick<CompletionCommand, 'words' | 'next'>>> = {
  report: { words: [...REPORT_FORMATS, 'check'], next: { check: REPORT_FORMATS } },
  outputs: { next: { add: OUTPUT_TYPES } },
};

/** Options whose value is a file name (complete as paths). */
const PATH_OPTIONS = new Set(['--config', '--db', '--save']);

export function registerCompletion(program: Command, ctx: CliContext, setResult: SetResult): void {
  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .addHelpText(
      'after',
      `
Examples:
  $ source <(svc completion bash)          # this shell; add it to ~/.bashrc for every shell
  $ source <(svc completion zsh)           # after compinit, e.g. in ~/.zshrc
  $ svc completion fish > ~/.config/fish/completions/svc.fish`,
    )
    .action((shell: Shell) => {
      ctx.io.out(completionScript(shell, describeCommands(program)).trimEnd());
      setResult(Promise.resolve(EXIT.OK));
    });
}

function describeCommands(program: Command): CompletionCommand[] {
  return program.commands.map((command) => {
    const choices = command.registeredArguments[0]?.argChoices;
    return {
      name: command.name(),
      description: command.description(),
      // Fixed argument values (completion bash), or the subcommands (outputs list, ...).
      words: ARGUMENT_WORDS[command.name()]?.words ?? choices ?? command.commands.map((sub) => sub.name()),
      next: ARGUMENT_WORDS[command.name()]?.next ?? {},
      options: command.options
        .filter((option) => option.long !== undefined)
        .map((option) => ({
          long: option.long as string,
          short: option.short,
          description: option.description,
          takesValue: option.required || option.optional,
          isPath: PATH_OPTIONS.has(option.long as string),
        })),
    };
  });
}
