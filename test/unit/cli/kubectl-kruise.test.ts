// kubectl-kruise's pure parts: upstream's rollout status messages, resource names, the plan report
// (the CloneSet planner's own output), the live view, undo's revision choice, completion.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { CloneSets, Deployments, StatefulSets, DaemonSets, kruiseResource } from '../../../src/runtime/resources.ts';
import { rolloutStatus, type Workload } from '../../../src/cli/kubectl/status.ts';
import { CliError, parseDryRun, parseOutput, parseTargets, resolveType, table, typeName } from '../../../src/cli/kubectl/session.ts';
import { applyOverrides, planReport, renderReport } from '../../../src/cli/kubectl/plan.ts';
import { progressBar, renderFrame } from '../../../src/cli/kubectl/liveview.ts';
import { rollbackTarget, sameTemplate } from '../../../src/cli/kubectl/history.ts';
import { completions } from '../../../src/cli/kubectl/completion.ts';
import { parseDuration } from '../../../src/cli/kubectl/rollout.ts';
import { containerRecreateRequest, instantiate } from '../../../src/cli/kubectl/create.ts';
import { sidecarContainer } from '../../../src/cli/kubectl/misc.ts';
import { cloneSet, NOW, pod, revisionOf, template } from '../cloneset/fixtures.ts';
import { templateFromRevision } from '../../../src/util/revision-data.ts';

const ASTS = kruiseResource('StatefulSet');
const ADS = kruiseResource('DaemonSet');
const w = (spec: Workload['spec'], status: Workload['status'], generation = 1): Workload => ({
  metadata: { name: 'x', generation },
  spec,
  status,
});

describe('rollout status messages (kubectl / kruise-tools)', () => {
  const cases: Array<[string, Parameters<typeof rolloutStatus>[0], Workload, string, boolean]> = [
    [
      'deployment not observed',
      Deployments,
      w({ replicas: 2 }, { observedGeneration: 1 }, 2),
      'Waiting for deployment spec update to be observed...',
      false,
    ],
    [
      'deployment updating',
      Deployments,
      w({ replicas: 3 }, { observedGeneration: 1, updatedReplicas: 1 }),
      'Waiting for deployment "x" rollout to finish: 1 out of 3 new replicas have been updated...',
      false,
    ],
    [
      'deployment old pending',
      Deployments,
      w({ replicas: 3 }, { observedGeneration: 1, updatedReplicas: 3, replicas: 4 }),
      'Waiting for deployment "x" rollout to finish: 1 old replicas are pending termination...',
      false,
    ],
    [
      'deployment available',
      Deployments,
      w({ replicas: 3 }, { observedGeneration: 1, updatedReplicas: 3, replicas: 3, availableReplicas: 2 }),
      'Waiting for deployment "x" rollout to finish: 2 of 3 updated replicas are available...',
      false,
    ],
    [
      'deployment done',
      Deployments,
      w({ replicas: 3 }, { observedGeneration: 1, updatedReplicas: 3, replicas: 3, availableReplicas: 3 }),
      'deployment "x" successfully rolled out',
      true,
    ],
    [
      'daemonset updating',
      DaemonSets,
      w({}, { observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 1 }),
      'Waiting for daemon set "x" rollout to finish: 1 out of 3 new pods have been updated...',
      false,
    ],
    [
      'advanced daemonset done',
      ADS,
      w({}, { observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3 }),
      'Advanced DaemonSet "x" successfully rolled out',
      true,
    ],
    [
      'advanced daemonset partitioned, rolling',
      ADS,
      w(
        { updateStrategy: { rollingUpdate: { partition: '50%' } } },
        { observedGeneration: 1, desiredNumberScheduled: 5, updatedNumberScheduled: 2 },
      ),
      'Waiting for partitioned roll out to finish: 2 out of 3 new pods have been updated...',
      false,
    ],
    [
      'advanced daemonset partitioned, complete',
      ADS,
      w(
        { updateStrategy: { rollingUpdate: { partition: 1 } } },
        { observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 2 },
      ),
      'partitioned roll out complete: 2 new pods have been updated...',
      true,
    ],
    [
      'statefulset ready',
      StatefulSets,
      w({ replicas: 3 }, { observedGeneration: 1, readyReplicas: 1 }),
      'Waiting for 2 pods to be ready...',
      false,
    ],
    [
      'statefulset partitioned',
      StatefulSets,
      w(
        { replicas: 3, updateStrategy: { rollingUpdate: { partition: 1 } } },
        { observedGeneration: 1, readyReplicas: 3, updatedReplicas: 1 },
      ),
      'Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...',
      false,
    ],
    [
      'statefulset rolling',
      StatefulSets,
      w({ replicas: 3 }, { observedGeneration: 1, readyReplicas: 3, updatedReplicas: 1, updateRevision: 'b', currentRevision: 'a' }),
      'waiting for statefulset rolling update to complete 1 pods at revision b...',
      false,
    ],
    [
      'cloneset not observed',
      CloneSets,
      w({ replicas: 3 }, { observedGeneration: 1 }, 2),
      'Waiting for CloneSet spec update to be observed...',
      false,
    ],
    [
      'cloneset partitioned',
      CloneSets,
      w({ replicas: 10, updateStrategy: { rollingUpdate: { partition: '30%' } } }, { observedGeneration: 1, updatedReplicas: 2 }),
      'Waiting for partitioned roll out to finish: 2 out of 7 new pods have been updated...',
      false,
    ],
    [
      'cloneset partition done',
      CloneSets,
      w(
        { replicas: 10, updateStrategy: { rollingUpdate: { partition: 3 } } },
        { observedGeneration: 1, updatedReplicas: 7, readyReplicas: 10, availableReplicas: 9, updateRevision: 'web-2' },
      ),
      'CloneSet rolling update complete 9 pods at revision web-2...',
      true,
    ],
    [
      'cloneset ready',
      CloneSets,
      w({ replicas: 3 }, { observedGeneration: 1, readyReplicas: 1 }),
      'Waiting for 2 pods to be ready...',
      false,
    ],
    [
      'cloneset done',
      CloneSets,
      w({ replicas: 3 }, { observedGeneration: 1, readyReplicas: 3, updatedReplicas: 3, availableReplicas: 3, updateRevision: 'cs-1' }),
      'CloneSet rolling update complete 3 pods at revision cs-1...',
      true,
    ],
    [
      'advanced statefulset done',
      ASTS,
      w({ replicas: 2 }, { observedGeneration: 1, readyReplicas: 2, updatedReplicas: 2, availableReplicas: 2, updateRevision: 's-1' }),
      'Advanced StatefulSet rolling update complete 2 pods at revision s-1...',
      true,
    ],
  ];
  for (const [name, type, obj, message, done] of cases) {
    it(name, () => assert.deepEqual(rolloutStatus(type, obj), { message, done }));
  }
  it('a deployment past its progress deadline is an error', () => {
    const d = w({ replicas: 1 }, { observedGeneration: 1, conditions: [{ type: 'Progressing', reason: 'ProgressDeadlineExceeded' }] });
    assert.throws(() => rolloutStatus(Deployments, d), /deployment "x" exceeded its progress deadline/);
  });
});

