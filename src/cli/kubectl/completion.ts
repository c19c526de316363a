// Shell completion. `completion bash|zsh|fish|powershell` prints a script for `kubectl-kruise`; both it and
// kubectl's plugin completion (kubectl >= 1.26 runs `kubectl_complete-kruise`, shipped in bin/)
// ask the hidden `__complete` command, which answers in cobra's protocol: one candidate per line,
// then `:<directive>` (4 = do not complete file names).
import { Command } from 'commander';
import { CliError, write } from './session.ts';

const NO_FILE_COMPLETION = 4;

/** Candidates for the last (partial) word after the given words. */
export function completions(root: Command, words: readonly string[]): string[] {
  let cmd = root;
  const done = words.slice(0, -1);
  const partial = words[words.length - 1] ?? '';
  for (const w of done) {
    if (w.startsWith('-')) continue;
    const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (sub) cmd = sub;
  }
  const candidates = partial.startsWith('-')
    ? [cmd, ...ancestors(cmd)].flatMap((c) => c.options.flatMap((o) => [o.long, o.short].filter((x): x is string => !!x)))
    : cmd.commands.filter((c) => c.name() !== '__complete').map((c) => c.name());
  return [...new Set(candidates)].filter((c) => c.startsWith(partial)).sort();
}

function ancestors(cmd: Command): Command[] {
  const out: Command[] = [];
  for (let p = cmd.parent; p; p = p.parent) out.push(p);
  return out;
}

const BASH = `# kubectl-kruise bash completion: source <(kubectl-kruise completion bash)
_kubectl_kruise() {
  local IFS=$'\\n'
  local out
  out=$(kubectl-kruise __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null | grep -v '^:')
  COMPREPLY=($(compgen -W "$out" -- "\${COMP_WORDS[COMP_CWORD]}"))
}
complete -F _kubectl_kruise kubectl-kruise
`;

const ZSH = `#compdef kubectl-kruise
# kubectl-kruise zsh completion: source <(kubectl-kruise completion zsh)
_kubectl_kruise() {
  local -a out
  out=(\${(f)"$(kubectl-kruise __complete "\${(@)words[2,$CURRENT]}" 2>/dev/null | grep -v '^:')"})
  compadd -- $out
}
compdef _kubectl_kruise kubectl-kruise
`;

const FISH = `# kubectl-kruise fish completion: kubectl-kruise completion fish | source
function __kubectl_kruise_complete
  set -l words (commandline -opc) (commandline -ct)
  kubectl-kruise __complete $words[2..-1] 2>/dev/null | string match -v -r '^:'
end
complete -c kubectl-kruise -f -a '(__kubectl_kruise_complete)'
`;

const POWERSHELL = `# kubectl-kruise PowerShell completion: kubectl-kruise completion powershell | Out-String | Invoke-Expression
Register-ArgumentCompleter -Native -CommandName 'kubectl-kruise' -ScriptBlock {
  param($wordToComplete, $commandAst, $cursorPosition)
  $words = @($commandAst.CommandElements | Select-Object -Skip 1 | ForEach-Object { $_.ToString() })
  if ($wordToComplete -eq '') { $words += '""' }
  & kubectl-kruise __complete @words 2>$null | Where-Object { $_ -notlike ':*' } | ForEach-Object {
    [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
  }
}
`;

const SCRIPTS: Record<string, string> = { bash: BASH, zsh: ZSH, fish: FISH, powershell: POWERSHELL };

export function completionCommand(root: Command): Command {
  const completion = new Command('completion')
    .description(
      'print the shell completion script: source <(kubectl-kruise completion bash|zsh); kubectl-kruise completion fish | source; kubectl-kruise completion powershell | Out-String | Invoke-Expression',
    )
    .argument('<shell>', 'bash, zsh, fish or powershell')
    .action((shell: string) => {
      const script = SCRIPTS[shell];
      if (!script) throw new CliError(`unsupported shell type "${shell}"`);
      write(script);
    });
  root.addCommand(
    new Command('__complete')
      .argument('[words...]')
      .allowUnknownOption()
      .helpOption(false)
      .action((words: string[]) => {
        for (const c of completions(root, words.length ? words : [''])) write(c);
        write(`:${NO_FILE_COMPLETION}`);
      }),
    { hidden: true },
  );
  return completion;
}
