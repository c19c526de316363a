// The `real-node` group: Kruise TS against a real kubelet. A cluster of its own (`<test cluster>-real`,
// `kruise cluster up --real-nodes 1`: one KWOK node and real-0, a kubelet with a private containerd),
// a manager, and a kruise-daemon for real-0 on that containerd, as a node of a real cluster runs it.
// What only a real node shows: the kubelet restarting a container for an in-place image update
// (restartCount, imageID, pod UID and IP kept), the daemon restarting a container whose env comes
// from a changed annotation, a ContainerRecreateRequest executed through CRI with the kubelet
// bringing the container back, preStop hooks run by the kubelet and the daemon, the Job sidecar
// terminator ending a Job whose sidecar never exits, container launch priority held by a real
// `configMapKeyRef` barrier, and in-place vertical scaling resized by the kubelet (and a resize the
// node cannot hold refused). Last, the Helm chart installed from OpenKruise's own values.yaml
// (upstream's gates, webhook settings and daemon limits in effect; manager pods on real-0 reaching the
// API server through the `kubernetes` Service, webhooks through kruise-webhook-service), `helm upgrade` of a feature gate without a webhook outage, `helm
// uninstall` leaving only the CRDs, and `helm template | kubectl apply --dry-run=server`. Then
// `kruise start --real-nodes 1` on the same cluster: its real-mode daemon for real-0 executes a CRR.
// Needs Linux and root; skipped with the reason otherwise.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import YAML from 'yaml';
import { canonicalQuantity } from '../../src/apis/quantity.ts';
import {
  down,
  kubectl as clusterKubectl,
  kubectlCacheDir,
  kubectlFlags,
  readState,
  up,
  type ClusterState,
} from '../../src/cluster/local-cluster.ts';
import { freePorts, processesMentioning, startProcess, stopProcesses, tail, type Started } from '../../src/cluster/processes.ts';
import { ensureHelm, repoRoot } from '../../src/cluster/binaries.ts';
import { LOCAL_IMAGES, mountsUnder } from '../../src/cluster/node-runtime.ts';
import {
  importKruiseImage,
  kruiseImageReference,
  nodeIpInterfaceOf,
  realNodeAlive,
  realNodesUnavailableReason,
} from '../../src/cluster/real-node.ts';
import { installCRDs } from '../../src/manager/crds.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { SUITE_FEATURE_GATES, TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { startManagerProcess, waitLeader, type ManagerProcess } from '../harness/managers.ts';
import { defaultedByWebhook } from '../harness/webhook-ready.ts';
import { kruiseArgs, servingFlags } from '../harness/kruise-cli.ts';

const skip = realNodesUnavailableReason();
const CLUSTER = `${TEST_CLUSTER}-real`;
const NODE = 'real-0';
// A namespace per run, so a kept cluster (KRUISE_TS_KEEP_CLUSTER=1) can be reused.
const NS = `real-${randomBytes(3).toString('hex')}`;
// Exits 0 on SIGTERM, like a well-behaved server; `sleep 1` keeps it responsive to the signal.
const SERVE_MARKER = 'kruise-ts-real-node-test';
const SERVE = `trap "exit 0" TERM; while :; do sleep 1; done # ${SERVE_MARKER}`;

interface ContainerStatus {
  name: string;
  restartCount: number;
  imageID: string;
  image: string;
  ready: boolean;
  containerID?: string;
  state?: { running?: { startedAt: string }; waiting?: { reason?: string } };
}
interface PodView {
  metadata: { name: string; uid: string; annotations?: Record<string, string> };
  spec: { nodeName?: string };
  status: { phase?: string; podIP?: string; containerStatuses?: ContainerStatus[] };
}

type Resources = { requests: Record<string, string>; limits: Record<string, string> };
/** Resources with every quantity in canonical form (`0.2` = `200m`), to compare. */
const normalized = (r: Partial<Resources> | undefined) =>
  Object.fromEntries(
    (['requests', 'limits'] as const).map((k) => [
      k,
      Object.fromEntries(Object.entries(r?.[k] ?? {}).map(([n, v]) => [n, canonicalQuantity(v)])),
    ]),
  );