describe('resource names and flags', () => {
  it('resolves native names before Kruise short names, and Kruise kinds by any of their names', () => {
    assert.equal(resolveType('sts'), StatefulSets);
    assert.equal(resolveType('deploy'), Deployments);
    assert.equal(typeName(resolveType('clone')), 'cloneset.apps.kruise.io');
    assert.equal(typeName(resolveType('asts')), 'statefulset.apps.kruise.io');
    assert.equal(typeName(resolveType('statefulsets.apps.kruise.io')), 'statefulset.apps.kruise.io');
    assert.equal(typeName(resolveType('advanceddaemonset')), 'daemonset.apps.kruise.io');
    assert.equal(typeName(resolveType('pod')), 'pod');
    assert.throws(() => resolveType('widgets'), /the server doesn't have a resource type "widgets"/);
  });
  it('reads TYPE/NAME and TYPE NAME…', () => {
    assert.deepEqual(
      parseTargets(['cloneset/a', 'deploy/b']).map((t) => `${t.type.kind}/${t.name}`),
      ['CloneSet/a', 'Deployment/b'],
    );
    assert.deepEqual(
      parseTargets(['clone', 'a', 'b']).map((t) => t.name),
      ['a', 'b'],
    );
    assert.throws(() => parseTargets(['clone']), /you must specify the name/);
    assert.throws(() => parseTargets(['a/b/c']), /single resource and name/);
  });
  it('output formats and dry-run values as kubectl', () => {
    assert.equal(parseOutput('json'), 'json');
    assert.throws(() => parseOutput('table'), /unable to match a printer suitable for the output format "table"/);
    assert.equal(parseDryRun('none'), 'none');
    assert.equal(parseDryRun(true), 'client');
    assert.equal(parseDryRun('server'), 'server');
    assert.throws(() => parseDryRun('maybe'), CliError);
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('0'), 0);
    assert.throws(() => parseDuration('soon'), /invalid duration/);
  });
  it('tables align columns with three spaces', () => {
    assert.equal(
      table([
        ['A', 'BB'],
        ['ccc', 'd'],
      ]),
      'A     BB\nccc   d',
    );
  });
});

