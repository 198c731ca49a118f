import type { Command } from 'commander';
import { closestName } from '../domain/edit-distance';

// `svc outputs tset chat`: a command that has subcommands and an action of its own (`svc outputs`
// lists, `svc outputs test NAME` sends) would take `tset` for an argument it does not have and say
// "too many arguments". Its first argument is then an unknown subcommand: said so, with the
// nearest one, as commander says it for an unknown top-level command (docs/cli.md).

/** For every command with subcommands and an action: an unknown first word is an unknown subcommand. */
export function guardSubcommands(program: Command): void {
  const parents = program.commands.filter((command) => command.commands.length > 0);
  for (const parent of parents) parent.allowExcessArguments(true);
  program.hook('preAction', (_program, action) => {
    if (!parents.includes(action)) return;
    const typed = action.args[0];
    if (typed === undefined) return;
    const names = action.commands.map((sub) => sub.name());
    const suggestion = closestName(typed, names);
    const hint = suggestion ? `\n(Did you mean ${action.name()} ${suggestion}?)` : `\n(${action.name()} takes: ${names.join(', ')})`;
    action.error(`error: unknown command '${action.name()} ${typed}'${hint}`, { code: 'commander.unknownCommand', exitCode: 2 });
  });
}
