// `svc completion bash|zsh|fish` (docs/first-hour.md "Shell completion"): the scripts, made from
// the commands and options commander knows, so they never drift from `svc --help`. Pure.

export interface CompletionOption {
  long: string;
  short?: string;
  description: string;
  /** Takes a value; values that are paths complete as file names. */
  takesValue: boolean;
  isPath: boolean;
}

export interface CompletionCommand {
  name: string;
  description: string;
  options: readonly CompletionOption[];
  /** Fixed words for the first argument (`completion bash|zsh|fish`, the subcommands, the report formats). */
  words?: readonly string[];
  /** Fixed words for the second argument after one of the first (`outputs add` -> the output types). */
  next?: Readonly<Record<string, readonly string[]>>;
}

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export function completionScript(shell: Shell, commands: readonly CompletionCommand[]): string {
  switch (shell) {
    case 'bash':
      return bashScript(commands);
    case 'zsh':
      return zshScript(commands);
    case 'fish':
      return fishScript(commands);
  }
}

const optionWords = (command: CompletionCommand) => command.options.flatMap((option) => [option.long, ...(option.short ? [option.short] : [])]);
const pathOptions = (commands: readonly CompletionCommand[]) => [
  ...new Set(
    commands.flatMap((command) =>
      command.options.filter((option) => option.isPath).flatMap((option) => [option.long, ...(option.short ? [option.short] : [])]),
    ),
  ),
];
const valueOptions = (commands: readonly CompletionCommand[]) => [
  ...new Set(commands.flatMap((command) => command.options.filter((option) => option.takesValue && !option.isPath).map((option) => option.long))),
];
/** Single quotes for a shell word: descriptions come from our own help text, but stay inert anyway. */
const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

function bashScript(commands: readonly CompletionCommand[]): string {
  const cases = commands
    .map((command) => `    ${command.name}) first=${quote((command.words ?? []).join(' '))}; words=${quote([...optionWords(command), '--help'].join(' '))} ;;`)
    .join('\n');
  const nextCases = commands
    .flatMap((command) =>
      Object.entries(command.next ?? {}).map(([word, next]) => `    ${quote(`${command.name} ${word}`)}) first=${quote(next.join(' '))} ;;`),
    )
    .join('\n');
  return `# svc completion for bash. Load it now:  source <(svc completion bash)
# or for every shell:  svc completion bash > ~/.local/share/bash-completion/completions/svc
_svc_complete() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} words first=''
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W ${quote([...commands.map((command) => command.name), 'help', '--help', '--version'].join(' '))} -- "$cur"))
    return 0
  fi
  case "$prev" in
    ${pathOptions(commands).join('|')}) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    ${valueOptions(commands).join('|')}) COMPREPLY=(); return 0 ;;
  esac
  case "\${COMP_WORDS[1]}" in
${cases}
    help) first=${quote(commands.map((command) => command.name).join(' '))}; words='' ;;
    *) words='' ;;
  esac
  # The first argument's words right after the command; after one of them, its own (outputs add TYPE).
  if [ "$COMP_CWORD" -ne 2 ]; then first=''; fi
  if [ "$COMP_CWORD" -eq 3 ]; then
    case "\${COMP_WORDS[1]} \${COMP_WORDS[2]}" in
${nextCases}
    esac
  fi
  COMPREPLY=($(compgen -W "$first $words" -- "$cur"))
}
complete -o default -F _svc_complete svc
`;
}

function zshScript(commands: readonly CompletionCommand[]): string {
  const described = commands.map((command) => `    ${quote(`${command.name}:${command.description.replace(/:/g, '\\:')}`)}`).join('\n');
  const cases = commands
    .map((command) => {
      const first = command.words?.length ? `(( CURRENT == 3 )) && compadd -- ${command.words.join(' ')}; ` : '';
      return `    ${command.name}) ${first}compadd -- ${[...optionWords(command), '--help'].join(' ')} ;;`;
    })
    .join('\n');
  const nextCases = commands
    .flatMap((command) =>
      Object.entries(command.next ?? {}).map(([word, next]) => `      ${quote(`${command.name} ${word}`)}) compadd -- ${next.join(' ')}; return ;;`),
    )
    .join('\n');
  return `#compdef svc
# svc completion for zsh. Load it now:  source <(svc completion zsh)
# or for every shell: svc completion zsh > "\${fpath[1]}/_svc"
_svc() {
  local -a commands
  commands=(
${described}
  )
  if (( CURRENT == 2 )); then
    _describe 'svc command' commands
    return
  fi
  case $words[CURRENT-1] in
    ${pathOptions(commands).join('|')}) _files; return ;;
    ${valueOptions(commands).join('|')}) return ;;
  esac
  if (( CURRENT == 4 )); then
    case "$words[2] $words[3]" in
${nextCases}
    esac
  fi
  case $words[2] in
${cases}
  esac
}
if (( $+functions[compdef] )); then compdef _svc svc; fi
`;
}

function fishScript(commands: readonly CompletionCommand[]): string {
  const lines = [
    '# svc completion for fish. Load it now:  svc completion fish | source',
    '# or for every shell: svc completion fish > ~/.config/fish/completions/svc.fish',
    'complete -c svc -f',
  ];
  for (const command of commands) {
    lines.push(`complete -c svc -n __fish_use_subcommand -a ${command.name} -d ${quote(command.description)}`);
    if (command.words?.length) {
      const notYet = `__fish_seen_subcommand_from ${command.name}; and not __fish_seen_subcommand_from ${command.words.join(' ')}`;
      lines.push(`complete -c svc -n ${quote(notYet)} -a ${quote(command.words.join(' '))}`);
    }
    for (const [word, next] of Object.entries(command.next ?? {})) {
      const after = `__fish_seen_subcommand_from ${command.name}; and __fish_seen_subcommand_from ${word}`;
      lines.push(`complete -c svc -n ${quote(after)} -a ${quote(next.join(' '))}`);
    }
    for (const option of command.options) {
      const flags = [`-l ${option.long.replace(/^--/, '')}`, ...(option.short ? [`-s ${option.short.replace(/^-/, '')}`] : [])];
      const value = option.isPath ? ' -r -F' : option.takesValue ? ' -r' : '';
      lines.push(`complete -c svc -n ${quote(`__fish_seen_subcommand_from ${command.name}`)} ${flags.join(' ')}${value} -d ${quote(option.description)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
