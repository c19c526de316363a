// The completion scripts run in the shells they are for: each sources `kubectl-kruise completion
// <shell>` (bin/kubectl-kruise on the PATH) and asks the shell itself for the candidates, so a script
// the shell cannot parse, or that passes the words to `__complete` wrongly, fails here.
// fish comes from Debian (hack/install-fish.sh; ./run.sh test installs it for this file); the test
// skips, saying so, only where it could not be installed. PowerShell has no package this project's
// machines can install (docs/kubectl-kruise.md): its script's shape is checked in kubectl-kruise-tools.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const env = { ...process.env, PATH: `${path.join(repoRoot, 'bin')}:${process.env.PATH}` };
const has = (shell: string) => spawnSync(shell, ['-c', 'true']).status === 0;

/** Runs a shell script; its standard output's lines, sorted. */
function linesOf(shell: string, script: string): string[] {
  const r = spawnSync(shell, ['-c', script], { env, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `${shell} failed:\n${r.stderr}`);
  return r.stdout.split('\n').filter(Boolean).sort();
}

const ROLLOUT_VERBS = ['approve', 'history', 'pause', 'plan', 'restart', 'resume', 'status', 'undo'];

describe('completion in real shells', () => {
  test(
    'fish: complete -C asks the sourced script',
    { skip: !has('fish') && 'fish is not installed (hack/install-fish.sh could not install it)' },
    () => {
      const fish = (line: string) => linesOf('fish', `kubectl-kruise completion fish | source; complete -C ${JSON.stringify(line)}`);
      assert.deepEqual(fish('kubectl-kruise rollout '), ROLLOUT_VERBS);
      assert.deepEqual(fish('kubectl-kruise rollout st'), ['status']);
      assert.deepEqual(fish('kubectl-kruise ro'), ['rollout']);
      // A partial flag completes among the command's and its parents' options.
      assert.ok(fish('kubectl-kruise rollout status --ti').includes('--timeout'));
    },
  );

  test('bash: the completion function fills COMPREPLY', () => {
    const out = linesOf(
      'bash',
      [
        'source <(kubectl-kruise completion bash)',
        'COMP_WORDS=(kubectl-kruise rollout ""); COMP_CWORD=2; _kubectl_kruise',
        'printf "%s\\n" "${COMPREPLY[@]}"',
      ].join('\n'),
    );
    assert.deepEqual(out, ROLLOUT_VERBS);
  });
});
