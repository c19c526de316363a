// kubectl-kruise's verbs from kruise-tools beyond the workloads' rollout: Kruise Rollout (approve,
// undo --fast, describe rollout), set env's parsing and merging, set subject's subjects, -f
// manifests, exec's pod choice, get all's tables, completion scripts — their pure parts, with
// kruise-tools' (and kubectl's) messages.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  approvePatch,
  describeRollout,
  fastRollbackPatch,
  podSelectorOf,
  workloadOf,
  type Rollout,
} from '../../../src/cli/kubectl/kruise-rollout.ts';
import {
  envFrom,
  keyToEnvName,
  listEnv,
  parseEnv,
  splitEnvironmentFromResources,
  updateEnv,
  validateNoOverwrites,
} from '../../../src/cli/kubectl/env.ts';
import { subjectsOf } from '../../../src/cli/kubectl/set.ts';
import { parseManifests } from '../../../src/cli/kubectl/manifests.ts';
import { attachablePod } from '../../../src/cli/kubectl/misc.ts';
import { GET_ALL_TYPES, tableOf } from '../../../src/cli/kubectl/get.ts';
import { resolveType } from '../../../src/cli/kubectl/session.ts';
import { runKubectlKruise } from '../../../src/cli/kubectl/main.ts';
import { pod } from '../cloneset/fixtures.ts';

const v1beta1 = (spec: Rollout['spec'], status: Rollout['status']): Rollout => ({
  apiVersion: 'rollouts.kruise.io/v1beta1',
  kind: 'Rollout',
  metadata: { name: 'ro', namespace: 'n', generation: 1 },
  spec,
  status: { observedGeneration: 1, ...status },
});

