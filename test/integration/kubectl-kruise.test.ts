// kubectl-kruise end to end: the built plugin (bin/kubectl-kruise) driven through the Go-built
// kubectl as `kubectl kruise ...` against the suite's cluster and Kruise TS manager.
// The acceptance test of `rollout plan`: on a 20-pod CloneSet, the plan of the controller's own
// planner names exactly the pods the controller then deletes (a deletion-cost pod, a specified
// delete) and updates (a partitioned in-place update).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { CloneSets, Deployments, Pods, fromKubeconfigFile, type KubeClient, type KubeObject } from '../../src/runtime/client.ts';
import { repoRoot } from '../../src/cluster/binaries.ts';
import { apply, createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, podsOf, waitSettled, type TestCloneSet } from './cloneset-helpers.ts';

let client: KubeClient;
let ns: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `kubectl kruise <args>` in the test namespace, with the repo's bin/ on the PATH (kubectl takes no
 * flags before a plugin's name: the kubeconfig comes from $KUBECONFIG, which the plugin reads).
 */
function kruise(args: string[]): Promise<Run> {
  const state = testCluster();
  const env = {
    ...process.env,
    KUBECONFIG: state.kubeconfig,
    PATH: `${path.join(repoRoot, 'bin')}:${path.dirname(state.kubectl)}:${process.env.PATH}`,
  };
  return new Promise((resolve) => {
    execFile(state.kubectl, ['kruise', '-n', ns, ...args], { env, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function ok(args: string[]): Promise<string> {
  const r = await kruise(args);
  assert.equal(r.code, 0, `kubectl kruise ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('kk');
});

after(async () => {
  await deleteNamespace(ns);
  await client.close();
});

const names = (pods: readonly KubeObject[]) => pods.map((p) => p.metadata.name!).sort();

interface PlanJson {
  phase: string;
  deletes: Array<{ pod: string; reason: string }>;
  inPlaceUpdates: Array<{ pod: string; revision: string }>;
  recreateUpdates: Array<{ pod: string }>;
  creates: Array<{ revision: string; count: number }>;
  partition: { oldRevisionPods: number; expectedUpdated: number };
  revisions: { update: string; newRevision: boolean };
}

describe('kubectl kruise', { concurrency: 3 }, () => {
  test('rollout plan predicts the pods the controller deletes and updates (20 pods: deletion cost, specified delete, partition)', async () => {
    await apply(cloneSetManifest('plan', { replicas: 20, podUpdatePolicy: 'InPlaceIfPossible' }), ns);
    await waitSettled(client, ns, 'plan', 20, { timeoutMs: 90_000 });
    let pods = await podsOf(client, ns, 'plan');
    const cheap = pods[7]!.metadata.name!;
    await client.patch(
      Pods,
      cheap,
      { metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-100' } } },
      {
        namespace: ns,
        patchType: 'application/merge-patch+json',
      },
    );

    // 1. scale in by one: the pod with the lowest deletion cost goes
    const scaleIn = JSON.parse(await ok(['rollout', 'plan', 'cloneset/plan', '--replicas', '19', '-o', 'json'])) as PlanJson;
    assert.equal(scaleIn.phase, 'scale');
    assert.deepEqual(
      scaleIn.deletes.map((d) => d.pod),
      [cheap],
    );
    assert.match(scaleIn.deletes[0]!.reason, /lower pod-deletion-cost/);
    assert.match(await ok(['scale', 'cloneset/plan', '--replicas', '19']), /cloneset.apps.kruise.io\/plan scaled/);
    await waitSettled(client, ns, 'plan', 19);
    const afterScale = await podsOf(client, ns, 'plan');
    assert.deepEqual(names(afterScale), names(pods.filter((p) => p.metadata.name !== cheap)));

    // 2. scaledown of a named pod: the plan says specified delete, and only that pod goes
    const named = afterScale[3]!.metadata.name!;
    const specified = JSON.parse(
      await ok(['rollout', 'plan', 'cloneset/plan', '--pods-to-delete', named, '--replicas', '18', '-o', 'json']),
    ) as PlanJson;
    assert.deepEqual(
      specified.deletes.map((d) => d.pod),
      [named],
    );
    assert.match(specified.deletes[0]!.reason, /specified delete/);
    assert.match(await ok(['scaledown', 'cloneset/plan', '--pods', named]), /scaled down/);
    await waitSettled(client, ns, 'plan', 18);
    pods = await podsOf(client, ns, 'plan');
    assert.deepEqual(names(pods), names(afterScale.filter((p) => p.metadata.name !== named)));

    // 3. partition 14 of 18 with an image change: the plan names the 4 pods updated in place.
    // orderPriority on distinct labels makes the update order total (no ties left to chance).
    await Promise.all(
      pods.map((p, i) =>
        client.patch(
          Pods,
          p.metadata.name!,
          { metadata: { labels: { rank: String(i + 1) } } },
          { namespace: ns, patchType: 'application/merge-patch+json' },
        ),
      ),
    );
    await client.patch(
      CloneSets,
      'plan',
      {
        spec: {
          updateStrategy: {
            rollingUpdate: { partition: 14, maxUnavailable: '50%', priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }] } },
          },
        },
      },
      { namespace: ns, patchType: 'application/merge-patch+json' },
    );
    await waitSettled(client, ns, 'plan', 18);
    const preview = JSON.parse(await ok(['rollout', 'plan', 'cloneset/plan', '--set', 'image=main=nginx:2.0', '-o', 'json'])) as PlanJson;
    assert.equal(preview.phase, 'update');
    assert.equal(preview.revisions.newRevision, true);
    assert.equal(preview.partition.expectedUpdated, 4);
    assert.equal(preview.inPlaceUpdates.length, 4);
    assert.deepEqual(preview.recreateUpdates, []);
    // The human-readable plan of the same preview names the same pods.
    const text = await ok(['rollout', 'plan', 'cloneset/plan', '--set', 'image=main=nginx:2.0']);
    for (const u of preview.inPlaceUpdates) assert.match(text, new RegExp(`update in place\\s+${u.pod}`));
    assert.match(text, /partition: 14 → 14 pods kept at old revisions; 18 - 14 = 4 expected/);

    assert.match(await ok(['set', 'image', 'cloneset/plan', 'main=nginx:2.0']), /cloneset.apps.kruise.io\/plan image updated/);
    const cs = await waitSettled(client, ns, 'plan', 18, { updated: 4 });
    assert.equal(cs.status.updateRevision, preview.revisions.update);
    const updated = (await podsOf(client, ns, 'plan')).filter((p) => p.spec?.containers[0]?.image === 'nginx:2.0');
    assert.deepEqual(names(updated), preview.inPlaceUpdates.map((u) => u.pod).sort());

    // rollout status of the partitioned roll out, and its live view
    assert.equal(
      (await ok(['rollout', 'status', 'cloneset/plan', '--watch=false'])).trim(),
      'partitioned roll out complete: 4 new pods have been updated...',
    );
    const live = await ok(['rollout', 'status', 'cloneset/plan', '--watch=false', '--live']);
    assert.match(live, /4\/4 updated \(partition 14 keeps 14 old\)/);
    assert.match(live, /POD\s+REVISION\s+READY\s+STATE/);
    assert.equal((live.match(/^plan-\S+\s+updated/gm) ?? []).length, 4);
  });

  test('rollout status, pause/resume and status --timeout on a CloneSet', async () => {
    await apply(cloneSetManifest('ops', { replicas: 2 }), ns);
    await waitSettled(client, ns, 'ops', 2);
    assert.equal(
      (await ok(['rollout', 'status', 'clone/ops'])).trim(),
      'CloneSet rolling update complete 2 pods at revision ' + (await get('ops')).status.updateRevision + '...',
    );

    assert.equal((await ok(['rollout', 'pause', 'cloneset/ops'])).trim(), 'cloneset.apps.kruise.io/ops paused');
    assert.equal((await get('ops')).spec.updateStrategy.rollingUpdate.paused, true);
    assert.equal((await ok(['rollout', 'pause', 'cloneset/ops'])).trim(), 'cloneset.apps.kruise.io/ops already paused');
    await ok(['set', 'image', 'cloneset/ops', 'main=nginx:2.0']);
    // Paused: the new revision never reaches the pods, so a bounded watch times out (exit 1).
    const timedOut = await kruise(['rollout', 'status', 'cloneset/ops', '--timeout', '3s']);
    assert.equal(timedOut.code, 1);
    assert.match(timedOut.stderr, /error: timed out waiting for the condition/);
    assert.equal((await ok(['rollout', 'resume', 'cloneset/ops'])).trim(), 'cloneset.apps.kruise.io/ops resumed');
    await waitSettled(client, ns, 'ops', 2);
    const missing = await kruise(['rollout', 'status', 'cloneset/nope']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: clonesets.apps.kruise.io "nope" not found/);
  });

  test('rollout history/undo/restart on a CloneSet', async () => {
    await apply(cloneSetManifest('hist', { replicas: 2 }), ns);
    await waitSettled(client, ns, 'hist', 2);
    await client.patch(
      CloneSets,
      'hist',
      { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } } },
      {
        namespace: ns,
        patchType: 'application/merge-patch+json',
      },
    );
    await waitSettled(client, ns, 'hist', 2);

    const history = await ok(['rollout', 'history', 'cloneset/hist']);
    assert.match(history, /^cloneset.apps.kruise.io\/hist \nREVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
    const rev1 = JSON.parse(await ok(['rollout', 'history', 'cloneset/hist', '--revision', '1', '-o', 'json']));
    assert.equal(rev1.template.spec.containers[0].image, 'nginx:1.0');
    assert.equal((await ok(['rollout', 'undo', 'cloneset/hist', '--to-revision', '1'])).trim(), 'cloneset.apps.kruise.io/hist rolled back');
    assert.equal((await get('hist')).spec.template.spec.containers[0].image, 'nginx:1.0');
    // The controller renumbers the revision it went back to (1 becomes 3), as upstream does.
    await waitSettled(client, ns, 'hist', 2);
    const latest = (JSON.parse(await ok(['rollout', 'history', 'cloneset/hist', '-o', 'json'])) as Array<{ revision: number }>).at(
      -1,
    )!.revision;
    assert.equal(latest, 3);
    assert.equal(
      (await ok(['rollout', 'undo', 'cloneset/hist', '--to-revision', '3'])).trim(),
      'cloneset.apps.kruise.io/hist skipped rollback (current template already matches revision 3)',
    );

    assert.equal((await ok(['rollout', 'restart', 'cloneset/hist'])).trim(), 'cloneset.apps.kruise.io/hist restarted');
    assert.match(
      (await get('hist')).spec.template.metadata.annotations['kubectl.kubernetes.io/restartedAt'],
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );
  });

  test('set env/resources/serviceaccount (dry runs and writes), create crr/job/broadcastjob, expose, get, completion', async () => {
    await apply(cloneSetManifest('misc', { replicas: 1 }), ns);
    await waitSettled(client, ns, 'misc', 1);
    const dry = JSON.parse(await ok(['set', 'env', 'cloneset/misc', 'MODE=dry', '--dry-run=client', '-o', 'json']));
    assert.deepEqual(dry.spec.template.spec.containers[0].env, [{ name: 'MODE', value: 'dry' }]);
    assert.equal((await get('misc')).spec.template.spec.containers[0].env, undefined, 'a client dry run writes nothing');
    assert.match(await ok(['set', 'env', 'cloneset/misc', 'MODE=live', '--dry-run=server']), /env updated \(server dry run\)/);
    assert.equal(
      (await ok(['set', 'resources', 'cloneset/misc', '-c', 'main', '--limits', 'cpu=200m,memory=64Mi'])).trim(),
      'cloneset.apps.kruise.io/misc resource requirements updated',
    );
    assert.equal(
      (await ok(['set', 'serviceaccount', 'cloneset/misc', 'default'])).trim(),
      'cloneset.apps.kruise.io/misc serviceaccount updated',
    );
    const misc = await get('misc');
    assert.deepEqual(misc.spec.template.spec.containers[0].resources.limits, { cpu: '200m', memory: '64Mi' });
    assert.equal(misc.spec.template.spec.serviceAccountName, 'default');
    const badContainer = await kruise(['set', 'image', 'cloneset/misc', 'nope=x:1']);
    assert.equal(badContainer.code, 1);
    assert.match(badContainer.stderr, /unable to find container named "nope"/);

    const pod = (await podsOf(client, ns, 'misc'))[0]!.metadata.name!;
    assert.equal(
      (await ok(['create', 'ContainerRecreateRequest', 'crr1', '--pod', pod, '--containers', 'main'])).trim(),
      'containerrecreaterequest.apps.kruise.io/crr1 created',
    );
    const crr = await client.get<KubeObject & { spec: Record<string, unknown> }>(
      {
        group: 'apps.kruise.io',
        version: 'v1alpha1',
        resource: 'containerrecreaterequests',
        kind: 'ContainerRecreateRequest',
        namespaced: true,
      },
      'crr1',
      { namespace: ns },
    );
    assert.deepEqual(
      (crr.spec.containers as Array<{ name: string }>).map((c) => c.name),
      ['main'],
    );
    // kruise-tools' fixed strategy (the webhook adds terminationGracePeriodSeconds from the pod).
    assert.partialDeepStrictEqual(crr.spec.strategy, {
      failurePolicy: 'Fail',
      orderedRecreate: false,
      unreadyGracePeriodSeconds: 3,
      minStartedSeconds: 3,
    });
    assert.equal(crr.spec.activeDeadlineSeconds, 300);
    assert.equal(crr.spec.ttlSecondsAfterFinished, 1800);

    const jobSpec = { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } };
    await apply(
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'AdvancedCronJob',
        metadata: { name: 'acj' },
        spec: { schedule: '0 0 1 1 *', paused: true, template: { jobTemplate: { spec: jobSpec } } },
      },
      ns,
    );
    assert.equal((await ok(['create', 'job', 'manual', '--from=advancedcronjob/acj'])).trim(), 'job.batch/manual created');
    const job = await client.get<KubeObject>({ group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job', namespaced: true }, 'manual', {
      namespace: ns,
    });
    assert.equal(job.metadata.annotations?.['cronjob.kubernetes.io/instantiate'], 'manual');
    assert.equal(job.metadata.ownerReferences?.[0]?.kind, 'AdvancedCronJob');
    const noTemplate = await kruise(['create', 'broadcastjob', 'bj', '--from=advancedcronjob/acj']);
    assert.equal(noTemplate.code, 1);
    assert.match(noTemplate.stderr, /AdvancedCronJob acj has no broadcastJobTemplate/);

    assert.equal((await ok(['expose', 'cloneset/misc', '--port', '80'])).trim(), 'service/misc exposed');
    const svc = await client.get<KubeObject & { spec: { selector: Record<string, string> } }>(
      { group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true },
      'misc',
      { namespace: ns },
    );
    assert.deepEqual(svc.spec.selector, { app: 'misc' });

    assert.match(
      await ok(['get', 'clonesets', '-o', 'wide']),
      /NAME\s+DESIRED\s+UPDATED\s+READY\s+AVAILABLE\s+AGE\s+UPDATE-REVISION\s+IMAGES\s+PAUSED\n/,
    );
    assert.equal((await ok(['get', 'clonesets', 'misc', '-o', 'name'])).trim(), 'cloneset.apps.kruise.io/misc');
    assert.match(await ok(['completion', 'bash']), /complete -F _kubectl_kruise kubectl-kruise/);
    assert.equal(await ok(['__complete', 'rollout', 'st']), 'status\n:4\n');
  });

  test('native Deployment: rollout status, history, undo', async () => {
    await apply(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'd' } },
          template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] } },
        },
      },
      ns,
    );
    assert.match(await ok(['rollout', 'status', 'deployment/d', '--timeout', '90s']), /deployment "d" successfully rolled out\n$/);
    await ok(['set', 'image', 'deploy/d', 'main=nginx:2.0']);
    assert.match(await ok(['rollout', 'status', 'deploy/d', '--timeout', '90s']), /deployment "d" successfully rolled out\n$/);
    assert.match(await ok(['rollout', 'history', 'deployment/d']), /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
    assert.equal((await ok(['rollout', 'undo', 'deployment/d'])).trim(), 'deployment.apps/d rolled back');
    await waitFor('the Deployment back at nginx:1.0', async () => {
      const d = await client.get<KubeObject & { spec: { template: { spec: { containers: Array<{ image: string }> } } } }>(
        Deployments,
        'd',
        { namespace: ns },
      );
      return d.spec.template.spec.containers[0]!.image === 'nginx:1.0';
    });
  });
});

const get = (name: string) => client.get<TestCloneSet>(CloneSets, name, { namespace: ns });
