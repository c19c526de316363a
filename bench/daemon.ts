// kruise-daemon benchmark (figures printed, never asserted), on a dedicated local cluster with a
// Kruise TS manager child process (ImagePullJobGate on, NodeImages created 1 s after a node is
// Ready instead of 30 s):
//   crr   — ContainerRecreateRequest end-to-end latency on a real containerd (test harness: private
//           containerd + registry, a mini kubelet running the pod, a real `kruise daemon
//           --node-name` child on CRI): CRR created → phase Completed, sequentially (one CRR at a
//           time on one pod: a pod's CRRs are executed one after another anyway), p50/p99;
//   pull  — ImagePullJob created → job complete on N KWOK nodes served by a `kruise daemon
//           --simulated` child (each simulated pull takes 1 s), at parallelism 1 and 5; and one
//           real pull onto the containerd node for reference (job → complete, and the bare CRI
//           PullImage of the same kind of image).
// Usage: ./run.sh bench daemon [crr|pull] [--crrs 50] [--nodes 20]
// Needs root for the containerd parts (test/harness/containerd.ts says what else).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { benchArgs } from './args.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { up, down } from '../src/cluster/local-cluster.ts';
import { freePorts, startProcess, stopProcesses, tail, type Started } from '../src/cluster/processes.ts';
import { repoRoot } from '../src/cluster/binaries.ts';
import { CriRuntime } from '../src/daemon/runtime/cri-runtime.ts';
import { installCRDs } from '../src/manager/crds.ts';
import { fromKubeconfigFile, type KubeClient } from '../src/runtime/client.ts';
import type { KubeObject } from '../src/apis/core-objects.ts';
import { Namespaces, Nodes, Pods, ImagePullJobs, ContainerRecreateRequests, NodeImages } from '../src/runtime/resources.ts';
import { containerdUnavailableReason, startContainerd, type ContainerdEnv } from '../test/harness/containerd.ts';
import { MiniKubelet, type Pod } from '../test/harness/mini-kubelet.ts';
import { defaultedByWebhook } from '../test/harness/webhook-ready.ts';
import { percentile } from './measure.ts';

const { values, positionals } = benchArgs(import.meta.url, {
  allowPositionals: true,
  options: {
    crrs: { type: 'string', default: '50' },
    nodes: { type: 'string', default: '20' },
  },
});
const which = new Set(positionals.length ? positionals : ['crr', 'pull']);
for (const w of which) if (w !== 'crr' && w !== 'pull') throw new Error(`unknown benchmark ${w}: crr or pull`);
const crrCount = Number(values.crrs);
const kwokNodes = Number(values.nodes);
const name = `bench-daemon-${process.pid}`;
const ns = 'bench';
const NODE = 'bench-containerd';
const entrypoint = path.join(repoRoot, 'src/cli/kruise.ts');
const say = (line: string) => process.stderr.write(`${line}\n`);

const { state } = await up({ name, nodes: kwokNodes, log: () => undefined });
const client = fromKubeconfigFile(state.kubeconfig, { qps: 200, burst: 200 });
const children: Started[] = [];
let env: ContainerdEnv | undefined;
let kubelet: MiniKubelet | undefined;
let runtime: CriRuntime | undefined;
const out: string[] = [];

