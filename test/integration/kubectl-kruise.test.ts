// kubectl-kruise end to end against the suite's cluster and Kruise TS manager. Every command
// family runs at least once as the built plugin (bin/kubectl-kruise on the compiled dist/) through
// the Go-built kubectl, `kubectl kruise ...` with bin/ on the PATH (viaKubectl: output, exit code,
// and the effect read back from the API); further cases of a family run in this process
// (runKubectlKruise: the same command tree and API calls, without a process start per call).
// The acceptance test of `rollout plan`: on a 20-pod CloneSet, the plan of the controller's own
// planner names exactly the pods the controller then deletes (a deletion-cost pod, a specified
// delete) and updates (a partitioned in-place update).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject, Pod } from '../../src/apis/core-objects.ts';
import {
  AdvancedDaemonSets,
  AdvancedStatefulSets,
  CloneSets,
  Deployments,
  Pods,
  SidecarSets,
  type ResourceType,
} from '../../src/runtime/resources.ts';
import { repoRoot } from '../../src/cluster/binaries.ts';
import { runKubectlKruise } from '../../src/cli/kubectl/main.ts';
import { KruiseRollouts } from '../../src/cli/kubectl/session.ts';
import type { Rollout } from '../../src/cli/kubectl/kruise-rollout.ts';
import { apply, createNamespace, deleteNamespace, kubectl, kubectlJson, testCluster, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, isReady, podsOf, waitSettled, type TestCloneSet } from './cloneset-helpers.ts';
import { PodBoundsWatcher } from '../harness/pod-watchers.ts';
import { podsOf as setPodsOf, stsManifest, waitOrdinals } from './statefulset-helpers.ts';

let client: KubeClient;
let ns: string;

const CustomResourceDefinitions: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `kubectl-kruise -n <test namespace> <args>`, run in this process with its own output. */
async function kruise(args: string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const io = { out: (t: string) => void (stdout += t), err: (t: string) => void (stderr += t), isTTY: false };
  const code = await runKubectlKruise(['--kubeconfig', testCluster().kubeconfig, '-n', ns, ...args], io);
  return { code, stdout, stderr };
}

/**
 * `kubectl kruise -n <namespace> <args>` (no -n for a null namespace): the built plugin, with the
 * repo's bin/ on the PATH (kubectl takes no flags before a plugin's name: the kubeconfig comes from
 * $KUBECONFIG, which the plugin reads).
 */
