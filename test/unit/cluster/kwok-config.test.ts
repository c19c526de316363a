// config/kwok/kwok.yaml: KWOK v0.8.0 does not default the options a configuration file leaves out
// (a missing nodeLeaseParallelism stopped it at start: "node leases parallelism must be greater
// than 0"), and the pod stage workers must be enough for a rollout wave (docs/local-cluster.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { repoRoot } from '../../../src/cluster/binaries.ts';

test('the KWOK configuration names every worker count, with pod stages run 32 at a time', () => {
  const cfg = YAML.parse(readFileSync(path.join(repoRoot, 'config/kwok/kwok.yaml'), 'utf8'));
  assert.equal(cfg.apiVersion, 'config.kwok.x-k8s.io/v1alpha1');
  assert.equal(cfg.kind, 'KwokConfiguration');
  for (const option of ['podPlayStageParallelism', 'nodePlayStageParallelism', 'nodeLeaseParallelism', 'podsOnNodeSyncParallelism']) {
    assert.ok(cfg.options[option] > 0, `${option} must be set`);
  }
  assert.equal(cfg.options.podPlayStageParallelism, 32);
  assert.equal(cfg.options.enableDebuggingHandlers, true, 'kubectl exec into simulated pods (config/kwok/exec.yaml) needs them');
});