/** A child kruise process logging into the cluster's logs dir; resolves when /healthz answers. */
async function startKruise(label: string, args: string[], healthPortFlag: string): Promise<Started> {
  const [port] = await freePorts(1);
  const logFile = path.join(state.runDir, 'logs', `${label}.log`);
  const p = startProcess(label, process.execPath, ['--import', 'tsx', entrypoint, ...args, healthPortFlag, `127.0.0.1:${port}`], logFile, {
    ...process.env,
    KRUISE_LOG_LEVEL: 'warn',
  });
  children.push(p);
  const deadline = Date.now() + 90_000;
  while (
    !(await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (p.exited || Date.now() > deadline) throw new Error(`${label} did not become healthy: ${tail(logFile, 20)}`);
    await sleep(200);
  }
  return p;
}

async function poll<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

interface PullJob extends KubeObject {
  status?: { desired?: number; succeeded?: number; failed?: number; completionTime?: string };
}

/** Seconds from creating an ImagePullJob to the job reporting completion (polled every 100 ms). */
async function timePullJob(jobName: string, image: string, selector: object, parallelism: number, expect: number): Promise<number> {
  const t0 = performance.now();
  await client.create(ImagePullJobs, {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'ImagePullJob',
    metadata: { name: jobName, namespace: ns },
    spec: {
      image,
      selector,
      parallelism,
      pullPolicy: { timeoutSeconds: 60, backoffLimit: 1 },
      completionPolicy: { type: 'Always', activeDeadlineSeconds: 600 },
    },
  });
  const job = await poll(
    `${jobName} complete`,
    async () => {
      const j = await client.get<PullJob>(ImagePullJobs, jobName, { namespace: ns });
      return j.status?.completionTime && j.status.desired === expect ? j : undefined;
    },
    300_000,
    100,
  );
  const seconds = (performance.now() - t0) / 1000;
  if (job.status?.succeeded !== expect)
    say(`warning: ${jobName} ended with ${job.status?.succeeded}/${expect} succeeded, ${job.status?.failed} failed`);
  return seconds;
}

async function startContainerdNode(c: KubeClient): Promise<{ env: ContainerdEnv; kubelet: MiniKubelet }> {
  const e = await startContainerd({ log: say });
  env = e;
  const k = await MiniKubelet.create({
    endpoint: e.endpoint,
    client: c,
    nodeName: NODE,
    logRoot: path.join(e.dir, 'pods'),
    restartBackoffMs: 300,
  });
  kubelet = k;
  await k.registerNode();
  k.start();
  await startKruise(
    'kruise-daemon-node',
    ['daemon', '--node-name', NODE, '--runtime-endpoint', e.endpoint, '--kubeconfig', state.kubeconfig],
    '--addr',
  );
  return { env: e, kubelet: k };
}

async function benchCRR(e: ContainerdEnv, k: MiniKubelet): Promise<void> {
  interface PodView extends Pod {
    status?: { containerStatuses?: Array<{ containerID: string; restartCount: number; ready: boolean }> };
  }
  const created = await client.create<Pod>(Pods, {
    metadata: { name: 'crr-target', namespace: ns },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 5,
      containers: [{ name: 'app', image: e.images.busybox, command: ['sh', '-c', 'trap "exit 0" TERM; while :; do sleep 1; done'] }],
    },
  });
  await k.runPod(created);
  const latencies: number[] = [];
  for (let i = 0; i < crrCount; i++) {
    // The webhook copies the running container's ID from pod status: wait for the mini kubelet to
    // have reported the restart of the previous round.
    await poll(
      'pod ready with the previous restart',
      async () => {
        const p = await client.get<PodView>(Pods, 'crr-target', { namespace: ns });
        const s = p.status?.containerStatuses?.[0];
        return s?.ready && s.restartCount === i ? p : undefined;
      },
      60_000,
    );
    const t0 = performance.now();
    await client.create(ContainerRecreateRequests, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'ContainerRecreateRequest',
      metadata: { name: `crr-${i}`, namespace: ns },
      spec: { podName: 'crr-target', containers: [{ name: 'app' }], activeDeadlineSeconds: 120, ttlSecondsAfterFinished: 600 },
    });
    await poll(
      `crr-${i} Completed`,
      async () => {
        const crr = await client.get<KubeObject & { status?: { phase?: string } }>(ContainerRecreateRequests, `crr-${i}`, {
          namespace: ns,
        });
        return crr.status?.phase === 'Completed' ? crr : undefined;
      },
      120_000,
      25,
    );
    latencies.push(performance.now() - t0);
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  const mean = latencies.reduce((a, b) => a + b, 0) / latencies.length;
  out.push(`CRR create → Completed on containerd, ${crrCount} sequential requests (one container, exits on SIGTERM):`);
  out.push(
    `  p50 ${(percentile(sorted, 50) / 1000).toFixed(2)} s, p99 ${(percentile(sorted, 99) / 1000).toFixed(2)} s, min ${(sorted[0]! / 1000).toFixed(2)} s, max ${(sorted.at(-1)! / 1000).toFixed(2)} s, mean ${(mean / 1000).toFixed(2)} s`,
  );
}