function viaKubectl(args: string[], extraEnv: Record<string, string> = {}, namespace: string | null = ns): Promise<Run> {
  const state = testCluster();
  const env = {
    ...process.env,
    KUBECONFIG: state.kubeconfig,
    PATH: `${path.join(repoRoot, 'bin')}:${path.dirname(state.kubectl)}:${process.env.PATH}`,
    ...extraEnv,
  };
  return new Promise((resolve) => {
    const nsArgs = namespace ? ['-n', namespace] : [];
    execFile(state.kubectl, ['kruise', ...nsArgs, ...args], { env, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

function succeeded(r: Run, args: string[]): string {
  assert.equal(r.code, 0, `kubectl kruise ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}
const ok = async (args: string[]) => succeeded(await kruise(args), args);
const okViaKubectl = async (args: string[]) => succeeded(await viaKubectl(args), args);

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('kk');
});

const sidecarSetsToDelete: string[] = [];

after(async () => {
  await Promise.all(sidecarSetsToDelete.map((name) => client.delete(SidecarSets, name).catch(() => undefined)));
  await deleteNamespace(ns);
  await client.close();
});

interface SidecarSetObject extends KubeObject {
  spec: { selector?: unknown };
  status?: { observedGeneration?: number; latestRevision?: string; matchedPods?: number };
}

const names = (pods: readonly KubeObject[]) => pods.map((p) => p.metadata.name!).sort();

interface PlanJson {
  kind: string;
  phase: string;
  deletes: Array<{ pod: string; reason: string }>;
  inPlaceUpdates: Array<{ pod: string; revision: string }>;
  recreateUpdates: Array<{ pod: string }>;
  creates: Array<{ revision: string; count: number; pods?: string[]; nodes?: string[] }>;
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
    const scaleIn = JSON.parse(await okViaKubectl(['rollout', 'plan', 'cloneset/plan', '--replicas', '19', '-o', 'json'])) as PlanJson;
    assert.equal(scaleIn.phase, 'scale');
    assert.deepEqual(
      scaleIn.deletes.map((d) => d.pod),
      [cheap],
    );
    assert.match(scaleIn.deletes[0]!.reason, /lower pod-deletion-cost/);
    assert.match(await okViaKubectl(['scale', 'cloneset/plan', '--replicas', '19']), /cloneset.apps.kruise.io\/plan scaled/);
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
    assert.match(await okViaKubectl(['scaledown', 'cloneset/plan', '--pods', named]), /scaled down/);
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

    assert.match(await okViaKubectl(['set', 'image', 'cloneset/plan', 'main=nginx:2.0']), /cloneset.apps.kruise.io\/plan image updated/);
    const cs = await waitSettled(client, ns, 'plan', 18, { updated: 4 });
    assert.equal(cs.status.updateRevision, preview.revisions.update);
    const updated = (await podsOf(client, ns, 'plan')).filter((p) => p.spec?.containers[0]?.image === 'nginx:2.0');
    assert.deepEqual(names(updated), preview.inPlaceUpdates.map((u) => u.pod).sort());

    // rollout status of the partitioned roll out, and its live view
    // kruise-tools' completion line (scripts grep for it), once the 4 pods outside the partition are updated
    assert.equal(
      (await okViaKubectl(['rollout', 'status', 'cloneset/plan', '--watch=false'])).trim(),
      `CloneSet rolling update complete 18 pods at revision ${cs.status.updateRevision}...`,
    );
    const live = await ok(['rollout', 'status', 'cloneset/plan', '--watch=false', '--live']);
    assert.match(live, /4\/4 updated \(partition 14 keeps 14 old\)/);
    assert.match(live, /POD\s+REVISION\s+READY\s+STATE/);
    assert.equal((live.match(/^plan-\S+\s+updated/gm) ?? []).length, 4);
  });

  test('migrate Deployment → CloneSet: --create, then step by step (--max-surge 2): replicas move only as new pods are ready; --create --copy', async () => {
    await Promise.all([apply(deploymentManifest('mig', 3), ns), apply(deploymentManifest('cp', 2), ns)]);
    await Promise.all(
      ['mig', 'cp'].map(async (d) =>
        assert.match(
          await ok(['rollout', 'status', `deploy/${d}`, '--timeout', '90s']),
          new RegExp(`deployment "${d}" successfully rolled out\\n$`),
        ),
      ),
    );
    // As kruise-tools: --create only creates the CloneSet (0 replicas); --copy gives it the Deployment's.
    const [created, copied] = await Promise.all([
      okViaKubectl(['migrate', 'CloneSet', '--from', 'Deployment', '--src-name', 'mig', '--dst-name', 'mig-cs', '--create']),
      okViaKubectl(['migrate', 'CloneSet', '--from', 'Deployment', '--src-name', 'cp', '--dst-name', 'cp-cs', '--create', '--copy']),
    ]);
    assert.equal(created, 'cloneset.apps.kruise.io/mig-cs created with 0 replicas from deployment.apps/mig\n');
    assert.equal(copied, 'cloneset.apps.kruise.io/cp-cs created with 2 replicas from deployment.apps/cp\n');
    const cs = await get('mig-cs');
    assert.equal(cs.spec.replicas, 0);
    assert.deepEqual(cs.spec.selector, { matchLabels: { app: 'mig' } });
    const copy = await get('cp-cs');
    assert.equal(copy.spec.replicas, 2);
    assert.deepEqual(copy.spec.selector, { matchLabels: { app: 'cp' } });
    assert.deepEqual(
      copy.spec.template.spec.containers.map((c: { name: string; image: string }) => [c.name, c.image]),
      [['main', 'nginx:1.0']],
    );
    const again = await viaKubectl(['migrate', 'CloneSet', '--from', 'Deployment', '--src-name', 'cp', '--dst-name', 'cp-cs', '--create']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^error: clonesets.apps.kruise.io "cp-cs" already exists/);

    // Every moment of the move: never more than 3 + 2 pods, never fewer than 3 ready.
    const watcher = new PodBoundsWatcher(client, ns, 'app=mig', { maxActive: 5, minReady: 3, maxNotReady: 2 });
    await watcher.start();
    const out = await okViaKubectl(
      ['migrate', 'CloneSet', '--from', 'Deployment', '--src-name', 'mig', '--dst-name', 'mig-cs'].concat([
        '--max-surge',
        '2',
        '--timeout-seconds',
        '90',
      ]),
    );
    watcher.stop();
    assert.deepEqual(out.trim().split('\n'), [
      'migrate: CloneSet mig-cs 2/3 ready, Deployment mig scaled to 1',
      'migrate: CloneSet mig-cs 3/3 ready, Deployment mig scaled to 0',
      'migrated 3 replicas from deployment.apps/mig to cloneset.apps.kruise.io/mig-cs',
    ]);
    assert.deepEqual(watcher.violations, []);
    assert.equal(watcher.maxActive, 5, 'the surge was used');
    const deploy = await client.get<KubeObject & { spec: { replicas: number } }>(Deployments, 'mig', { namespace: ns });
    assert.equal(deploy.spec.replicas, 0);
    await waitFor('the 3 pods of app=mig all the CloneSet\u2019s and ready', async () => {
      const pods = (await client.list<Pod>(Pods, { namespace: ns, labelSelector: 'app=mig' })).items.filter(
        (p) => !p.metadata.deletionTimestamp,
      );
      return pods.length === 3 && pods.every((p) => isReady(p) && p.metadata.ownerReferences?.[0]?.kind === 'CloneSet');
    });
    // --copy: the CloneSet runs its 2 pods next to the Deployment's 2, which keeps them.
    await waitFor('CloneSet cp-cs: 2 pods ready', async () => {
      const c = await get('cp-cs');
      return c.status.observedGeneration === c.metadata.generation && c.status.readyReplicas === 2;
    });
    const cpDeploy = await client.get<KubeObject & { spec: { replicas: number }; status: { readyReplicas?: number } }>(Deployments, 'cp', {
      namespace: ns,
    });
    assert.deepEqual([cpDeploy.spec.replicas, cpDeploy.status.readyReplicas], [2, 2]);

    // A second run finds nothing left to move; a missing CloneSet and a wrong source kind are refused.
    assert.match(
      await ok(['migrate', 'CloneSet', '--from', 'Deployment', '--src-name', 'mig', '--dst-name', 'mig-cs', '--replicas', '3']),
      /^migrated 3 replicas/,
    );
    const missing = await kruise(['migrate', 'CloneSet', '--from', 'Deployment', '--src-name', 'mig', '--dst-name', 'nope']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: clonesets.apps.kruise.io "nope" not found \(create it first: add --create to this command\)/);
    const wrongKind = await kruise(['migrate', 'CloneSet', '--from', 'StatefulSet', '--src-name', 'mig']);
    assert.equal(wrongKind.code, 1);
    assert.match(wrongKind.stderr, /^error: migrate supports --from Deployment only \(got StatefulSet\)/);
  });

  test('Advanced StatefulSet: rollout plan predicts the in-place updates and the scale-in, describe, expose', async () => {
    await apply(
      stsManifest('web', {
        replicas: 4,
        podManagementPolicy: 'Parallel',
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 3, partition: 1 } },
      }),
      ns,
    );
    await waitOrdinals(client, ns, 'web', [0, 1, 2, 3], { timeoutMs: 90_000 });
    const before = new Map((await setPodsOf(client, ns, 'web')).map((p) => [p.metadata.name!, p.metadata.uid!]));

    const preview = JSON.parse(
      await okViaKubectl(['rollout', 'plan', 'asts/web', '--set', 'image=main=nginx:2.0', '-o', 'json']),
    ) as PlanJson;
    assert.equal(preview.kind, 'StatefulSet');
    assert.equal(preview.phase, 'update');
    assert.equal(preview.partition.expectedUpdated, 3);
    assert.deepEqual(
      preview.inPlaceUpdates.map((u) => u.pod),
      ['web-3', 'web-2', 'web-1'],
    );
    assert.deepEqual(preview.deletes, []);
    const text = await ok(['rollout', 'plan', 'statefulsets.apps.kruise.io/web', '--set', 'image=main=nginx:2.0']);
    assert.match(text, /^Advanced StatefulSet \S+\/web: next reconcile \(update phase\)/);
    assert.match(text, /partition: 1 → 1 pods kept at old revisions; 4 - 1 = 3 expected at the update revision, 0 now/);

    assert.match(await ok(['set', 'image', 'asts/web', 'main=nginx:2.0']), /statefulset.apps.kruise.io\/web image updated/);
    const set = await waitOrdinals(client, ns, 'web', [0, 1, 2, 3], { updated: 3, timeoutMs: 90_000 });
    assert.equal(set.status?.updateRevision, preview.revisions.update);
    const pods = await setPodsOf(client, ns, 'web');
    assert.deepEqual(
      pods.filter((p) => p.spec?.containers[0]?.image === 'nginx:2.0').map((p) => p.metadata.name),
      ['web-1', 'web-2', 'web-3'],
    );
    for (const p of pods) assert.equal(p.metadata.uid, before.get(p.metadata.name!), `${p.metadata.name} was updated in place`);
    assert.equal(
      (await ok(['rollout', 'status', 'asts/web', '--timeout', '30s'])).trim(),
      `Advanced StatefulSet rolling update complete 4 pods at revision ${preview.revisions.update}...`,
    );
    assert.equal((await okViaKubectl(['rollout', 'pause', 'asts/web'])).trim(), 'statefulset.apps.kruise.io/web paused');
    assert.equal((await get('web', AdvancedStatefulSets)).spec.updateStrategy.rollingUpdate.paused, true);
    assert.equal((await okViaKubectl(['rollout', 'resume', 'asts/web'])).trim(), 'statefulset.apps.kruise.io/web resumed');
    assert.equal((await get('web', AdvancedStatefulSets)).spec.updateStrategy.rollingUpdate.paused, false);

    const scaleIn = JSON.parse(await ok(['rollout', 'plan', 'asts/web', '--replicas', '2', '-o', 'json'])) as PlanJson;
    assert.equal(scaleIn.phase, 'scale');
    assert.deepEqual(
      scaleIn.deletes.map((d) => [d.pod, d.reason]),
      [
        ['web-3', 'scale in: ordinal 3 outside the replicas'],
        ['web-2', 'scale in: ordinal 2 outside the replicas'],
      ],
    );
    assert.equal((await okViaKubectl(['scale', 'asts/web', '--replicas', '2'])).trim(), 'statefulset.apps.kruise.io/web scaled');
    await waitOrdinals(client, ns, 'web', [0, 1], { updated: 1, timeoutMs: 90_000 });

    const described = await okViaKubectl(['describe', 'asts/web']);
    assert.match(described, /^Name:\s+web$/m);
    assert.match(described, /^Kind:\s+StatefulSet \(apps.kruise.io\/v1beta1\)$/m);
    assert.match(described, /^Selector:\s+app=web$/m);
    assert.match(described, /^Strategy:\n( {2}.*\n)*? {2}type: RollingUpdate\n/m);
    assert.match(described, /^Rollout:\n/m);
    assert.match(described, /^Events:\n\s+TYPE\s+REASON\s+MESSAGE\n(.*\n)*.*SuccessfulCreate/m);
    const missing = await viaKubectl(['describe', 'asts/nope']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: statefulsets.apps.kruise.io "nope" not found \(check the name, and the namespace with -n\)/);

    const dry = JSON.parse(
      await ok([
        'expose',
        'asts/web',
        '--port',
        '80',
        '--target-port',
        'http',
        '--name',
        'web-np',
        '--type',
        'NodePort',
        '--dry-run=client',
        '-o',
        'json',
      ]),
    );
    assert.deepEqual(dry.spec, { selector: { app: 'web' }, type: 'NodePort', ports: [{ port: 80, targetPort: 'http', protocol: 'TCP' }] });
    assert.equal(
      (
        await okViaKubectl(['expose', 'asts/web', '--port', '80', '--target-port', '8080', '--name', 'web-np', '--type', 'NodePort'])
      ).trim(),
      'service/web-np exposed',
    );
    const svc = await client.get<
      KubeObject & { spec: { type: string; ports: Array<{ port: number; targetPort: number; nodePort?: number }> } }
    >({ group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true }, 'web-np', { namespace: ns });
    assert.equal(svc.spec.type, 'NodePort');
    assert.equal(svc.spec.ports[0]!.targetPort, 8080);
    assert.ok(svc.spec.ports[0]!.nodePort, 'the API server allocated a node port');
    const again = await kruise(['expose', 'asts/web', '--port', '80', '--name', 'web-np']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^error: services "web-np" already exists/);
  });

  test('Advanced DaemonSet: rollout plan predicts the in-place updates of a partitioned rollout', async () => {
    const nodes = ['kwok-node-0', 'kwok-node-1', 'kwok-node-2'];
    await apply(
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'DaemonSet',
        metadata: { name: 'agent' },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          template: {
            metadata: { labels: { app: 'agent' } },
            spec: {
              // The suite's own nodes only (other files may add nodes to the shared cluster).
              affinity: {
                nodeAffinity: {
                  requiredDuringSchedulingIgnoredDuringExecution: {
                    nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: nodes }] }],
                  },
                },
              },
              containers: [{ name: 'main', image: 'nginx:1.0' }],
            },
          },
          updateStrategy: {
            type: 'RollingUpdate',
            rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible', maxUnavailable: 3, partition: 1 },
          },
        },
      },
      ns,
    );
    const settled = (updated: number) =>
      waitFor(
        `DaemonSet agent: 3 ready, ${updated} updated`,
        async () => {
          const ds = await client.get<KubeObject & { status?: Record<string, number | string> }>(AdvancedDaemonSets, 'agent', {
            namespace: ns,
          });
          const s = ds.status ?? {};
          return s.observedGeneration === ds.metadata.generation && s.numberReady === 3 && s.updatedNumberScheduled === updated
            ? ds
            : undefined;
        },
        90_000,
      );
    await settled(3);
    const before = (await client.list<Pod>(Pods, { namespace: ns, labelSelector: 'app=agent' })).items;

    const preview = JSON.parse(await ok(['rollout', 'plan', 'ads/agent', '--set', 'image=main=nginx:2.0', '-o', 'json'])) as PlanJson;
    assert.equal(preview.kind, 'DaemonSet');
    assert.equal(preview.phase, 'update');
    assert.equal(preview.partition.expectedUpdated, 2);
    assert.equal(preview.inPlaceUpdates.length, 2);
    assert.deepEqual(preview.deletes, []);
    assert.match(await ok(['rollout', 'plan', 'ads/agent']), /^Advanced DaemonSet \S+\/agent: next reconcile \(nothing to do\)\n/);

    await ok(['set', 'image', 'ads/agent', 'main=nginx:2.0']);
    await settled(2);
    const after = (await client.list<Pod>(Pods, { namespace: ns, labelSelector: 'app=agent' })).items;
    const updated = after.filter((p) => p.spec?.containers[0]?.image === 'nginx:2.0').map((p) => p.metadata.name!);
    assert.deepEqual(updated.sort(), preview.inPlaceUpdates.map((u) => u.pod).sort());
    assert.deepEqual(after.map((p) => p.metadata.uid).sort(), before.map((p) => p.metadata.uid).sort(), 'updated in place');
    assert.equal(
      (await ok(['rollout', 'status', 'ads/agent', '--timeout', '30s'])).trim(),
      'partitioned roll out complete: 2 new pods have been updated...',
    );
    assert.match(await okViaKubectl(['rollout', 'history', 'ads/agent']), /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
  });

  test('exec -S runs the command in the working hot-upgrade sidecar, before and after a hot upgrade (set image, set selector on the SidecarSet)', async () => {
    // A SidecarSet with a hot-upgrade sidecar: the pod webhook injects mesh-1 (working) and mesh-2
    // (the empty image). KWOK serves exec for the simulated pod (config/kwok/exec.yaml): the
    // command really runs, and kubectl's request (-v 6) names the container the plugin chose.
    const sidecarSet = `kk-hot-${ns}`;
    const hotSidecar = (image: string) => ({
      name: 'mesh',
      image,
      upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'mesh:empty' },
    });
    await client.create(SidecarSets, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'SidecarSet',
      metadata: { name: sidecarSet },
      spec: {
        selector: { matchLabels: { app: 'hot' } },
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
        containers: [hotSidecar('mesh:1.0')],
      },
    });
    sidecarSetsToDelete.push(sidecarSet);
    // The pod webhook reads SidecarSets from the manager's cache: wait until the controller saw it.
    await waitFor(`SidecarSet ${sidecarSet} observed`, async () => {
      const s = await client.get<SidecarSetObject>(SidecarSets, sidecarSet);
      return s.status?.observedGeneration === s.metadata.generation && !!s.status?.latestRevision;
    });
    await client.create<Pod>(
      Pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'hot', labels: { app: 'hot' } },
        spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
      },
      { namespace: ns },
    );
    const working = (p: Pod) => p.metadata.annotations?.['kruise.io/sidecarset-working-hotupgrade-container'];
    const runningWith = (container: string, image: string) =>
      waitFor(
        `pod hot ready, ${container} working on ${image}`,
        async () => {
          const p = await client.get<Pod>(Pods, 'hot', { namespace: ns });
          const status = p.status?.containerStatuses?.find((c) => c.name === container);
          return isReady(p) && working(p) === `{"mesh":"${container}"}` && status?.image === image && status.ready && p;
        },
        60_000,
      );
    const injected = await runningWith('mesh-1', 'mesh:1.0');
    assert.deepEqual(
      injected.spec!.containers.map((c) => c.name),
      ['mesh-1', 'mesh-2', 'main'],
    );

    const execInSidecar = () => viaKubectl(['exec', '-S', 'mesh', '-v', '6', 'hot', '--', 'sh', '-c', 'echo ran: $((6 * 7))']);
    const first = await execInSidecar();
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, 'ran: 42\n');
    assert.match(
      first.stderr,
      new RegExp(`/namespaces/${ns}/pods/hot/exec\\?command=sh&command=-c&command=echo\\+ran.*&container=mesh-1&`),
    );

    // A hot upgrade through the plugin: the new image goes to mesh-2, which becomes the working one.
    assert.equal(
      (await okViaKubectl(['set', 'image', `sidecarset/${sidecarSet}`, 'mesh=mesh:2.0'])).trim(),
      `sidecarset.apps.kruise.io/${sidecarSet} image updated`,
    );
    await runningWith('mesh-2', 'mesh:2.0');
    const second = await execInSidecar();
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, 'ran: 42\n');
    assert.match(second.stderr, /exec\?command=sh&.*&container=mesh-2&/);

    // The remote command's failure is the plugin's exit code (kubectl's); -c names any container;
    // an unknown sidecar is refused by the plugin.
    process.env.KUBECTL = testCluster().kubectl;
    const failed = await kruise(['exec', '-c', 'main', '-v', '6', 'hot', '--', 'false']);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /exec\?command=false&container=main&/);
    const unknown = await kruise(['exec', '-S', 'nope', 'hot', '--', 'true']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^error: pod hot has no sidecar container "nope" \(containers: mesh-1, mesh-2, main\)/);

    // set selector on the SidecarSet (kruise-tools sets Service selectors only; a SidecarSet's is
    // mutable, so Kruise TS sets it too): it stops matching the pod.
    assert.equal(
      (await okViaKubectl(['set', 'selector', `sidecarset/${sidecarSet}`, 'app=none'])).trim(),
      `sidecarset.apps.kruise.io/${sidecarSet} selector updated`,
    );
    await waitFor('the SidecarSet matches no pod', async () => {
      const s = await client.get<SidecarSetObject>(SidecarSets, sidecarSet);
      return s.status?.observedGeneration === s.metadata.generation && s.status?.matchedPods === 0 && s;
    });
    assert.deepEqual((await client.get<SidecarSetObject>(SidecarSets, sidecarSet)).spec.selector, { matchLabels: { app: 'none' } });
  });

  test('rollout status, pause/resume and status --timeout on a CloneSet', async () => {
    await apply(cloneSetManifest('ops', { replicas: 2 }), ns);
    await waitSettled(client, ns, 'ops', 2);
    assert.equal(
      (await ok(['rollout', 'status', 'clone/ops'])).trim(),
      'CloneSet rolling update complete 2 pods at revision ' + (await get('ops')).status.updateRevision + '...',
    );

    assert.equal((await okViaKubectl(['rollout', 'pause', 'cloneset/ops'])).trim(), 'cloneset.apps.kruise.io/ops paused');
    assert.equal((await get('ops')).spec.updateStrategy.rollingUpdate.paused, true);
    assert.equal((await ok(['rollout', 'pause', 'cloneset/ops'])).trim(), 'cloneset.apps.kruise.io/ops already paused');
    await ok(['set', 'image', 'cloneset/ops', 'main=nginx:2.0']);
    // Paused: the new revision never reaches the pods, so a bounded watch times out (exit 1).
    const timedOut = await viaKubectl(['rollout', 'status', 'cloneset/ops', '--timeout', '3s']);
    assert.equal(timedOut.code, 1);
    assert.match(timedOut.stderr, /error: timed out waiting for the condition/);
    assert.equal((await okViaKubectl(['rollout', 'resume', 'cloneset/ops'])).trim(), 'cloneset.apps.kruise.io/ops resumed');
    assert.equal((await get('ops')).spec.updateStrategy.rollingUpdate.paused, false);
    await waitSettled(client, ns, 'ops', 2);
    const missing = await viaKubectl(['rollout', 'status', 'cloneset/nope']);
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

    const history = await okViaKubectl(['rollout', 'history', 'cloneset/hist']);
    assert.match(history, /^cloneset.apps.kruise.io\/hist \nREVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
    const rev1 = JSON.parse(await okViaKubectl(['rollout', 'history', 'cloneset/hist', '--revision', '1', '-o', 'json']));
    assert.equal(rev1.template.spec.containers[0].image, 'nginx:1.0');
    assert.equal(
      (await okViaKubectl(['rollout', 'undo', 'cloneset/hist', '--to-revision', '1'])).trim(),
      'cloneset.apps.kruise.io/hist rolled back',
    );
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

    assert.equal((await okViaKubectl(['rollout', 'restart', 'cloneset/hist'])).trim(), 'cloneset.apps.kruise.io/hist restarted');
    assert.match(
      (await get('hist')).spec.template.metadata.annotations['kubectl.kubernetes.io/restartedAt'],
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );
  });

  test('set env/resources/serviceaccount/selector (dry runs and writes), create crr/job/broadcastjob, expose, get -o json, completion', async () => {
    await apply(cloneSetManifest('misc', { replicas: 1 }), ns);
    await waitSettled(client, ns, 'misc', 1);
    const dry = JSON.parse(await okViaKubectl(['set', 'env', 'cloneset/misc', 'MODE=dry', '--dry-run=client', '-o', 'json']));
    assert.deepEqual(dry.spec.template.spec.containers[0].env, [{ name: 'MODE', value: 'dry' }]);
    assert.equal((await get('misc')).spec.template.spec.containers[0].env, undefined, 'a client dry run writes nothing');
    assert.match(await ok(['set', 'env', 'cloneset/misc', 'MODE=live', '--dry-run=server']), /env updated \(server dry run\)/);
    assert.equal(
      (await okViaKubectl(['set', 'resources', 'cloneset/misc', '-c', 'main', '--limits', 'cpu=200m,memory=64Mi'])).trim(),
      'cloneset.apps.kruise.io/misc resource requirements updated',
    );
    assert.equal(
      (await okViaKubectl(['set', 'serviceaccount', 'cloneset/misc', 'default'])).trim(),
      'cloneset.apps.kruise.io/misc serviceaccount updated',
    );
    assert.equal((await okViaKubectl(['set', 'env', 'cloneset/misc', 'MODE=live'])).trim(), 'cloneset.apps.kruise.io/misc env updated');
    const misc = await get('misc');
    assert.deepEqual(misc.spec.template.spec.containers[0].resources.limits, { cpu: '200m', memory: '64Mi' });
    assert.deepEqual(misc.spec.template.spec.containers[0].env, [{ name: 'MODE', value: 'live' }]);
    assert.equal(misc.spec.template.spec.serviceAccountName, 'default');
    // A workload's selector is immutable: the CloneSet webhook refuses, and the plugin says so.
    const selectorChange = await viaKubectl(['set', 'selector', 'cloneset/misc', 'app=other']);
    assert.equal(selectorChange.code, 1);
    assert.match(selectorChange.stderr, /^error: .*updates to cloneset spec for fields other than/);
    assert.deepEqual((await get('misc')).spec.selector, { matchLabels: { app: 'misc' } });
    const badContainer = await kruise(['set', 'image', 'cloneset/misc', 'nope=x:1']);
    assert.equal(badContainer.code, 1);
    assert.match(badContainer.stderr, /unable to find container named "nope"/);

    // The new template replaces the pod (a service account cannot change in place): wait for it.
    await waitSettled(client, ns, 'misc', 1);
    const pod = (await podsOf(client, ns, 'misc'))[0]!.metadata.name!;
    assert.equal(
      (await okViaKubectl(['create', 'ContainerRecreateRequest', 'crr1', '--pod', pod, '--containers', 'main'])).trim(),
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
    await apply(
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'AdvancedCronJob',
        metadata: { name: 'bcj' },
        spec: {
          schedule: '0 0 1 1 *',
          paused: true,
          template: { broadcastJobTemplate: { spec: { ...jobSpec, completionPolicy: { type: 'Never' } } } },
        },
      },
      ns,
    );
    const [createdJob, createdBj] = await Promise.all([
      okViaKubectl(['create', 'job', 'manual', '--from=advancedcronjob/acj']),
      okViaKubectl(['create', 'broadcastjob', 'bj-manual', '--from=advancedcronjob/bcj']),
    ]);
    assert.equal(createdJob.trim(), 'job.batch/manual created');
    assert.equal(createdBj.trim(), 'broadcastjob.apps.kruise.io/bj-manual created');
    const bj = await client.get<KubeObject & { spec: { completionPolicy?: { type: string } } }>(
      { group: 'apps.kruise.io', version: 'v1beta1', resource: 'broadcastjobs', kind: 'BroadcastJob', namespaced: true },
      'bj-manual',
      { namespace: ns },
    );
    assert.equal(bj.metadata.annotations?.['cronjob.kubernetes.io/instantiate'], 'manual');
    assert.equal(bj.metadata.ownerReferences?.[0]?.kind, 'AdvancedCronJob');
    assert.equal(bj.spec.completionPolicy?.type, 'Never');
    const job = await client.get<KubeObject>({ group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job', namespaced: true }, 'manual', {
      namespace: ns,
    });
    assert.equal(job.metadata.annotations?.['cronjob.kubernetes.io/instantiate'], 'manual');
    assert.equal(job.metadata.ownerReferences?.[0]?.kind, 'AdvancedCronJob');
    const noTemplate = await kruise(['create', 'broadcastjob', 'bj', '--from=advancedcronjob/acj']);
    assert.equal(noTemplate.code, 1);
    assert.match(noTemplate.stderr, /AdvancedCronJob acj has no broadcastJobTemplate/);

    assert.equal((await ok(['expose', 'cloneset/misc', '--port', '80'])).trim(), 'service/misc exposed');
    const service = () =>
      client.get<KubeObject & { spec: { selector: Record<string, string> } }>(
        { group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true },
        'misc',
        { namespace: ns },
      );
    assert.deepEqual((await service()).spec.selector, { app: 'misc' });
    // set selector on a Service (kruise-tools' one target): the new selector replaces the old.
    assert.equal((await okViaKubectl(['set', 'selector', 'svc/misc', 'app=misc,tier=web'])).trim(), 'service/misc selector updated');
    assert.deepEqual((await service()).spec.selector, { app: 'misc', tier: 'web' });

    assert.match(
      await ok(['get', 'clonesets', '-o', 'wide']),
      /NAME\s+DESIRED\s+UPDATED\s+READY\s+AVAILABLE\s+AGE\s+UPDATE-REVISION\s+IMAGES\s+PAUSED\n/,
    );
    assert.equal((await ok(['get', 'clonesets', 'misc', '-o', 'name'])).trim(), 'cloneset.apps.kruise.io/misc');
    // kubectl's kubeconfig rules without -n: $KUBECONFIG lists files merged in order, --context picks
    // a context of a later file, and its namespace is the one the command acts in.
    const extra = path.join(testCluster().runDir, `kubeconfig-${ns}`);
    const cluster = `kruise-ts-${testCluster().name}`;
    writeFileSync(
      extra,
      `apiVersion: v1\nkind: Config\ncontexts:\n- name: ${ns}\n  context: {cluster: ${cluster}, user: ${cluster}, namespace: ${ns}}\n`,
    );
    const merged = { KUBECONFIG: `${testCluster().kubeconfig}:${extra}` };
    const [inContext, inDefault] = await Promise.all([
      viaKubectl(['--context', ns, 'get', 'clonesets', 'misc', '-o', 'name'], merged, null),
      viaKubectl(['get', 'clonesets', 'misc', '-o', 'name'], merged, null),
    ]);
    rmSync(extra);
    assert.equal(succeeded(inContext, ['--context', ns]).trim(), 'cloneset.apps.kruise.io/misc');
    assert.equal(inDefault.code, 1);
    assert.match(inDefault.stderr, /^error: clonesets.apps.kruise.io "misc" not found/);
    const listed = JSON.parse(await okViaKubectl(['get', 'clonesets', 'misc', '-o', 'json']));
    assert.equal(listed.metadata.name, 'misc');
    assert.equal(listed.status.replicas, 1);
    // -o json prints the version the cluster serves, as kubectl get does (v1alpha1 by default), not
    // the version the code works with.
    const byKubectl = await kubectlJson<{ apiVersion: string; spec: unknown }>(['-n', ns, 'get', 'clonesets.apps.kruise.io', 'misc']);
    assert.equal(listed.apiVersion, byKubectl.apiVersion);
    assert.deepEqual(listed.spec, byKubectl.spec);
    assert.match(await ok(['completion', 'bash']), /complete -F _kubectl_kruise kubectl-kruise/);
    assert.equal(await okViaKubectl(['__complete', 'rollout', 'st']), 'status\n:4\n');
  });

  // A rollout writes its CloneSet's status many times a second. The plugin's writes are merge
  // patches of what they change (as kubectl's): another writer cannot make them fail. Scaledown,
  // whose replicas come from the read, writes only over the object read, trying again on conflict.
  test('writes while another client writes the CloneSet all the time: set env/image, pause/resume, restart, scaledown', async () => {
    await apply(cloneSetManifest('busy', { replicas: 2 }), ns);
    await waitSettled(client, ns, 'busy', 2);
    let writes = 0;
    let writing = true;
    const writer = async () => {
      while (writing) {
        await client.patch(
          CloneSets,
          'busy',
          { metadata: { annotations: { tick: String(++writes) } } },
          {
            namespace: ns,
            patchType: PatchType.Merge,
          },
        );
      }
    };
    const writers = Promise.all([writer(), writer()]);
    try {
      const before = writes;
      await ok(['set', 'env', 'cloneset/busy', 'MODE=a']);
      await ok(['set', 'image', 'cloneset/busy', 'main=nginx:1.1']);
      await ok(['rollout', 'pause', 'cloneset/busy']);
      await ok(['rollout', 'resume', 'cloneset/busy']);
      await ok(['rollout', 'restart', 'cloneset/busy']);
      const pod = (await podsOf(client, ns, 'busy'))[0]!.metadata.name!;
      await ok(['scaledown', 'cloneset/busy', '--pods', pod]);
      assert.ok(writes - before >= 6, `the other client wrote ${writes - before} times during the 6 commands`);
    } finally {
      writing = false;
      await writers;
    }
    const busy = await get('busy');
    assert.deepEqual(busy.spec.template.spec.containers[0].env, [{ name: 'MODE', value: 'a' }]);
    assert.equal(busy.spec.template.spec.containers[0].image, 'nginx:1.1');
    assert.equal(busy.spec.updateStrategy?.rollingUpdate?.paused, false);
    assert.ok(busy.spec.template.metadata.annotations?.['kubectl.kubernetes.io/restartedAt']);
    assert.equal(busy.spec.replicas, 1);
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
  test('the kruise-tools verb table: every verb and new flag against the cluster (Kruise Rollout from its vendored CRD)', async () => {
    // Kruise Rollout is not installed: its verbs say so (exit 1)
    await client.delete(CustomResourceDefinitions, 'rollouts.rollouts.kruise.io').catch(() => undefined);
    await waitFor('the Rollout API gone', async () => !(await client.discoverResources('rollouts.kruise.io', 'v1beta1')));
    const missing = await kruise(['rollout', 'approve', 'rollout/x']);
    assert.equal(missing.code, 1);
    assert.equal(
      missing.stderr,
      'error: the server doesn\'t have a resource type "rollouts": Kruise Rollout (rollouts.kruise.io) is not installed in this cluster\n',
    );
    await kubectl(['apply', '-f', path.join(repoRoot, 'test/fixtures/kruise-rollout/rollouts.kruise.io_rollouts.yaml')]);
    await waitFor('the Rollout API served', async () =>
      (await client.discoverResources('rollouts.kruise.io', 'v1beta1'))?.resources.some((r) => r.name === 'rollouts'),
    );

    // its own label: other tests of this file run in the same namespace, so -l keeps to this CloneSet
    const tbl = cloneSetManifest('tbl', { replicas: 2 });
    await apply({ ...tbl, metadata: { ...tbl.metadata, labels: { kk: 'tbl' } } }, ns);
    await waitSettled(client, ns, 'tbl', 2);
    await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { 'db.host': 'h1', port: '5432' } }, ns);
    await apply(
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'rb' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [],
      },
      ns,
    );
    const steps = [{ replicas: '20%' }, { replicas: '50%', traffic: '0%' }, { replicas: '100%', traffic: '100%' }];
    const rollout = async (name: string, strategy: object, status: object) => {
      await client.create(
        KruiseRollouts,
        {
          apiVersion: 'rollouts.kruise.io/v1beta1',
          kind: 'Rollout',
          metadata: { name, namespace: ns },
          spec: { workloadRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'tbl' }, strategy },
        } as KubeObject,
        { namespace: ns },
      );
      const step = { finalisingStep: '', nextStepIndex: 0, podTemplateHash: 'h', currentStepIndex: 3 };
      const full =
        'canary' in strategy
          ? { canaryStatus: { ...step, canaryReadyReplicas: 1, canaryReplicas: 1, canaryRevision: 'c', ...status } }
          : { blueGreenStatus: { ...step, updatedReadyReplicas: 1, updatedReplicas: 1, updatedRevision: 'u', ...status } };
      await client.patch(
        KruiseRollouts,
        name,
        { status: { observedGeneration: 1, phase: 'Progressing', currentStepIndex: 3, currentStepState: 'StepPaused', ...full } },
        { namespace: ns, patchType: 'application/merge-patch+json', subresource: 'status' },
      );
    };
    await rollout('ro-canary', { canary: { steps } }, { currentStepIndex: 1, currentStepState: 'StepPaused' });
    await rollout('ro-bg', { blueGreen: { steps } }, { currentStepIndex: 3, currentStepState: 'StepUpgrade' });
    const ro = (name: string) => client.get<Rollout>(KruiseRollouts, name, { namespace: ns });
    const image = async (name: string) => (await get(name)).spec.template.spec.containers[0]!;
    await ok(['set', 'image', 'cloneset/tbl', 'main=nginx:2.0']);
    await waitSettled(client, ns, 'tbl', 2);
    const dir = mkdtempSync(path.join(tmpdir(), 'kk-'));
    const file = (name: string, text: string) => (writeFileSync(path.join(dir, name), text), path.join(dir, name));
    const created = file(
      'create.yaml',
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: made, labels: {pick: "yes"}}\n---\napiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {name: made, labels: {pick: "yes"}}\nspec:\n  replicas: 0\n  selector: {matchLabels: {app: made}}\n  template: {metadata: {labels: {app: made}}, spec: {containers: [{name: main, image: "nginx:1.0"}]}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: skipped}\n`,
    );
    const local = file('local.yaml', JSON.stringify(cloneSetManifest('offline')));

    interface Row {
      args: string[];
      code?: number;
      out?: RegExp;
      err?: RegExp;
      kubectl?: boolean;
      then?: () => Promise<unknown>;
    }
    const table: Row[] = [
      {
        args: ['get', 'all'],
        out: /\nclonesets\.apps\.kruise\.io:\nNAME\s+DESIRED[^\n]*\n(?:[^\n]+\n)*tbl\s+2\s+2\s+2\s+2\s+[\s\S]*\nrollouts\.rollouts\.kruise\.io:\nNAME\s+STATUS\s+CANARY_STEP\s+CANARY_STATE\s+MESSAGE\s+AGE\n/,
      },
      { args: ['get', 'rollouts'], out: /ro-canary\s+Progressing\s+1\s+StepPaused/ },
      {
        args: ['rollout', 'approve', 'rollout/ro-canary'],
        kubectl: true,
        out: /^rollout\.rollouts\.kruise\.io\/ro-canary approved\n$/,
        then: async () => assert.equal((await ro('ro-canary')).status?.canaryStatus?.currentStepState, 'StepReady'),
      },
      {
        args: ['rollout', 'approve', 'rollout/ro-canary'],
        code: 1,
        err: /^error: rollouts\.rollouts\.kruise\.io "ro-canary" does not allow to approve, because current canary state is not 'StepPaused'\n$/,
      },
      { args: ['rollout', 'approve', 'cloneset/tbl'], code: 1, err: /approving is not supported/ },
      {
        args: ['rollout', 'undo', '--fast', 'rollout/ro-bg'],
        kubectl: true,
        out: /^rollout\.rollouts\.kruise\.io\/ro-bg rolled back\n$/,
        then: async () => assert.equal((await ro('ro-bg')).status?.blueGreenStatus?.nextStepIndex, 2),
      },
      { args: ['rollout', 'undo', '--fast', 'rollout/ro-bg'], out: /^rollout\.rollouts\.kruise\.io\/ro-bg already rolled back\n$/ },
      { args: ['rollout', 'undo', '--fast', 'cloneset/tbl'], code: 1, err: /rollback is not supported on given object/ },
      // a Rollout stands for its workload: the CloneSet goes back to nginx:1.0
      {
        args: ['rollout', 'undo', 'rollout/ro-canary', 'cloneset/tbl'],
        out: /^cloneset\.apps\.kruise\.io\/tbl rolled back\n$/,
        then: async () => assert.equal((await image('tbl')).image, 'nginx:1.0'),
      },
      // describe while the Rollout's status is of its generation (a spec change hides status and replicas, as kruise-tools)
      {
        args: ['describe', 'rollout', 'ro-canary'],
        kubectl: true,
        out: /^Name:\s+ro-canary\n[\s\S]*Strategy:\s+Canary\n Step:\s+1\/3\n Steps:\n[\s\S]*Images:\s+nginx:1\.0\n[\s\S]*Replicas:\n Desired:\s+2\n/,
      },
      {
        args: ['describe', 'rollout', 'ro-canary', '-w', '--timeout', '2'],
        code: 1,
        out: /Name:\s+ro-canary/,
        err: /context deadline exceeded/,
      },
      { args: ['describe', 'rollout', 'nope'], code: 1, err: /rollouts\.rollouts\.kruise\.io "nope" not found/ },
      {
        args: ['rollout', 'pause', 'rollout/ro-canary'],
        out: /^rollout\.rollouts\.kruise\.io\/ro-canary paused\n$/,
        then: async () => assert.equal((await ro('ro-canary')).spec?.strategy?.paused, true),
      },
      { args: ['rollout', 'resume', 'ro', 'ro-canary'], out: /resumed/ },
      { args: ['set', 'image', 'clonesets', '-l', 'kk=tbl', 'main=nginx:1.0'], out: /^cloneset\.apps\.kruise\.io\/tbl image updated/ },
      {
        args: ['set', 'resources', 'clonesets', '-l', 'kk=tbl', '--requests=cpu=10m'],
        out: /cloneset\.apps\.kruise\.io\/tbl resource requirements updated/,
      },
      { args: ['exec', 'cloneset/tbl', '--', 'sh', '-c', 'echo exec ran'], kubectl: true, out: /^exec ran\n$/ },
      { args: ['exec', 'cloneset/nope', '--', 'true'], code: 1, err: /clonesets\.apps\.kruise\.io "nope" not found/ },
      {
        args: ['set', 'env', 'cloneset/tbl', '--from=configmap/cfg', '--prefix=CFG_', '--keys=db.host'],
        kubectl: true,
        out: /env updated/,
        then: async () =>
          assert.deepEqual((await image('tbl')).env, [
            { name: 'CFG_DB_HOST', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'db.host' } } },
          ]),
      },
      { args: ['set', 'env', 'cloneset/tbl', '-e', 'MODE=a', 'LEVEL=1'], out: /env updated/ },
      {
        args: ['set', 'env', 'cloneset/tbl', '--list'],
        out: /^# CloneSet tbl, container main\n# CFG_DB_HOST from configmap cfg, key db\.host\nMODE=a\nLEVEL=1\n$/,
      },
      { args: ['set', 'env', 'cloneset/tbl', '--list', '--resolve'], out: /\nCFG_DB_HOST=h1\n/ },
      {
        args: ['set', 'env', 'cloneset/tbl', '--overwrite=false', 'MODE=b'],
        code: 1,
        err: /'MODE' already has a value \(a\), and --overwrite is false/,
      },
      {
        args: ['set', 'env', 'clonesets', '--all', 'LEVEL-'],
        out: /cloneset\.apps\.kruise\.io\/tbl env updated/,
        then: async () =>
          assert.deepEqual(
            (await image('tbl')).env?.map((e: { name: string }) => e.name),
            ['CFG_DB_HOST', 'MODE'],
          ),
      },
      { args: ['set', 'env', 'clonesets', '-l', 'app=none', 'X=1'], out: /^$/ },
      { args: ['set', 'env', '--local', '-f', local, 'OFFLINE=1', '-o', 'json'], out: /"name": "OFFLINE",\s+"value": "1"/ },
      { args: ['set', 'env', '--all', '-l', 'a=b', 'clonesets', 'X=1'], code: 1, err: /cannot set --all and --selector at the same time/ },
      {
        args: ['set', 'subject', 'rolebinding', 'rb', '--user=alice', '--serviceaccount=:robot'],
        kubectl: true,
        out: /^rolebinding\.rbac\.authorization\.k8s\.io\/rb subjects updated\n$/,
        then: async () =>
          assert.deepEqual((await kubectlJson<{ subjects: unknown[] }>(['-n', ns, 'get', 'rolebinding', 'rb'])).subjects, [
            { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' },
            { kind: 'ServiceAccount', name: 'robot', namespace: ns },
          ]),
      },
      {
        args: ['set', 'subject', 'cloneset/tbl', '--user=x'],
        code: 1,
        err: /setting subjects is only supported for RoleBinding\/ClusterRoleBinding/,
      },
      {
        args: ['create', '-f', created, '-l', 'pick=yes'],
        kubectl: true,
        out: /^configmap\/made created\ncloneset\.apps\.kruise\.io\/made created\n$/,
      },
      {
        args: ['create', '-f', created, '-l', 'pick=yes'],
        code: 1,
        err: /configmaps "made" already exists[\s\S]*clonesets\.apps\.kruise\.io "made" already exists/,
      },
      { args: ['create'], code: 1, err: /^Error: must specify one of -f and -k\n/ },
      { args: ['completion', 'fish'], kubectl: true, out: /complete -c kubectl-kruise/ },
      { args: ['completion', 'powershell'], out: /Register-ArgumentCompleter/ },
    ];
    for (const row of table) {
      const r = row.kubectl ? await viaKubectl(row.args) : await kruise(row.args);
      const what = `kubectl kruise ${row.args.join(' ')} (${r.code}): ${r.stdout}${r.stderr}`;
      assert.equal(r.code, row.code ?? 0, what);
      if (row.out) assert.match(r.stdout, row.out, what);
      if (row.err) assert.match(r.stderr, row.err, what);
      await row.then?.();
    }

    // rollout status follows the CloneSet's watch to the end of a new rollout: paused, it waits; resumed, it ends
    await ok(['rollout', 'pause', 'cloneset/tbl']);
    await ok(['set', 'image', 'cloneset/tbl', 'main=nginx:3.0']);
    const watching = kruise(['rollout', 'status', 'cloneset/tbl', '--timeout', '90s']);
    await waitFor(
      'the watch started',
      async () => (await client.get<TestCloneSet>(CloneSets, 'tbl', { namespace: ns })).status.observedGeneration,
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await ok(['rollout', 'resume', 'cloneset/tbl']);
    const status = await watching;
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^Waiting for [^\n]+\n[\s\S]*CloneSet rolling update complete 2 pods at revision tbl-\w+\.\.\.\n$/);
    assert.equal((await get('tbl')).status.updateRevision, /revision (\S+)\.\.\.\n$/.exec(status.stdout)![1]);
    rmSync(dir, { recursive: true, force: true });
    await client.delete(CustomResourceDefinitions, 'rollouts.rollouts.kruise.io');
  });
});

const get = (name: string, type: ResourceType = CloneSets) => client.get<TestCloneSet>(type, name, { namespace: ns });

function deploymentManifest(name: string, replicas: number) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] } },
    },
  };
}