describe('rollout plan report (the CloneSet planner, unchanged)', () => {
  const cs = cloneSet(
    { replicas: 4, updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 2 } } },
    {
      observedGeneration: 1,
      replicas: 4,
      readyReplicas: 4,
      availableReplicas: 4,
      updatedReplicas: 4,
      updatedReadyReplicas: 4,
      currentRevision: '',
      updateRevision: '',
    },
  );
  const rev = revisionOf(cs);
  const revName = rev.metadata.name!;
  cs.status!.currentRevision = revName;
  cs.status!.updateRevision = revName;
  const pods = ['a', 'b', 'c', 'd'].map((n) => pod(`cs-${n}`, { revision: revName, node: `n-${n}` }));
  pods[2]!.metadata.annotations = { 'controller.kubernetes.io/pod-deletion-cost': '-5' };

  it('scale-in names the pod and the deletion-order rule', () => {
    const r = planReport({ cloneSet: applyOverrides(cs, { replicas: 3 }), pods, pvcs: [], revisions: [rev], nowMs: NOW });
    assert.equal(r.phase, 'scale');
    assert.deepEqual(
      r.deletes.map((d) => d.pod),
      ['cs-c'],
    );
    assert.match(r.deletes[0]!.reason, /lower pod-deletion-cost than cs-/);
    assert.match(renderReport(r), /delete\s+cs-c\s+scale in: update revision, lower pod-deletion-cost/);
  });

  it('specified delete comes first and stops scale-in for the round', () => {
    const r = planReport({
      cloneSet: applyOverrides(cs, { replicas: 2, podsToDelete: ['cs-a'] }),
      pods,
      pvcs: [],
      revisions: [rev],
      nowMs: NOW,
    });
    assert.deepEqual(
      r.deletes.map((d) => `${d.pod}: ${d.reason}`),
      ['cs-a: specified delete (scaleStrategy.podsToDelete or specified-delete label)'],
    );
  });

  it('--set image with --partition: in-place updates within maxUnavailable, with the partition arithmetic', () => {
    const r = planReport({
      cloneSet: applyOverrides(cs, { images: ['main=nginx:2.0'], partition: 1 }),
      pods,
      pvcs: [],
      revisions: [rev],
      nowMs: NOW,
    });
    assert.equal(r.phase, 'update');
    assert.equal(r.revisions.newRevision, true);
    assert.deepEqual(r.partition, { value: 1, oldRevisionPods: 1, expectedUpdated: 3, updatedNow: 0 });
    assert.equal(r.inPlaceUpdates.length, 2, 'maxUnavailable 2 caps the round at 2 of the 3');
    assert.equal(r.budget.maxUnavailable, 2);
    assert.match(renderReport(r), /partition: 1 → 1 pods kept at old revisions; 4 - 1 = 3 expected at the update revision, 0 now/);
  });

  it('ReCreate updates are reported as recreate (specified-delete patch)', () => {
    const recreate = applyOverrides(cs, { images: ['nginx:2.0'] });
    recreate.spec!.updateStrategy!.rollingUpdate!.podUpdatePolicy = 'ReCreate';
    const r = planReport({ cloneSet: recreate, pods, pvcs: [], revisions: [rev], nowMs: NOW });
    assert.equal(r.recreateUpdates.length, 2);
    assert.deepEqual(r.inPlaceUpdates, []);
  });

  it('an unknown container is an error naming it', () => {
    assert.throws(() => applyOverrides(cs, { images: ['side=x:1'] }), /unable to find container named "side"/);
  });
});