describe('Kruise Rollout: approve, undo --fast', () => {
  it('approve moves a paused canary or blue-green step on, and refuses otherwise with kruise-tools words', () => {
    assert.deepEqual(approvePatch(v1beta1({}, { canaryStatus: { currentStepState: 'StepPaused' } })), {
      status: { canaryStatus: { currentStepState: 'StepReady' } },
    });
    assert.deepEqual(approvePatch(v1beta1({}, { blueGreenStatus: { currentStepState: 'StepPaused' } })), {
      status: { blueGreenStatus: { currentStepState: 'StepReady' } },
    });
    assert.throws(
      () => approvePatch(v1beta1({}, { canaryStatus: { currentStepState: 'StepUpgrade' } })),
      /^Error: does not allow to approve, because current canary state is not 'StepPaused'$/,
    );
    assert.throws(
      () => approvePatch(v1beta1({}, { blueGreenStatus: { currentStepState: 'StepReady' } })),
      /because current blue-green state is not 'StepPaused'/,
    );
    assert.throws(() => approvePatch(v1beta1({}, {})), /no need to approve: not in canary or blue-green progress/);
    const alpha = { ...v1beta1({}, { canaryStatus: { currentStepState: 'StepPaused' } }), apiVersion: 'rollouts.kruise.io/v1alpha1' };
    assert.deepEqual(approvePatch(alpha), { status: { canaryStatus: { currentStepState: 'StepReady' } } });
  });

  it('undo --fast goes back to the previous step with no traffic and the most replicas', () => {
    const steps = [{ replicas: '20%' }, { replicas: '50%' }, { replicas: '50%', traffic: '10%' }, { replicas: '100%', traffic: '100%' }];
    const blueGreen = v1beta1({ strategy: { blueGreen: { steps } } }, { currentStepIndex: 4 });
    assert.deepEqual(fastRollbackPatch(blueGreen), { status: { blueGreenStatus: { nextStepIndex: 2 } } });
    const canary = v1beta1({ strategy: { canary: { steps } } }, { currentStepIndex: 3 });
    assert.deepEqual(fastRollbackPatch(canary), { status: { canaryStatus: { nextStepIndex: 2 } } });
    assert.throws(
      () => fastRollbackPatch(v1beta1({ strategy: { canary: { steps } } }, { currentStepIndex: 1 })),
      /already at the first step/,
    );
    assert.throws(
      () =>
        fastRollbackPatch(
          v1beta1({ strategy: { canary: { steps: [{ replicas: 1, traffic: '5%' }, { replicas: 2 }] } } }, { currentStepIndex: 2 }),
        ),
      /no previous step with no traffic found/,
    );
    assert.throws(
      () => fastRollbackPatch(v1beta1({ strategy: { canary: { steps } } }, { currentStepIndex: 9 })),
      /has 4 steps, but current step is too large 9/,
    );
    assert.throws(
      () => fastRollbackPatch({ ...canary, apiVersion: 'rollouts.kruise.io/v1alpha1' }),
      /rollback is not supported on given object/,
    );
  });

  it('a Rollout stands for its workload (v1beta1 workloadRef, v1alpha1 objectRef.workloadRef)', () => {
    const w = workloadOf(v1beta1({ workloadRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' } }, {}));
    assert.equal(w.type.kind, 'CloneSet');
    assert.equal(w.name, 'web');
    const d = workloadOf({ ...v1beta1({ objectRef: { workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' } } }, {}) });
    assert.deepEqual([d.type.group, d.type.kind, d.name], ['apps', 'Deployment', 'd']);
  });

  it('describe rollout: status, steps with the current one, images, revisions, replicas, pods of the current batch', () => {
    const r = v1beta1(
      {
        workloadRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' },
        strategy: { canary: { steps: [{ replicas: 1, traffic: '10%' }, { replicas: '50%' }] } },
      },
      {
        phase: 'Progressing',
        message: 'Rollout is in step(1/2), and you need manually confirm to enter the next step',
        canaryStatus: {
          currentStepIndex: 1,
          currentStepState: 'StepPaused',
          stableRevision: 'web-1',
          canaryRevision: 'web-2',
          podTemplateHash: 'web-2',
        },
      },
    );
    assert.equal(podSelectorOf(r, 'CloneSet', false), 'controller-revision-hash=web-2,rollouts.kruise.io/rollout-batch-id=1');
    assert.equal(podSelectorOf(r, 'Deployment', true), 'pod-template-hash=web-2');
    const p = pod('web-abc', { containers: [{ name: 'main', image: 'nginx:2' }] });
    p.metadata.labels = { 'controller-revision-hash': 'web-2', 'rollouts.kruise.io/rollout-batch-id': '1' };
    p.status = { phase: 'Running', containerStatuses: [{ name: 'main', ready: true, restartCount: 0 }] } as typeof p.status;
    const text = describeRollout(
      r,
      { images: ['nginx:2'], replicas: { desired: 4, current: 4, updated: 1, ready: 4, available: 4 }, pods: [p] },
      { color: false, nowMs: Date.parse(p.metadata.creationTimestamp ?? '') + 60_000 },
    );
    assert.match(text, /^Name:\s+ro\nNamespace:\s+n\nStatus:\s+ Progressing\nMessage:\s+Rollout is in step\(1\/2\)/);
    assert.match(
      text,
      /\nStrategy:\s+Canary\n Step:\s+1\/2\n Steps:\n {2}- {2}Replicas: \s+1\n {5}Traffic: \s+10%\n {5}State:\s+StepPaused\n {2}- {2}Replicas: \s+50%\n/,
    );
    assert.match(
      text,
      /\nImages:\s+nginx:2\nCurrent Revision:\s+web-1\nUpdate Revision:\s+web-2\nReplicas:\n Desired:\s+4\n Updated:\s+1\n/,
    );
    assert.match(text, /NAME\s+READY\s+BATCH ID\s+REVISION\s+AGE\s+RESTARTS\s+STATUS\nweb-abc\s+1\/1\s+1\s+web-2\s+\S+\s+0\s+ Running/);
    assert.match(
      describeRollout(r, 'clonesets.apps.kruise.io "web" not found', { color: false, nowMs: 0 }),
      /Error getting resources: clonesets/,
    );
  });
});

describe('set env', () => {
  it('resources first, then changes (kubectl)', () => {
    assert.deepEqual(splitEnvironmentFromResources(['cloneset/web', 'A=1', 'B-']), { resources: ['cloneset/web'], envArgs: ['A=1', 'B-'] });
    assert.deepEqual(splitEnvironmentFromResources(['clonesets', 'web']), { resources: ['clonesets', 'web'], envArgs: [] });
    assert.throws(
      () => splitEnvironmentFromResources(['A=1', 'cloneset/web']),
      /all resources must be specified before environment changes: A=1 cloneset\/web/,
    );
  });
  it('parses KEY=VALUE, KEY-, - (stdin, # comments) and refuses bad names and set-and-remove', () => {
    assert.deepEqual(
      parseEnv(['A=1=2', 'B-', '-'], () => 'C=3 # three\n# D=4\n\nE='),
      {
        env: [
          { name: 'A', value: '1=2' },
          { name: 'C', value: '3 ' },
          { name: 'E', value: '' },
        ],
        remove: ['B'],
      },
    );
    assert.throws(() => parseEnv(['1A=x'], () => ''), /"1A" is not a valid key name/);
    assert.throws(() => parseEnv(['A=1', 'A-'], () => ''), /can not both modify and remove the same environment variable/);
  });
  it('--from imports keys as references (--keys filters), names upper-cased with _', () => {
    assert.equal(keyToEnvName('db.host-name'), 'DB_HOST_NAME');
    assert.deepEqual(envFrom('ConfigMap', 'cfg', { 'b.key': '2', a: '1' }, []), [
      { name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'a' } } },
      { name: 'B_KEY', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'b.key' } } },
    ]);
    assert.deepEqual(envFrom('Secret', 's', { a: 'eA==', b: 'eQ==' }, ['b']), [
      { name: 'B', valueFrom: { secretKeyRef: { name: 's', key: 'b' } } },
    ]);
    assert.throws(() => envFrom('Pod', 'p', {}, []), /unsupported resource specified in --from/);
  });
  it('merges in place, appends new ones, removes; --overwrite=false refuses a changed value', () => {
    const existing = [
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
      { name: 'C', value: '3' },
    ];
    assert.deepEqual(
      updateEnv(
        existing,
        [
          { name: 'B', value: '20' },
          { name: 'D', value: '4' },
        ],
        ['A'],
      ),
      [
        { name: 'B', value: '20' },
        { name: 'C', value: '3' },
        { name: 'D', value: '4' },
      ],
    );
    assert.doesNotThrow(() => validateNoOverwrites(existing, [{ name: 'A', value: '1' }]));
    assert.throws(
      () => validateNoOverwrites(existing, [{ name: 'A', value: '9' }]),
      /^Error: 'A' already has a value \(1\), and --overwrite is false$/,
    );
  });
  it('--list prints values and references; --resolve looks them up, failures grouped', async () => {
    const c = {
      name: 'main',
      env: [
        { name: 'A', value: '1' },
        { name: 'S', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
        { name: 'F', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      ],
    };
    assert.equal(
      (await listEnv('CloneSet', 'web', c, undefined)).text,
      '# CloneSet web, container main\nA=1\n# S from secret s, key k\n# F from field path metadata.name\n',
    );
    const resolved = await listEnv('CloneSet', 'web', c, async (from) => {
      if (from.secretKeyRef) return 'secret-value';
      throw new Error('nope');
    });
    assert.equal(resolved.text, '# CloneSet web, container main\nA=1\nS=secret-value\n# F from field path metadata.name\n');
    assert.deepEqual(resolved.errors, ['error retrieving reference for F: nope']);
  });
});

describe('set subject, -f manifests, exec, get all, completion', () => {
  it('set subject: users, groups, service accounts (namespace defaulted; required for a ClusterRoleBinding)', () => {
    assert.deepEqual(subjectsOf({ users: ['b', 'a', 'a'], groups: ['g'], serviceAccounts: [':sa', 'x:y'] }, 'n', false), [
      { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'a' },
      { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'b' },
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'g' },
      { kind: 'ServiceAccount', namespace: 'n', name: 'sa' },
      { kind: 'ServiceAccount', namespace: 'x', name: 'y' },
    ]);
    assert.throws(
      () => subjectsOf({ users: [], groups: [], serviceAccounts: ['sa'] }, 'n', false),
      /serviceaccount must be <namespace>:<name>$/,
    );
    assert.throws(() => subjectsOf({ users: [], groups: [], serviceAccounts: [':sa'] }, 'n', true), /namespace must be specified/);
  });
  it('-f: YAML documents and JSON, a List flattened, empty documents skipped', () => {
    const yaml =
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: b}}\n';
    assert.deepEqual(
      parseManifests(yaml, 'f.yaml').map((m) => `${m.obj.kind}/${m.obj.metadata.name}`),
      ['ConfigMap/a', 'Secret/b'],
    );
    assert.equal(parseManifests('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}', 'p.json')[0]!.obj.kind, 'Pod');
    assert.throws(() => parseManifests('metadata: {name: x}', 'x.yaml'), /error validating "x.yaml"/);
  });
  it('exec TYPE/NAME picks the most active pod: running and ready longest, then fewest restarts, then oldest', () => {
    const mk = (name: string, ready: boolean, readySince: string, created: string, restarts = 0) => {
      const p = pod(name, { node: 'n1', containers: [{ name: 'main', image: 'x' }] });
      p.metadata.creationTimestamp = created;
      p.status = {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: readySince }],
        containerStatuses: [{ name: 'main', ready, restartCount: restarts }],
      } as typeof p.status;
      return p;
    };
    const pods = [
      mk('not-ready', false, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'),
      mk('ready-late', true, '2026-01-01T02:00:00Z', '2026-01-01T00:00:00Z'),
      mk('ready-early', true, '2026-01-01T01:00:00Z', '2026-01-01T00:30:00Z'),
    ];
    assert.equal(attachablePod(pods)?.metadata.name, 'ready-early');
    assert.equal(attachablePod([]), undefined);
  });
  it('get all lists kruise-tools kinds; non-workload kinds get their summary columns', () => {
    assert.equal(GET_ALL_TYPES.length, 13);
    for (const t of GET_ALL_TYPES) assert.doesNotThrow(() => resolveType(t), t);
    const ro = v1beta1(
      {},
      { phase: 'Progressing', message: 'waiting', canaryStatus: { currentStepIndex: 1, currentStepState: 'StepPaused' } },
    );
    assert.match(
      tableOf(resolveType('rollouts'), [ro] as never, { allNamespaces: false, wide: false, nowMs: 0 }),
      /^NAME\s+STATUS\s+CANARY_STEP\s+CANARY_STATE\s+MESSAGE\s+AGE\nro\s+Progressing\s+1\s+StepPaused\s+waiting\s+<unknown>$/,
    );
  });
  it('completion scripts for bash, zsh, fish and powershell; another shell is refused', async () => {
    for (const [shell, marker] of [
      ['bash', 'complete -F _kubectl_kruise kubectl-kruise'],
      ['zsh', 'compdef _kubectl_kruise kubectl-kruise'],
      ['fish', "complete -c kubectl-kruise -f -a '(__kubectl_kruise_complete)'"],
      ['powershell', "Register-ArgumentCompleter -Native -CommandName 'kubectl-kruise'"],
    ]) {
      let out = '';
      assert.equal(await runKubectlKruise(['completion', shell!], { out: (t) => void (out += t), err: () => undefined, isTTY: false }), 0);
      assert.ok(out.includes(marker!), shell);
      assert.ok(out.includes('__complete'), shell);
    }
    let err = '';
    assert.equal(await runKubectlKruise(['completion', 'tcsh'], { out: () => undefined, err: (t) => void (err += t), isTTY: false }), 1);
    assert.equal(err, 'error: unsupported shell type "tcsh"\n');
  });
});