describe('real node (kubelet + containerd)', { skip: skip && `skipped: ${skip}` }, () => {
  let state: ClusterState;
  let client: KubeClient;
  let manager: ManagerProcess | undefined;
  let daemon: Started | undefined;
  let hostDir: string;
  const kubectl = (args: string[], input?: string) => clusterKubectl(state, ['-n', NS, ...args], input);
  const json = async <T>(args: string[]) => JSON.parse(await kubectl([...args, '-o', 'json'])) as T;
  const podsOf = async (app: string) => (await json<{ items: PodView[] }>(['get', 'pods', '-l', `app=${app}`])).items;
  const onePod = async (app: string) => {
    const pods = await podsOf(app);
    return pods.length === 1 ? pods[0] : undefined;
  };
  /** An env var as the running container sees it (busybox-static has no printenv applet). */
  const envIn = async (pod: string, name: string) => (await kubectl(['exec', pod, '--', 'sh', '-c', `echo "$${name}"`])).trim();
  const main = (pod: PodView | undefined) => pod?.status.containerStatuses?.find((c) => c.name === 'main');
  const logs = () =>
    [manager?.proc.logFile, daemon?.logFile, path.join(state.realNodes![0]!.dir, 'logs/kubelet.log')]
      .filter((f): f is string => !!f)
      .map((f) => `--- ${f} ---\n${tail(f, 25)}`)
      .join('\n');

  before(async () => {
    ({ state } = await up({ name: CLUSTER, nodes: 1, realNodes: 1 }));
    client = fromKubeconfigFile(state.kubeconfig);
    await installCRDs(client);
    manager = await startManagerProcess(state, 'real-node-manager', [
      '--feature-gates',
      `${SUITE_FEATURE_GATES},InPlaceWorkloadVerticalScaling=true`,
    ]);
    await waitLeader(client, manager);
    await waitFor('the webhooks to answer', () => defaultedByWebhook(client), 90_000);

    // kruise-daemon for real-0 exactly as its DaemonSet would run it: the node's CRI socket.
    const node = state.realNodes![0]!;
    const [port] = await freePorts(1);
    daemon = startProcess(
      'kruise-daemon',
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(repoRoot, 'src/cli/kruise.ts'),
        'daemon',
        '--node-name',
        NODE,
        '--runtime-endpoint',
        `unix://${node.socket}`,
        '--kubeconfig',
        state.kubeconfig,
        '--addr',
        `127.0.0.1:${port}`,
      ],
      path.join(state.runDir, 'logs', `kruise-daemon-${NODE}.log`),
    );
    await waitFor(
      'the daemon of real-0 to be healthy',
      async () => {
        if (daemon!.exited) throw new Error(`kruise-daemon exited: ${tail(daemon!.logFile, 20)}`);
        return (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok;
      },
      60_000,
    );
    hostDir = path.join(node.dir, 'host');
    mkdirSync(hostDir, { recursive: true });
    await clusterKubectl(state, ['create', 'namespace', NS]);
    await waitFor('the default ServiceAccount', () => kubectl(['get', 'serviceaccount', 'default', '-o', 'name']), 60_000);
  });

  const keep = process.env.KRUISE_TS_KEEP_CLUSTER === '1';
  after(async () => {
    await stopProcesses(
      [daemon?.pid, manager?.proc.pid].filter((p): p is number => p !== undefined),
      10_000,
    );
    await client?.close();
    if (!keep) await down(CLUSTER, { quiet: true });
  });

  test('CloneSet in place on the kubelet: image update, env-from-annotation restart, CRR, preStop hooks', async () => {
    const hooks = path.join(hostDir, 'web-hooks');
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: 'web' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          updateStrategy: { type: 'InPlaceIfPossible' },
          template: {
            metadata: { labels: { app: 'web' }, annotations: { greeting: 'hello' } },
            spec: {
              nodeSelector: { type: 'real' },
              terminationGracePeriodSeconds: 5,
              volumes: [{ name: 'host', hostPath: { path: hostDir } }],
              containers: [
                {
                  name: 'main',
                  image: LOCAL_IMAGES.busybox,
                  imagePullPolicy: 'IfNotPresent',
                  command: ['sh', '-c', SERVE],
                  env: [{ name: 'GREETING', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['greeting']" } } }],
                  volumeMounts: [{ name: 'host', mountPath: '/host' }],
                  lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo stop >> /host/web-hooks'] } } },
                },
              ],
            },
          },
        },
      }),
    );
    const first = await waitFor(
      'the web pod Running on real-0',
      async () => {
        const pod = await onePod('web');
        return pod?.spec.nodeName === NODE && main(pod)?.ready ? pod : undefined;
      },
      90_000,
    );
    const firstMain = main(first)!;
    assert.equal(firstMain.restartCount, 0);
    assert.equal(await envIn(first.metadata.name, 'GREETING'), 'hello');
    const hookLines = () => (existsSync(hooks) ? readFileSync(hooks, 'utf8').split('\n').filter(Boolean).length : 0);

    // 1. In-place image update: the manager patches the pod, the kubelet kills and restarts main
    //    with the new image (its preStop hook first); same pod, same sandbox IP.
    await kubectl([
      'patch',
      'cloneset',
      'web',
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: LOCAL_IMAGES['busybox-2'] }]),
    ]);
    const updated = await waitFor(
      'main restarted by the kubelet with busybox:2.0',
      async () => {
        const pod = await onePod('web');
        const c = main(pod);
        return c && c.restartCount === 1 && c.ready && c.image === LOCAL_IMAGES['busybox-2'] ? pod : undefined;
      },
      90_000,
    ).catch((err: Error) => assert.fail(`${err.message}\n${logs()}`));
    assert.equal(updated.metadata.uid, first.metadata.uid, 'same pod');
    assert.equal(updated.status.podIP, first.status.podIP, 'same pod IP');
    assert.notEqual(main(updated)!.imageID, firstMain.imageID, 'imageID of the new image');
    assert.notEqual(main(updated)!.containerID, firstMain.containerID);
    assert.equal(await envIn(first.metadata.name, 'IMAGE_VERSION'), '2');
    assert.ok(hookLines() >= 1, 'the kubelet ran preStop before the in-place restart');
    await waitFor(
      'CloneSet status: 1 updated ready',
      async () => {
        const cs = await json<{
          status?: { updatedReadyReplicas?: number; observedGeneration?: number };
          metadata: { generation: number };
        }>(['get', 'cloneset', 'web']);
        return cs.status?.observedGeneration === cs.metadata.generation && cs.status.updatedReadyReplicas === 1;
      },
      60_000,
    );

    // 2. Env from metadata: only the annotation changes; the kubelet would never restart for that,
    //    the daemon restarts main so it reads the new value.
    await kubectl([
      'patch',
      'cloneset',
      'web',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { template: { metadata: { annotations: { greeting: 'bonjour' } } } } }),
    ]);
    await waitFor(
      'main restarted with GREETING=bonjour',
      async () => {
        const pod = await onePod('web');
        const c = main(pod);
        if (!pod || pod.metadata.uid !== first.metadata.uid || !c?.ready || c.restartCount < 2) return undefined;
        return (await envIn(pod.metadata.name, 'GREETING')) === 'bonjour';
      },
      90_000,
    ).catch((err: Error) => assert.fail(`${err.message}\n${logs()}`));

    // 3. A ContainerRecreateRequest: the daemon runs preStop and stops main through CRI, the
    //    kubelet starts it again, the CRR completes.
    const before = hookLines();
    const restarts = main(await onePod('web'))!.restartCount;
    await kubectl(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ContainerRecreateRequest',
        metadata: { name: 'web-crr' },
        spec: { podName: first.metadata.name, containers: [{ name: 'main' }], strategy: { failurePolicy: 'Fail' } },
      }),
    );
    await waitFor(
      'the CRR Completed and main running again',
      async () => {
        const crr = await json<{ status?: { phase?: string; containerRecreateStates?: Array<{ phase: string }> } }>([
          'get',
          'crr',
          'web-crr',
        ]);
        if (crr.status?.phase !== 'Completed') return undefined;
        assert.equal(crr.status.containerRecreateStates?.[0]?.phase, 'Succeeded');
        const c = main(await onePod('web'));
        return c && c.restartCount === restarts + 1 && c.ready;
      },
      90_000,
    ).catch((err: Error) => assert.fail(`${err.message}\n${logs()}`));
    assert.ok(hookLines() > before, 'the daemon ran preStop before recreating main');
    assert.equal((await onePod('web'))!.metadata.uid, first.metadata.uid);

    // 4. Scale to zero: the kubelet runs preStop while deleting the pod.
    const beforeDelete = hookLines();
    await kubectl(['scale', 'cloneset', 'web', '--replicas=0']);
    await waitFor('the web pod gone', async () => (await podsOf('web')).length === 0, 60_000);
    assert.ok(hookLines() > beforeDelete, 'the kubelet ran preStop on deletion');
  });

  test('in-place vertical scaling by the kubelet: resized with the same pod and container; a resize the node cannot hold is refused whole until the template is fixed', async () => {
    interface ResizedPod extends PodView {
      metadata: PodView['metadata'] & { labels: Record<string, string> };
      spec: PodView['spec'] & { containers: Array<{ resources: Resources }> };
      status: PodView['status'] & {
        containerStatuses?: Array<ContainerStatus & { resources?: Resources }>;
      };
    }
    const SMALL = { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '500m', memory: '64Mi' } };
    const RESIZED = { requests: { cpu: '200m', memory: '48Mi' }, limits: { cpu: '800m', memory: '96Mi' } };
    const FIXED = { requests: { cpu: '150m', memory: '40Mi' }, limits: { cpu: '600m', memory: '80Mi' } };
    // More than the node has: upstream's inplace_vpa.go "failed to inplace update resource".
    const HUGE = { requests: { cpu: '100', memory: '1000Gi' }, limits: { cpu: '800', memory: '8000Gi' } };
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: 'resize' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'resize' } },
          updateStrategy: { type: 'InPlaceIfPossible' },
          template: {
            metadata: { labels: { app: 'resize' } },
            spec: {
              nodeSelector: { type: 'real' },
              terminationGracePeriodSeconds: 2,
              containers: [
                {
                  name: 'main',
                  image: LOCAL_IMAGES.busybox,
                  imagePullPolicy: 'IfNotPresent',
                  command: ['sh', '-c', SERVE],
                  resources: SMALL,
                },
              ],
            },
          },
        },
      }),
    );
    const pod = async () => (await podsOf('resize'))[0] as ResizedPod | undefined;
    const cloneSet = () =>
      json<{
        metadata: { generation: number };
        status?: {
          observedGeneration?: number;
          updatedReplicas?: number;
          updatedAvailableReplicas?: number;
          conditions?: Array<{ type: string; status: string; message?: string }>;
        };
      }>(['get', 'cloneset', 'resize']);
    /** The CloneSet done: its one pod updated, available, and running with the resources of its spec. */
    const done = async (resources: Resources) => {
      const [cs, p] = [await cloneSet(), await pod()];
      const c = main(p) as (ContainerStatus & { resources?: Resources }) | undefined;
      return cs.status?.observedGeneration === cs.metadata.generation &&
        cs.status.updatedAvailableReplicas === 1 &&
        c?.ready &&
        isDeepStrictEqual(normalized(c.resources), normalized(resources))
        ? p
        : undefined;
    };
    const setTemplate = (image: string, resources: Resources) =>
      kubectl([
        'patch',
        'cloneset',
        'resize',
        '--type=json',
        '-p',
        JSON.stringify([
          { op: 'replace', path: '/spec/template/spec/containers/0/image', value: image },
          { op: 'replace', path: '/spec/template/spec/containers/0/resources', value: resources },
        ]),
      ]);
    const first = await waitFor('the resize pod running with its resources', () => done(SMALL), 90_000);

    // 1. cpu and memory up: the kubelet resizes the running container (resizePolicy NotRequired).
    await setTemplate(LOCAL_IMAGES.busybox, RESIZED);
    const resized = await waitFor('the kubelet to report the new resources', () => done(RESIZED), 90_000).catch((err: Error) =>
      assert.fail(`${err.message}\n${logs()}`),
    );
    assert.equal(resized.metadata.uid, first.metadata.uid, 'same pod');
    assert.equal(main(resized)!.containerID, main(first)!.containerID, 'same container');
    assert.equal(main(resized)!.restartCount, 0);
    assert.equal(main(resized)!.state?.running?.startedAt, main(first)!.state?.running?.startedAt);

    // 2. A new image and more than the node has (upstream's inplace_vpa.go "failed to inplace update
    //    resource"). Kubernetes 1.36 refuses such a resize at the API server, so the kubelet never
    //    gets to report it Infeasible as that spec waits for: the in-place update fails as a whole,
    //    reported as upstream's manager reports one (event FailedUpdatePodInPlace, condition
    //    FailedUpdate), and the pod stays as it was, at its revision, running.
    await setTemplate(LOCAL_IMAGES['busybox-2'], HUGE);
    const refused = await waitFor(
      'the in-place update refused',
      async () => (await cloneSet()).status?.conditions?.find((c) => c.type === 'FailedUpdate' && c.status === 'True'),
      90_000,
    ).catch((err: Error) => assert.fail(`${err.message}\n${logs()}`));
    assert.match(refused.message ?? '', /node didn't have enough allocatable resources/);
    const events = await json<{ items: Array<{ reason: string; message: string }> }>([
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=resize',
    ]);
    assert.ok(
      events.items.some((e) => e.reason === 'FailedUpdatePodInPlace'),
      JSON.stringify(events.items.map((e) => e.reason)),
    );
    const held = (await pod())!;
    assert.equal(held.metadata.uid, first.metadata.uid);
    assert.equal(main(held)!.image, LOCAL_IMAGES.busybox, 'not even the image was changed');
    assert.deepEqual(normalized(held.spec.containers[0]!.resources), normalized(RESIZED));
    assert.equal((await cloneSet()).status?.updatedReplicas, 0);

    // 3. The template fixed (that image, resources the node can hold): one in-place update resizes
    //    main and restarts it with the new image, same pod; the CloneSet completes.
    await setTemplate(LOCAL_IMAGES['busybox-2'], FIXED);
    const fixed = await waitFor('the fixed update applied and the CloneSet done', () => done(FIXED), 120_000).catch((err: Error) =>
      assert.fail(`${err.message}\n${logs()}`),
    );
    assert.equal(fixed.metadata.uid, first.metadata.uid, 'same pod');
    assert.notEqual(main(fixed)!.containerID, main(first)!.containerID, 'main was restarted for the new image');
    assert.ok(main(fixed)!.restartCount > 0);
    assert.equal(main(fixed)!.image, LOCAL_IMAGES['busybox-2']);
    await kubectl(['delete', 'cloneset', 'resize', '--wait=false']);
  });

  test('Job sidecar terminator: the sidecar is stopped through a CRR and the Job completes', async () => {
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'with-sidecar' },
        spec: {
          backoffLimit: 0,
          template: {
            metadata: { labels: { app: 'with-sidecar' } },
            spec: {
              nodeSelector: { type: 'real' },
              restartPolicy: 'Never',
              terminationGracePeriodSeconds: 5,
              containers: [
                { name: 'main', image: LOCAL_IMAGES.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'sleep 2'] },
                {
                  name: 'sidecar',
                  image: LOCAL_IMAGES.busybox,
                  imagePullPolicy: 'IfNotPresent',
                  command: ['sh', '-c', SERVE],
                  env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }],
                },
              ],
            },
          },
        },
      }),
    );
    await waitFor(
      'the Job to succeed',
      async () =>
        (await json<{ status?: { succeeded?: number; failed?: number } }>(['get', 'job', 'with-sidecar'])).status?.succeeded === 1,
      120_000,
    ).catch((err: Error) => assert.fail(`${err.message}\n${logs()}`));
    const pod = (await podsOf('with-sidecar'))[0]!;
    assert.equal(pod.status.phase, 'Succeeded');
    const crrs = await json<{ items: Array<{ metadata: { name: string } }> }>(['get', 'crr']);
    assert.ok(
      crrs.items.some((c) => c.metadata.name === `sidecar-termination-${pod.metadata.uid}`),
      'the terminator went through a CRR',
    );
  });

  test('container launch priority: a real configMapKeyRef barrier holds the later container', async () => {
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'ordered', labels: { app: 'ordered' }, annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' } },
        spec: {
          nodeSelector: { type: 'real' },
          terminationGracePeriodSeconds: 2,
          containers: [
            // The first container becomes ready only after 4 s: until then the second one must wait.
            {
              name: 'first',
              image: LOCAL_IMAGES.busybox,
              imagePullPolicy: 'IfNotPresent',
              command: ['sh', '-c', `sleep 4; touch /tmp/ready; ${SERVE}`],
              readinessProbe: { exec: { command: ['test', '-f', '/tmp/ready'] }, periodSeconds: 1 },
            },
            { name: 'second', image: LOCAL_IMAGES.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', SERVE] },
          ],
        },
      }),
    );
    const pod = await json<{
      spec: {
        containers: Array<{ name: string; env?: Array<{ name: string; valueFrom?: { configMapKeyRef?: { name: string; key: string } } }> }>;
      };
    }>(['get', 'pod', 'ordered']);
    const barrier = pod.spec.containers.find((c) => c.name === 'second')?.env?.find((e) => e.name === 'KRUISE_CONTAINER_BARRIER');
    assert.ok(barrier?.valueFrom?.configMapKeyRef, 'the webhook injected the barrier env');
    const started = await waitFor(
      'both containers running',
      async () => {
        const p = await json<PodView>(['get', 'pod', 'ordered']);
        const byName = Object.fromEntries((p.status.containerStatuses ?? []).map((c) => [c.name, c]));
        const first = byName.first?.state?.running?.startedAt;
        const second = byName.second?.state?.running?.startedAt;
        return first && second ? { first: Date.parse(first), second: Date.parse(second) } : undefined;
      },
      90_000,
    ).catch((err: Error) => assert.fail(`${err.message}\n${logs()}`));
    assert.ok(
      started.second - started.first >= 3000,
      `second started ${started.second - started.first} ms after first: the barrier held it until first was ready`,
    );
  });

  test("Helm: install with OpenKruise's values.yaml (upstream's effective settings, the daemon within upstream's limits on the real node), upgrade a feature gate with no webhook outage, uninstall leaves only the CRDs", async () => {
    const helm = ensureHelm((l) => process.stderr.write(`${l}\n`));
    const node = state.realNodes![0]!;
    if (!kruiseImageReference()) {
      const build = spawnSync(path.join(repoRoot, 'hack/build-image.sh'), { encoding: 'utf8' });
      assert.equal(build.status, 0, `./run.sh image failed:\n${build.stderr}`);
    }
    const image = importKruiseImage(node);
    const [repository, tag] = [image.slice(0, image.lastIndexOf(':')), image.slice(image.lastIndexOf(':') + 1)];
    // The release lives in `default`; the chart installs into installation.namespace, as upstream's.
    // Not upstream's kruise-system: the in-process manager of the tests before (and `kruise start`
    // after) keep their Lease there.
    const HELM_NS = 'kruise-ts-helm';
    /** The host PID of a container of real-0: its containerd task. */
    const containerPid = (containerID: string) => {
      const id = containerID.replace(/^containerd:\/\//, '');
      const tasks = execFileSync('ctr', ['--address', node.socket, '--namespace', 'k8s.io', 'tasks', 'ls'], { encoding: 'utf8' });
      const pid = tasks
        .split('\n')
        .find((l) => l.startsWith(id))
        ?.split(/\s+/)[1];
      assert.ok(pid, `no task for container ${id}:\n${tasks}`);
      return pid;
    };
    /** helm reads kubectl's discovery cache: this cluster's own (local-cluster.ts kubectlCacheDir). */
    const helmEnv = () => ({ ...process.env, KUBECACHEDIR: kubectlCacheDir(state) });
    const runHelm = (args: string[]) => {
      const r = spawnSync(helm, [...args, '--kubeconfig', state.kubeconfig], { encoding: 'utf8', timeout: 300_000, env: helmEnv() });
      assert.equal(r.status, 0, `helm ${args.join(' ')} failed:\n${r.stderr}${r.stdout}`);
      return r.stdout;
    };
    // The upgrade runs while admission is probed: it must not block the event loop.
    const runHelmAsync = (args: string[]) =>
      new Promise<void>((resolve, reject) =>
        execFile(helm, [...args, '--kubeconfig', state.kubeconfig], { timeout: 300_000, env: helmEnv() }, (err, stdout, stderr) =>
          err ? reject(new Error(`helm ${args.join(' ')} failed:\n${stderr}${stdout}`)) : resolve(),
        ),
      );
    // OpenKruise's own values.yaml, and only what this environment forces on top: our image (upstream's
    // names openkruise/kruise-manager, which no registry here serves), the namespace (above), the
    // real node (the KWOK node only simulates pods), the daemon off the host network (hostNetwork pods
    // cannot reach the `kubernetes` Service here, docs/local-cluster.md) and the node's private
    // containerd socket.
    const UPSTREAM_VALUES = path.join(repoRoot, 'test/data/openkruise-chart-1.8/values.yaml');
    const upstream = YAML.parse(readFileSync(UPSTREAM_VALUES, 'utf8')) as {
      featureGates: string;
      webhookConfiguration: { timeoutSeconds: number };
      daemon: { resources: { limits: { cpu: string; memory: string } } };
    };
    const values = (...extra: string[]) => [
      '-f',
      UPSTREAM_VALUES,
      '--set',
      [
        `installation.namespace=${HELM_NS}`,
        `manager.image.repository=${repository}`,
        `manager.image.tag=${tag}`,
        'manager.nodeSelector.type=real',
        'daemon.nodeSelector.type=real',
        'daemon.hostNetwork=false',
        `daemon.socketLocation=${path.dirname(node.socket)}`,
        `daemon.socketFile=${path.basename(node.socket)}`,
        ...extra,
      ].join(','),
    ];

    // The in-process manager and daemon of the other tests give way to the installed ones: the
    // release owns the webhook configurations and kruise-daemon-config, and adopts the CRDs that
    // are already there, as an upgrade from a kubectl-applied install does (docs/install.md).
    await stopProcesses(
      [daemon?.pid, manager?.proc.pid].filter((p): p is number => p !== undefined),
      10_000,
    );
    daemon = manager = undefined;
    await clusterKubectl(state, [
      'delete',
      'mutatingwebhookconfiguration/kruise-mutating-webhook-configuration',
      'validatingwebhookconfiguration/kruise-validating-webhook-configuration',
      '--ignore-not-found',
    ]);
    await clusterKubectl(state, ['delete', 'namespace', 'kruise-daemon-config', '--ignore-not-found', '--wait=true']);
    const crds = (await clusterKubectl(state, ['get', 'crd', '-o', 'name'])).split('\n').filter((c) => /kruise\.io$/.test(c));
    // The conversion webhook named the stopped manager's URL; helm's patch would add the Service
    // beside it (invalid), so it is pointed at the Service first (docs/install.md).
    const converted = (
      JSON.parse(await clusterKubectl(state, ['get', 'crd', '-o', 'json'])) as {
        items: Array<{ metadata: { name: string }; spec: { group: string; conversion?: { strategy?: string } } }>;
      }
    ).items.filter((c) => c.spec.group.endsWith('kruise.io') && c.spec.conversion?.strategy === 'Webhook');
    for (const c of converted)
      await clusterKubectl(state, [
        'patch',
        'crd',
        c.metadata.name,
        '--type=json',
        '-p',
        JSON.stringify([
          {
            op: 'replace',
            path: '/spec/conversion/webhook/clientConfig',
            value: { service: { name: 'kruise-webhook-service', namespace: HELM_NS, path: '/convert' } },
          },
        ]),
      ]);
    await clusterKubectl(state, ['label', '--overwrite', ...crds, 'app.kubernetes.io/managed-by=Helm']);
    await clusterKubectl(state, [
      'annotate',
      '--overwrite',
      ...crds,
      'meta.helm.sh/release-name=kruise-ts',
      'meta.helm.sh/release-namespace=default',
    ]);

    runHelm(['install', 'kruise-ts', path.join(repoRoot, 'charts/kruise-ts'), ...values(), '--wait', '--timeout', '4m']);
    const managerPods = async () =>
      (
        JSON.parse(await clusterKubectl(state, ['-n', HELM_NS, 'get', 'pods', '-l', 'control-plane=controller-manager', '-o', 'json'])) as {
          items: PodView[];
        }
      ).items;
    const pods = await managerPods();
    assert.equal(pods.length, 2);
    for (const p of pods) {
      assert.equal(p.spec.nodeName, NODE);
      assert.equal(p.status.phase, 'Running');
    }
    // The image's user, not root; upstream's gates and webhook timeout.
    const managerContainer = (pods[0] as unknown as { status: { containerStatuses: ContainerStatus[] } }).status.containerStatuses[0]!;
    const pid = containerPid(managerContainer.containerID!);
    assert.match(readFileSync(`/proc/${pid}/status`, 'utf8'), /^Uid:\s+65532\s/m);
    const managerArgs = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    assert.ok(managerArgs.includes(`--feature-gates=${upstream.featureGates}`), managerArgs.join(' '));
    assert.ok(managerArgs.includes(`--webhook-timeout-seconds=${upstream.webhookConfiguration.timeoutSeconds}`), managerArgs.join(' '));
    // Webhooks through kruise-webhook-service: the installed configurations name it.
    await waitFor('the webhooks to answer through the Service', () => defaultedByWebhook(client), 120_000);
    type WebhookConfiguration = {
      webhooks: Array<{
        name: string;
        timeoutSeconds?: number;
        failurePolicy?: string;
        clientConfig: { service?: { name: string; namespace: string } };
      }>;
    };
    const mwc = JSON.parse(
      await clusterKubectl(state, ['get', 'mutatingwebhookconfiguration', 'kruise-mutating-webhook-configuration', '-o', 'json']),
    ) as WebhookConfiguration;
    const vwc = JSON.parse(
      await clusterKubectl(state, ['get', 'validatingwebhookconfiguration', 'kruise-validating-webhook-configuration', '-o', 'json']),
    ) as WebhookConfiguration;
    // Every webhook as upstream's: its timeout from the values, failurePolicy Fail (config/webhook).
    for (const w of [...mwc.webhooks, ...vwc.webhooks]) {
      assert.equal(w.timeoutSeconds, upstream.webhookConfiguration.timeoutSeconds, w.name);
      assert.equal(w.failurePolicy, 'Fail', w.name);
    }
    assert.deepEqual(
      mwc.webhooks[0]!.clientConfig.service && { ...mwc.webhooks[0]!.clientConfig.service, path: undefined, port: undefined },
      {
        name: 'kruise-webhook-service',
        namespace: HELM_NS,
        path: undefined,
        port: undefined,
      },
    );
    await waitFor(
      'the kruise-daemon pod of real-0 Ready',
      async () => {
        const ds = JSON.parse(await clusterKubectl(state, ['-n', HELM_NS, 'get', 'daemonset', 'kruise-daemon', '-o', 'json'])) as {
          status: { numberReady?: number };
        };
        return ds.status.numberReady === 1;
      },
      120_000,
    );
    // The chart's daemon runs with upstream's least privilege — not privileged, every capability
    // dropped but NET_BIND_SERVICE, the socket's directory mounted read-only — and still does its
    // work through CRI: a ContainerRecreateRequest on real-0.
    const daemonPod = (
      JSON.parse(await clusterKubectl(state, ['-n', HELM_NS, 'get', 'pods', '-l', 'control-plane=daemon', '-o', 'json'])) as {
        items: Array<{
          metadata: { name: string };
          spec: {
            containers: Array<{
              securityContext?: { privileged?: boolean };
              volumeMounts: Array<{ name: string; readOnly?: boolean }>;
              resources: { limits?: Record<string, string> };
            }>;
          };
          status: { containerStatuses: ContainerStatus[] };
        }>;
      }
    ).items[0]!;
    const daemonContainer = daemonPod.spec.containers[0]!;
    assert.notEqual(daemonContainer.securityContext?.privileged, true);
    assert.equal(daemonContainer.volumeMounts.find((m) => m.name === 'runtime-socket')?.readOnly, true);
    assert.deepEqual(daemonContainer.resources.limits, upstream.daemon.resources.limits, "upstream's daemon limits");
    const daemonPid = containerPid(daemonPod.status.containerStatuses[0]!.containerID!);
    const daemonStatus = () => readFileSync(`/proc/${daemonPid}/status`, 'utf8');
    assert.match(daemonStatus(), /^Uid:\s+0\s/m);
    assert.match(daemonStatus(), /^CapEff:\s+0000000000000400$/m, 'only CAP_NET_BIND_SERVICE (bit 10)');
    // Within upstream's 50m CPU / 128Mi: how long from the container's start to 'kruise-daemon
    // started' (caches synced, controllers running) and how much memory it holds (docs/install.md
    // has the figures); below, after its CRR, it was never restarted (OOM-killed or failing liveness).
    const startedLine = await waitFor(
      "the daemon's 'kruise-daemon started'",
      async () =>
        (await clusterKubectl(state, ['-n', HELM_NS, 'logs', daemonPod.metadata.name]))
          .split('\n')
          .find((l) => l.includes('"msg":"kruise-daemon started"')),
      120_000,
    );
    const startSeconds =
      (Date.parse((JSON.parse(startedLine) as { time: string }).time) -
        Date.parse(daemonPod.status.containerStatuses[0]!.state!.running!.startedAt)) /
      1000;
    const memory = daemonStatus();
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(memory)?.[1]);
    process.stderr.write(
      `kruise-daemon under ${JSON.stringify(upstream.daemon.resources.limits)}: started in ${startSeconds.toFixed(1)} s, RSS ${(kib('VmRSS') / 1024).toFixed(0)} MiB (peak ${(kib('VmHWM') / 1024).toFixed(0)} MiB)\n`,
    );
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'helm-crr', labels: { app: 'helm-crr' } },
        spec: {
          nodeSelector: { type: 'real' },
          terminationGracePeriodSeconds: 2,
          containers: [{ name: 'main', image: LOCAL_IMAGES.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', SERVE] }],
        },
      }),
    );
    await waitFor('the helm-crr pod running on real-0', async () => main(await onePod('helm-crr'))?.ready, 90_000);
    await kubectl(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ContainerRecreateRequest',
        metadata: { name: 'helm-crr' },
        spec: { podName: 'helm-crr', containers: [{ name: 'main' }], strategy: { failurePolicy: 'Fail' } },
      }),
    );
    await waitFor(
      "the CRR Completed by the chart's unprivileged daemon, main running again",
      async () => {
        const crr = await json<{ status?: { phase?: string } }>(['get', 'crr', 'helm-crr']);
        const c = main(await onePod('helm-crr'));
        return crr.status?.phase === 'Completed' && c?.restartCount === 1 && c.ready;
      },
      90_000,
    );
    await kubectl(['delete', 'pod', 'helm-crr', '--wait=false']);
    const daemonNow = JSON.parse(
      await clusterKubectl(state, ['-n', HELM_NS, 'get', 'pod', daemonPod.metadata.name, '-o', 'json']),
    ) as PodView;
    assert.equal(daemonNow.status.containerStatuses?.[0]?.restartCount, 0, 'the daemon never restarted');

    // A CloneSet rolls under the installed manager (simulated pods on the KWOK node: fast).
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: 'helm-roll' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'helm-roll' } },
          updateStrategy: { type: 'InPlaceIfPossible' },
          template: {
            metadata: { labels: { app: 'helm-roll' } },
            spec: { nodeSelector: { type: 'kwok' }, containers: [{ name: 'main', image: 'nginx:1.0' }] },
          },
        },
      }),
    );
    const rolled = async (image: string) => {
      const cs = await json<{ metadata: { generation: number }; status?: { observedGeneration?: number; updatedReadyReplicas?: number } }>([
        'get',
        'cloneset',
        'helm-roll',
      ]);
      const pods = await podsOf('helm-roll');
      return (
        cs.status?.observedGeneration === cs.metadata.generation &&
        cs.status.updatedReadyReplicas === 2 &&
        pods.length === 2 &&
        pods.every((p) => p.status.containerStatuses?.[0]?.image === image)
      );
    };
    await waitFor('the CloneSet to run 2 pods', () => rolled('nginx:1.0'), 120_000);
    await kubectl([
      'patch',
      'cloneset',
      'helm-roll',
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'nginx:2.0' }]),
    ]);
    await waitFor('the CloneSet to roll to nginx:2.0 in place', () => rolled('nginx:2.0'), 120_000);

    // helm upgrade flips a gate: the Deployment rolls one replica at a time; every admission
    // review meanwhile is answered.
    let probes = 0;
    const failures: string[] = [];
    let upgrading = true;
    const prober = (async () => {
      while (upgrading) {
        probes++;
        if (!(await defaultedByWebhook(client))) failures.push(new Date().toISOString());
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    try {
      await runHelmAsync([
        'upgrade',
        'kruise-ts',
        path.join(repoRoot, 'charts/kruise-ts'),
        ...values(`featureGates=${upstream.featureGates}\\,ResourcesDeletionProtection=true`),
        '--wait',
        '--timeout',
        '4m',
      ]);
    } finally {
      upgrading = false;
      await prober;
    }
    assert.ok(probes > 5, `probed ${probes} times`);
    // Not one: a stopping replica drains its connections (WebhookServer.drain) before it closes.
    assert.deepEqual(failures, [], `webhook calls failed during the upgrade (${failures.length}/${probes})`);
    // Old replicas may still be terminating (preStop) when helm returns.
    await waitFor(
      'both replicas replaced',
      async () => {
        const now = await managerPods();
        return now.length === 2 && now.every((p) => !pods.some((old) => old.metadata.uid === p.metadata.uid));
      },
      60_000,
    );
    // The new gate is on: a namespace marked delete-protection Always cannot be deleted.
    const protectedNs = `${NS}-protected`;
    await clusterKubectl(state, ['create', 'namespace', protectedNs]);
    await clusterKubectl(state, ['label', 'namespace', protectedNs, 'policy.kruise.io/delete-protection=Always']);
    await waitFor(
      'the protected namespace deletion to be denied',
      async () => {
        // A server-side dry run goes through admission without deleting: the leader registers the
        // new gate's webhook a little after `helm upgrade --wait` returns, and a real delete
        // admitted before that would leave nothing to retry on.
        const r = spawnSync(
          state.kubectl,
          [...kubectlFlags(state), 'delete', 'namespace', protectedNs, '--dry-run=server', '--wait=false'],
          { encoding: 'utf8' },
        );
        return r.status !== 0 && /forbidden|denied/i.test(r.stderr);
      },
      60_000,
    );
    await clusterKubectl(state, ['label', 'namespace', protectedNs, 'policy.kruise.io/delete-protection-']);
    await clusterKubectl(state, ['delete', 'namespace', protectedNs, '--wait=false']);

    // helm uninstall: only the CRDs stay (and the custom resources in them).
    runHelm(['uninstall', 'kruise-ts', '--wait', '--timeout', '3m']);
    const gone = [
      'clusterrole.rbac.authorization.k8s.io/kruise-manager-role',
      'clusterrole.rbac.authorization.k8s.io/kruise-daemon-role',
      'clusterrole.rbac.authorization.k8s.io/kruise-metrics-reader',
      'mutatingwebhookconfiguration.admissionregistration.k8s.io/kruise-mutating-webhook-configuration',
      'validatingwebhookconfiguration.admissionregistration.k8s.io/kruise-validating-webhook-configuration',
      `namespace/${HELM_NS}`,
      'namespace/kruise-daemon-config',
    ];
    let left: string[] = [];
    await waitFor(
      'everything but the CRDs removed',
      async () => {
        const listed = await clusterKubectl(state, [
          'get',
          'clusterrole,clusterrolebinding,mutatingwebhookconfiguration,validatingwebhookconfiguration,namespace',
          '-o',
          'name',
        ]);
        left = gone.filter((g) => listed.split('\n').includes(g));
        return left.length === 0;
      },
      120_000,
    ).catch(() => assert.fail(`left after helm uninstall: ${left.join(', ')}`));
    const crdsAfter = (await clusterKubectl(state, ['get', 'crd', '-o', 'name'])).split('\n').filter((c) => /kruise\.io$/.test(c));
    assert.equal(crdsAfter.length, crds.length, 'the CRDs stay');
    assert.equal((await podsOf('helm-roll')).length, 2, 'the CloneSet and its pods stay');

    // `helm template | kubectl apply --dry-run=server`, the install path without helm, on what the
    // release left (the CRDs): every object passes the API server's validation and admission. A
    // server dry run creates no namespace, so the installation namespace and kruise-daemon-config
    // (the daemon's Secret Role lives there) are made first, as docs/install.md says.
    await clusterKubectl(state, ['create', 'namespace', HELM_NS]);
    await clusterKubectl(state, ['create', 'namespace', 'kruise-daemon-config']);
    const rendered = runHelm(['template', 'kruise-ts', path.join(repoRoot, 'charts/kruise-ts'), ...values()]);
    const objects = rendered.split(/^---$/m).filter((doc) => /^kind:/m.test(doc)).length;
    const dryRun = spawnSync(state.kubectl, [...kubectlFlags(state), 'apply', '--dry-run=server', '-f', '-'], {
      input: rendered,
      encoding: 'utf8',
    });
    assert.equal(dryRun.status, 0, `kubectl apply --dry-run=server failed:\n${dryRun.stderr}`);
    const applied = dryRun.stdout.split('\n').filter(Boolean);
    assert.equal(applied.length, objects, `one line per rendered object:\n${dryRun.stdout}`);
    assert.ok(
      applied.every((l) => l.endsWith('(server dry run)')),
      dryRun.stdout,
    );
    assert.ok(
      !(await clusterKubectl(state, ['get', 'clusterrole', '-o', 'name'])).includes('kruise-manager-role'),
      'a dry run creates nothing',
    );
    await clusterKubectl(state, ['delete', 'namespace', HELM_NS, 'kruise-daemon-config', '--wait=false']);
  });

  test('kruise start --real-nodes 1: the embedded cluster is reused, and the real-mode daemon it runs for real-0 recreates a container', async () => {
    const [webhookPort] = await freePorts(1);
    const env: NodeJS.ProcessEnv = { ...process.env, KRUISE_LOG_LEVEL: 'info' };
    delete env.KUBECONFIG;
    const start = startProcess(
      'kruise-start-real',
      process.execPath,
      kruiseArgs(
        'start',
        '--cluster-name',
        CLUSTER,
        '--nodes',
        '1',
        '--real-nodes',
        '1',
        ...servingFlags(webhookPort),
        '--feature-gates',
        SUITE_FEATURE_GATES,
      ),
      path.join(state.runDir, 'logs', 'kruise-start-real.log'),
      env,
    );
    const logged = (msg: string) => readFileSync(start.logFile, 'utf8').includes(`"msg":"${msg}"`);
    try {
      await waitFor(
        'kruise start to run a daemon for real-0',
        async () => {
          if (start.exited) throw new Error(`kruise start exited: ${tail(start.logFile, 30)}`);
          return existsSync(start.logFile) && logged('kruise-daemon started for real node');
        },
        180_000,
      ).catch((err: Error) => assert.fail(`${err.message}\n${tail(start.logFile, 30)}`));
      assert.match(readFileSync(start.logFile, 'utf8'), /"node":"real-0"/);

      await kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'started', labels: { app: 'started' } },
          spec: {
            nodeSelector: { type: 'real' },
            terminationGracePeriodSeconds: 2,
            containers: [{ name: 'main', image: LOCAL_IMAGES.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', SERVE] }],
          },
        }),
      );
      await waitFor('the pod running on real-0', async () => main(await onePod('started'))?.ready, 90_000);
      await kubectl(
        ['create', '-f', '-'],
        JSON.stringify({
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'ContainerRecreateRequest',
          metadata: { name: 'started-crr' },
          spec: { podName: 'started', containers: [{ name: 'main' }], strategy: { failurePolicy: 'Fail' } },
        }),
      );
      await waitFor(
        'the CRR Completed by the daemon of kruise start, main running again',
        async () => {
          const crr = await json<{ status?: { phase?: string } }>(['get', 'crr', 'started-crr']);
          const c = main(await onePod('started'));
          return crr.status?.phase === 'Completed' && c?.restartCount === 1 && c.ready;
        },
        90_000,
      ).catch((err: Error) => assert.fail(`${err.message}\n${tail(start.logFile, 30)}`));
    } finally {
      process.kill(start.pid, 'SIGTERM');
      await waitFor('kruise start to exit', async () => start.exited, 60_000);
    }
    assert.equal(start.exited!.code, 0, tail(start.logFile, 30));
    // It reused the cluster, so it leaves it running.
    assert.ok(readState(CLUSTER) && realNodeAlive(readState(CLUSTER)!.realNodes![0]!), 'the cluster and real-0 are still up');
  });

  test(
    'cluster down removes the real node: processes, containers, mounts, cgroups, network namespaces, interfaces',
    { skip: keep && 'KRUISE_TS_KEEP_CLUSTER=1' },
    async () => {
      const node = state.realNodes![0]!;
      const netnsBefore = existsSync('/var/run/netns') ? readdirSync('/var/run/netns') : [];
      await stopProcesses(
        [daemon?.pid, manager?.proc.pid].filter((p): p is number => p !== undefined),
        10_000,
      );
      await down(CLUSTER, { quiet: true });
      assert.ok(
        !execFileSync('iptables', ['-t', 'nat', '-S', 'PREROUTING'], { encoding: 'utf8' }).includes(`kruise-ts:${CLUSTER}`),
        'the kubernetes Service rule is removed',
      );
      assert.deepEqual(processesMentioning(state.runDir + path.sep), [], 'no process of the cluster left');
      assert.deepEqual(mountsUnder(state.runDir), [], 'no mount left under the run dir');
      assert.ok(!existsSync(`/sys/fs/cgroup/memory/kruise-ts/${CLUSTER}`), "the nodes' cgroups are removed");
      const links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' });
      assert.ok(!links.includes(node.bridge) && !links.includes(nodeIpInterfaceOf(CLUSTER)), `interfaces left:\n${links}`);
      const netnsAfter = existsSync('/var/run/netns') ? readdirSync('/var/run/netns') : [];
      assert.ok(netnsAfter.length < netnsBefore.length || netnsBefore.length === 0, `network namespaces left: ${netnsAfter.join(', ')}`);
      // The pods' processes went with their containers.
      assert.equal(spawnSync('pgrep', ['-f', SERVE_MARKER]).status, 1, 'no container process left');
    },
  );
});