describe('live view', () => {
  it('draws the batch progress, counts, budget and one line per pod', () => {
    const pods = [pod('cs-a', { revision: 'cs-2' }), pod('cs-b', { revision: 'cs-1', ready: false })];
    pods[1]!.status!.conditions = [{ type: 'InPlaceUpdateReady', status: 'False' }];
    const text = renderFrame(
      {
        type: CloneSets,
        workload: {
          metadata: { name: 'web', namespace: 'prod' },
          spec: { replicas: 4, updateStrategy: { rollingUpdate: { partition: 2 } } },
          status: { updatedReplicas: 1, readyReplicas: 3, availableReplicas: 3, updateRevision: 'cs-2' },
        },
        pods,
        status: { message: 'Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...', done: false },
        nowMs: NOW,
      },
      200,
    );
    assert.match(text, /^cloneset.apps.kruise.io\/web in prod {2}update revision cs-2$/m);
    assert.match(text, /batch \[#{15}\.{15}\] 50% {2}1\/2 updated \(partition 2 keeps 2 old\)/);
    assert.match(text, /budget maxUnavailable 0: /);
    assert.match(text, /cs-a\s+updated\s+1\/1\s+Normal|cs-a\s+updated\s+\d\/1\s+\S+/);
    assert.match(text, /cs-b\s+old\s+\d\/1\s+Updating \(in place\)/);
    assert.equal(progressBar(0, 0, 4), '[####] 100%');
  });
});

describe('undo, create, exec helpers', () => {
  const revs = [1, 2, 3].map((n) => ({ revision: n, name: `r${n}`, template: template(`nginx:${n}`) }));
  it('undo goes to the previous revision or --to-revision', () => {
    assert.equal(rollbackTarget(revs, 0).revision, 2);
    assert.equal(rollbackTarget(revs, 1).revision, 1);
    assert.throws(() => rollbackTarget(revs, 9), /unable to find specified revision 9 in history/);
    assert.throws(() => rollbackTarget(revs.slice(0, 1), 0), /no rollout history found/);
    assert.equal(
      sameTemplate({ ...template('nginx:1'), metadata: { labels: { app: 'demo', 'pod-template-hash': 'x' } } }, template('nginx:1')),
      true,
    );
    assert.equal(sameTemplate(template('nginx:1'), template('nginx:2')), false);
  });
  it('the template a revision records equals the live template it was made from (undo to the current revision is skipped)', () => {
    const live = {
      metadata: { labels: { app: 'demo' } },
      spec: {
        containers: [{ name: 'main', image: 'nginx:1', imagePullPolicy: 'IfNotPresent', resources: { requests: { memory: '1Gi' } } }],
        restartPolicy: 'Always',
      },
    };
    const cs = cloneSet({ template: live });
    assert.equal(sameTemplate(cs.spec!.template, templateFromRevision(revisionOf(cs))), true);
    assert.equal(sameTemplate(cs.spec!.template, templateFromRevision(revisionOf(cloneSet({ template: template('nginx:2') })))), false);
  });
  it('a CRR carries kruise-tools defaults; no --containers means every container', () => {
    const p = pod('p', {
      containers: [
        { name: 'a', image: 'x' },
        { name: 'b', image: 'y' },
      ],
    });
    const crr = containerRecreateRequest('r', 'ns', p, [], 3, 3) as unknown as { spec: Record<string, unknown> };
    assert.deepEqual(crr.spec.containers, [{ name: 'a' }, { name: 'b' }]);
    assert.deepEqual(crr.spec.strategy, {
      failurePolicy: 'Fail',
      orderedRecreate: false,
      unreadyGracePeriodSeconds: 3,
      minStartedSeconds: 3,
    });
    assert.throws(() => containerRecreateRequest('r', 'ns', p, ['c'], 3, 3), /no container named "c"/);
  });
  it('create job --from copies the template, annotates it manual and owns it', () => {
    const acj = {
      apiVersion: 'apps.kruise.io/v1beta1',
      metadata: { name: 'acj', namespace: 'n', uid: 'u' },
      spec: { template: { jobTemplate: { spec: { parallelism: 2 } } } },
    };
    const job = instantiate(acj, { type: kruiseResource('AdvancedCronJob'), name: 'acj' }, 'j', 'Job') as unknown as {
      metadata: { annotations: Record<string, string>; ownerReferences: Array<{ kind: string; controller: boolean }> };
      spec: unknown;
    };
    assert.equal(job.metadata.annotations['cronjob.kubernetes.io/instantiate'], 'manual');
    assert.deepEqual(
      job.metadata.ownerReferences.map((r) => [r.kind, r.controller]),
      [['AdvancedCronJob', true]],
    );
    assert.deepEqual(job.spec, { parallelism: 2 });
  });
  it('exec -S resolves the hot-upgrade working container', () => {
    const p = pod('p', {
      containers: [
        { name: 'main', image: 'x' },
        { name: 'sidecar-1', image: 'y' },
        { name: 'sidecar-2', image: 'y' },
      ],
    });
    p.metadata.annotations = { 'kruise.io/sidecarset-working-hotupgrade-container': '{"sidecar":"sidecar-2"}' };
    assert.equal(sidecarContainer(p, 'sidecar'), 'sidecar-2');
    assert.equal(sidecarContainer(p, 'main'), 'main');
    assert.throws(() => sidecarContainer(p, 'nope'), /no sidecar container "nope"/);
  });
});

describe('completion', () => {
  const root = new Command('kubectl-kruise').option('-n, --namespace <ns>');
  const rollout = new Command('rollout').addCommand(new Command('status').option('-w, --watch')).addCommand(new Command('plan'));
  root.addCommand(rollout).addCommand(new Command('scale'));
  it('completes subcommands and flags (own and inherited)', () => {
    assert.deepEqual(completions(root, ['']), ['rollout', 'scale']);
    assert.deepEqual(completions(root, ['rollout', 'p']), ['plan']);
    assert.deepEqual(completions(root, ['rollout', 'status', '--']), ['--namespace', '--watch']);
  });
});