async function benchPull(e: ContainerdEnv | undefined): Promise<void> {
  const kwok = { matchLabels: { type: 'kwok' } };
  await poll(
    `${kwokNodes} NodeImages`,
    async () => {
      const list = await client.list(NodeImages, { labelSelector: 'type=kwok' });
      return list.items.length >= kwokNodes ? true : undefined;
    },
    120_000,
    250,
  );
  out.push(`ImagePullJob created → complete, ${kwokNodes} KWOK nodes (simulated daemon, 1 s per pull):`);
  for (const parallelism of [1, 5]) {
    const s = await timePullJob(
      `sim-p${parallelism}`,
      `example.com/bench/p${parallelism}:1.0`,
      { matchLabels: kwok.matchLabels },
      parallelism,
      kwokNodes,
    );
    out.push(`  parallelism ${parallelism}: ${s.toFixed(1)} s`);
    say(`pull parallelism ${parallelism}: ${s.toFixed(1)} s`);
  }
  if (!e) return;
  // Real pulls need content containerd does not have: busybox:1.0 plus a layer of 16 MiB of random
  // bytes (incompressible), one new image per pull. A mere new tag of known content would only be
  // a manifest lookup.
  const work = mkdtempSync(path.join(e.dir, 'bench-image-'));
  const skopeo = (...args: string[]) =>
    execFileSync('skopeo', ['copy', '--quiet', '--src-tls-verify=false', '--dest-tls-verify=false', ...args]);
  skopeo(`docker://${e.images.busybox}`, `oci:${work}/oci:base`);
  execFileSync('umoci', ['unpack', '--image', `${work}/oci:base`, `${work}/bundle`]);
  const fresh = (tag: string) => {
    writeFileSync(path.join(work, 'bundle', 'rootfs', 'payload'), randomBytes(16 * 1024 * 1024));
    execFileSync('umoci', ['repack', '--image', `${work}/oci:${tag}`, `${work}/bundle`]);
    const ref = `${e.registry}/payload:${tag}`;
    skopeo(`oci:${work}/oci:${tag}`, `docker://${ref}`);
    return ref;
  };
  await poll(`NodeImage ${NODE}`, () => client.get(NodeImages, NODE), 60_000, 250);
  const viaJob = await timePullJob('real-pull', fresh('bench-job'), { names: [NODE] }, 1, 1);
  runtime ??= await CriRuntime.connect({ endpoint: e.endpoint });
  const ref = fresh('bench-cri');
  const t0 = performance.now();
  await runtime.pullImage({ image: ref });
  const direct = (performance.now() - t0) / 1000;
  const size = (await runtime.imageStatus(ref))?.size ?? 0;
  out.push(
    `Real pull on containerd (local registry, new 16 MiB random layer, ${(size / 1024 / 1024).toFixed(1)} MiB image): ImagePullJob → complete ${viaJob.toFixed(2)} s; bare CRI PullImage ${direct.toFixed(2)} s`,
  );
}

try {
  const skipContainerd = containerdUnavailableReason();
  if (skipContainerd) say(`containerd parts skipped: ${skipContainerd}`);
  await installCRDs(client);
  await client.create(Namespaces, { metadata: { name: ns } }).catch(() => undefined);
  await startKruise(
    'kruise-manager',
    [
      'start',
      '--kubeconfig',
      state.kubeconfig,
      '--webhook-port',
      '0',
      '--enable-leader-election=false',
      '--metrics-addr',
      '0',
      '--feature-gates',
      'ImagePullJobGate=true',
      '--nodeimage-creation-delay',
      '1s',
    ],
    '--health-probe-addr',
  );
  await poll("the manager's webhooks", async () => ((await defaultedByWebhook(client)) ? true : undefined), 90_000, 250);
  if (which.has('pull'))
    await startKruise('kruise-daemon-simulated', ['daemon', '--simulated', '--kubeconfig', state.kubeconfig], '--addr');
  const node = skipContainerd ? undefined : await startContainerdNode(client);
  if (which.has('crr')) {
    if (node) await benchCRR(node.env, node.kubelet);
    else out.push('CRR benchmark skipped: it needs containerd');
  }
  if (which.has('pull')) await benchPull(node?.env);
  console.log(
    `\nkruise-daemon benchmark (${process.version}, ${cpus().length} CPUs, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end)\n`,
  );
  for (const line of out) console.log(line);
} finally {
  await stopProcesses(children.map((c) => c.pid).reverse(), 5000);
  await kubelet?.stop();
  await runtime?.close();
  await env?.stop();
  await client.delete(Nodes, NODE).catch(() => undefined);
  await client.close();
  await down(name, { quiet: true });
}
