// Image pre-pulling end to end on the local control plane, driven by the suite's Kruise TS manager
// (ImagePullJobGate on): one NodeImage per (KWOK) node, ImagePullJobs writing their tag into
// NodeImages as parallelism allows, ImageListPullJobs fanning out into ImagePullJobs, and pull
// secrets copied into kruise-daemon-config. The node side is the suite's simulated kruise-daemon
// when it runs (pulls succeed, tag `doesnotexist` fails); where no daemon answers within a few
// seconds the tests play it, writing the tag status (phase + the spec tag version) as it would.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { isNotFound } from '../../src/runtime/errors.ts';
import { Namespaces, Nodes, Pods, Secrets, ImagePullJobs, ImageListPullJobs, NodeImages } from '../../src/runtime/resources.ts';
import type { ImagePullJob, NodeImage } from '../../src/controllers/imagejobs/resources.ts';
import type { ImageListPullJob } from '../../src/controllers/imagelistpulljob/plan.ts';
import { normalizeImageRef } from '../../src/util/imageref.ts';
import { createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

const KWOK_NODES = ['kwok-node-0', 'kwok-node-1', 'kwok-node-2'];
const DAEMON_NS = 'kruise-daemon-config';

let client: KubeClient;
let ns: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('ipj');
  // The Helm chart creates kruise-daemon-config; the manager only uses it.
  await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DAEMON_NS } }).catch(() => undefined);
});

after(async () => {
  await deleteNamespace(ns);
  await client.close();
});

const getJob = (name: string) => client.get<ImagePullJob>(ImagePullJobs, name, { namespace: ns });
const nodeImage = (name: string) =>
  client.get<NodeImage>(NodeImages, name).catch((err) => (isNotFound(err) ? undefined : Promise.reject(err)));

async function createJob(name: string, image: string, template: Record<string, unknown>): Promise<ImagePullJob> {
  return client.create<ImagePullJob>(ImagePullJobs, {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'ImagePullJob',
    metadata: { name, namespace: ns },
    spec: { image, ...template },
  } as ImagePullJob);
}

/** The spec tag of image on a NodeImage, if the job with this uid owns it. */
function ownedTag(ni: NodeImage | undefined, image: string, uid: string) {
  const { name, tag } = normalizeImageRef(image);
  const t = ni?.spec?.images?.[name]?.tags?.find((x) => x.tag === tag);
  return t && (t.ownerReferences ?? []).some((r) => r.uid === uid) ? t : undefined;
}

function reported(ni: NodeImage | undefined, image: string) {
  const { name, tag } = normalizeImageRef(image);
  return ni?.status?.imageStatuses?.[name]?.tags?.find((x) => x.tag === tag);
}

/** Plays kruise-daemon on one node: reports the tag's spec version as finished with phase. */
async function report(node: string, image: string, phase: 'Succeeded' | 'Failed'): Promise<void> {
  const ni = (await nodeImage(node))!;
  const { name, tag } = normalizeImageRef(image);
  const spec = ni.spec!.images![name]!.tags.find((t) => t.tag === tag)!;
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const status = {
    tag,
    phase,
    version: spec.version ?? 0,
    startTime: now,
    completionTime: now,
    progress: 100,
    ...(phase === 'Failed' ? { message: 'simulated failure' } : {}),
  };
  await client.patch(
    NodeImages,
    node,
    { status: { imageStatuses: { [name]: { tags: [status] } } } },
    { patchType: PatchType.Merge, subresource: 'status' },
  );
}

const finished = (phase?: string) => phase === 'Succeeded' || phase === 'Failed';

/**
 * The tag's status for its current spec version once finished: the daemon's if it answers within
 * 5s, else the one the test reports itself.
 */
async function settle(node: string, image: string, phase: 'Succeeded' | 'Failed', uid: string): Promise<string> {
  const current = async () => {
    const ni = await nodeImage(node);
    const spec = ownedTag(ni, image, uid);
    const st = reported(ni, image);
    return spec && st && (st.version ?? 0) === (spec.version ?? 0) && finished(st.phase) ? st.phase : undefined;
  };
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const p = await current();
    if (p) return p;
    await sleep(200);
  }
  await report(node, image, phase);
  return waitFor(`${image} finished on ${node}`, current, 10_000);
}

/** NodeImages (of nodes) whose spec carries the job's tag. */
async function claimed(image: string, uid: string, nodes = KWOK_NODES): Promise<string[]> {
  const out: string[] = [];
  for (const n of nodes) if (ownedTag(await nodeImage(n), image, uid)) out.push(n);
  return out;
}

describe('NodeImage', () => {
  test('every node has a NodeImage with its labels; a new node gets one, a deleted node loses it', { timeout: 180_000 }, async () => {
    for (const n of KWOK_NODES) {
      const ni = await waitFor(`NodeImage ${n}`, () => nodeImage(n), 60_000);
      assert.equal(ni.metadata.labels?.type, 'kwok');
      assert.equal(ni.metadata.labels?.['kubernetes.io/hostname'], n);
    }
    const name = `ipj-extra-${randomBytes(3).toString('hex')}`;
    // Tainted so no other test's pods land on it while it exists.
    await client.create(Nodes, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, annotations: { 'kwok.x-k8s.io/node': 'fake' }, labels: { type: 'kwok-ipj-extra', 'kubernetes.io/hostname': name } },
      spec: { taints: [{ key: 'kruise-ts-test', value: 'ipj', effect: 'NoSchedule' }] },
    } as KubeObject);
    try {
      // Created --nodeimage-creation-delay (30s) after the node turned Ready.
      const ni = await waitFor(`NodeImage of new node ${name}`, () => nodeImage(name), 90_000, 500);
      assert.equal(ni.metadata.labels?.type, 'kwok-ipj-extra');
    } finally {
      await client.delete(Nodes, name).catch(() => undefined);
    }
    await waitFor(`NodeImage ${name} deleted with its node`, async () => !(await nodeImage(name)), 30_000);
  });
});

describe('ImagePullJob', { concurrency: 4 }, () => {
  test('label selector, parallelism 1: one node at a time, then completion and TTL deletion', { timeout: 180_000 }, async () => {
    const image = 'registry.local/ipj/seq:1.0';
    const job = await createJob('seq', image, {
      selector: { matchLabels: { type: 'kwok' } },
      parallelism: 1,
      completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 3 },
    });
    const uid = job.metadata.uid!;
    assert.deepEqual(job.metadata.finalizers, ['apps.kruise.io/deletion-protection']);
    const done = new Set<string>();
    const claimOrder: string[] = [];
    for (let round = 1; round <= 3; round++) {
      const pending = await waitFor(
        `round ${round}: the tag in a ${round}th NodeImage`,
        async () => {
          const c = await claimed(image, uid);
          for (const n of c) if (!claimOrder.includes(n)) claimOrder.push(n);
          const open = c.filter((n) => !done.has(n));
          // Never more than one node pulling at a time.
          assert.ok(open.length <= 1, `one node at a time, got ${open}`);
          return c.length === round && open.length === 1 ? open[0] : undefined;
        },
        30_000,
        100,
      );
      const tag = ownedTag(await nodeImage(pending), image, uid)!;
      assert.equal(tag.imagePullPolicy, 'IfNotPresent');
      assert.ok(tag.createdAt && tag.pullPolicy?.ttlSecondsAfterFinished, 'tag carries createdAt and a TTL');
      // The job's status is written after the NodeImage tag: wait for it rather than race it.
      await waitFor('status.desired 3', async () => (await getJob('seq')).status?.desired === 3 || undefined, 30_000, 100);
      assert.equal(await settle(pending, image, 'Succeeded', uid), 'Succeeded');
      done.add(pending);
    }
    assert.equal(claimOrder.length, 3);
    const completed = await waitFor(
      'job completed',
      async () => {
        const j = await getJob('seq');
        return j.status?.completionTime ? j : undefined;
      },
      30_000,
    );
    assert.equal(completed.status?.desired, 3);
    assert.equal(completed.status?.succeeded, 3);
    assert.equal(completed.status?.failed, 0);
    assert.equal(completed.status?.active, 0);
    assert.equal(completed.status?.message, 'job has completed');
    await waitFor(
      'job deleted after ttlSecondsAfterFinished',
      () =>
        getJob('seq').then(
          () => false,
          (err) => isNotFound(err),
        ),
      30_000,
    );
  });

  test('a Failed tag status shows in failedNodes', { timeout: 150_000 }, async () => {
    // The simulated daemon cannot pull tag `doesnotexist`.
    const image = 'registry.local/ipj/fail:doesnotexist';
    const job = await createJob('fail', image, {
      selector: { names: ['kwok-node-0', 'kwok-node-1'] },
      parallelism: 2,
      pullPolicy: { timeoutSeconds: 10, backoffLimit: 1 },
    });
    const uid = job.metadata.uid!;
    await waitFor('tag in both NodeImages', async () => (await claimed(image, uid)).length === 2, 30_000);
    const completed = await waitFor(
      'job completed',
      async () => {
        for (const n of ['kwok-node-0', 'kwok-node-1']) {
          const st = reported(await nodeImage(n), image);
          if (!finished(st?.phase) && Date.now() - Date.parse(job.metadata.creationTimestamp!) > 60_000) await report(n, image, 'Failed');
        }
        const j = await getJob('fail');
        return j.status?.completionTime ? j : undefined;
      },
      120_000,
      500,
    );
    assert.equal(completed.status?.desired, 2);
    assert.equal(completed.status?.succeeded, 0);
    assert.equal(completed.status?.failed, 2);
    assert.deepEqual(completed.status?.failedNodes, ['kwok-node-0', 'kwok-node-1']);
    const ni = await nodeImage('kwok-node-1');
    assert.equal(reported(ni, image)?.phase, 'Failed');
  });

  test('podSelector pulls on the nodes of matching pods only', { timeout: 120_000 }, async () => {
    for (const [i, node] of [
      ['a', 'kwok-node-1'],
      ['b', 'kwok-node-2'],
      ['c', 'kwok-node-2'],
    ] as const) {
      await client.create(Pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `web-${i}`, namespace: ns, labels: { app: 'ipj-web' } },
        spec: { nodeName: node, containers: [{ name: 'main', image: 'registry.local/web:1' }] },
      } as KubeObject);
    }
    await client.create(Pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'other', namespace: ns, labels: { app: 'other' } },
      spec: { nodeName: 'kwok-node-0', containers: [{ name: 'main', image: 'registry.local/web:1' }] },
    } as KubeObject);
    const image = 'registry.local/ipj/pods:3';
    const job = await createJob('pods', image, { podSelector: { matchLabels: { app: 'ipj-web' } }, parallelism: 3 });
    const uid = job.metadata.uid!;
    const nodes = await waitFor(
      "tag in the pods' NodeImages",
      async () => {
        const c = await claimed(image, uid);
        return c.length === 2 ? c : undefined;
      },
      30_000,
    );
    assert.deepEqual(nodes, ['kwok-node-1', 'kwok-node-2']);
    await waitFor("status counts the pods' nodes", async () => (await getJob('pods')).status?.desired === 2, 30_000);
    for (const n of nodes) await settle(n, image, 'Succeeded', uid);
    const completed = await waitFor(
      'job completed',
      async () => {
        const j = await getJob('pods');
        return j.status?.completionTime ? j : undefined;
      },
      30_000,
    );
    assert.equal(completed.status?.succeeded, 2);
  });

  test(
    'pull secrets are copied to kruise-daemon-config, referenced by the NodeImage and removed with the job',
    { timeout: 120_000 },
    async () => {
      await client.create(Secrets, {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/dockerconfigjson',
        metadata: { name: 'regcred', namespace: ns },
        data: { '.dockerconfigjson': Buffer.from('{"auths":{"registry.local":{"auth":"dTpw"}}}').toString('base64') },
      } as KubeObject);
      const image = 'registry.local/ipj/private:4';
      const job = await createJob('private', image, { selector: { names: ['kwok-node-2'] }, pullSecrets: ['regcred'] });
      const copy = await waitFor(
        'secret copy',
        async () => {
          const list = await client.list<KubeObject & { data?: Record<string, string> }>(Secrets, { namespace: DAEMON_NS });
          return list.items.find((s) => s.metadata.annotations?.['imagepulljobs.kruise.io/source-key'] === `${ns}/regcred`);
        },
        30_000,
      );
      assert.equal(copy.metadata.annotations?.['imagepulljobs.kruise.io/references'], `${ns}/private`);
      assert.equal(copy.metadata.annotations?.['imagepulljobs.kruise.io/mode'], 'batch');
      assert.ok(copy.metadata.name?.startsWith('regcred-'));
      assert.ok(copy.data?.['.dockerconfigjson']);
      const entry = await waitFor(
        'NodeImage references the copy',
        async () => {
          const ni = await nodeImage('kwok-node-2');
          const e = ni?.spec?.images?.[normalizeImageRef(image).name];
          return e && ownedTag(ni, image, job.metadata.uid!) ? e : undefined;
        },
        30_000,
      );
      assert.deepEqual(entry.pullSecrets, [{ namespace: DAEMON_NS, name: copy.metadata.name, mode: 'batch' }]);

      await client.delete(ImagePullJobs, 'private', { namespace: ns });
      await waitFor(
        'job gone (finalizer removed)',
        () =>
          getJob('private').then(
            () => false,
            (err) => isNotFound(err),
          ),
        30_000,
      );
      await waitFor(
        'secret copy deleted',
        () =>
          client.get(Secrets, copy.metadata.name!, { namespace: DAEMON_NS }).then(
            () => false,
            (err) => isNotFound(err),
          ),
        30_000,
      );
    },
  );
});

describe('ImageListPullJob', () => {
  test('one ImagePullJob per image, removed images lose theirs, status sums them up', { timeout: 150_000 }, async () => {
    const images = ['registry.local/ipl/a:1', 'registry.local/ipl/b:1', 'registry.local/ipl/c:1'];
    await client.create(ImageListPullJobs, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'ImageListPullJob',
      metadata: { name: 'list', namespace: ns },
      spec: { images, selector: { names: ['kwok-node-0'] }, parallelism: 1, completionPolicy: { type: 'Always' } },
    } as KubeObject);
    const children = async () => {
      const all = await client.list<ImagePullJob>(ImagePullJobs, { namespace: ns });
      return all.items.filter(
        (j) => j.metadata.ownerReferences?.some((r) => r.kind === 'ImageListPullJob' && r.name === 'list') && !j.metadata.deletionTimestamp,
      );
    };
    const jobs = await waitFor(
      '3 ImagePullJobs',
      async () => {
        const c = await children();
        return c.length === 3 ? c : undefined;
      },
      30_000,
    );
    const list = await client.get<ImageListPullJob>(ImageListPullJobs, 'list', { namespace: ns });
    const hash = list.metadata.labels?.['controller-revision-hash'];
    assert.ok(hash, 'list job labelled with its template hash');
    for (const j of jobs) {
      assert.ok(j.metadata.name?.startsWith('list-'));
      assert.equal(j.metadata.labels?.['controller-revision-hash'], hash);
      assert.deepEqual(j.spec?.selector, { names: ['kwok-node-0'] });
    }
    assert.deepEqual(jobs.map((j) => j.spec?.image).sort(), images);

    await client.patch(ImageListPullJobs, 'list', { spec: { images: images.slice(0, 2) } }, { namespace: ns, patchType: PatchType.Merge });
    await waitFor(
      'job of the removed image deleted',
      async () => {
        const c = await children();
        return c.length === 2 && !c.some((j) => j.spec?.image === images[2]);
      },
      30_000,
    );

    for (const image of images.slice(0, 2)) {
      const uid = (await children()).find((j) => j.spec?.image === image)!.metadata.uid!;
      await waitFor(`tag of ${image} on kwok-node-0`, async () => !!ownedTag(await nodeImage('kwok-node-0'), image, uid), 30_000);
      assert.equal(await settle('kwok-node-0', image, 'Succeeded', uid), 'Succeeded');
    }
    const completed = await waitFor(
      'list job completed',
      async () => {
        const l = await client.get<ImageListPullJob>(ImageListPullJobs, 'list', { namespace: ns });
        return l.status?.completionTime ? l : undefined;
      },
      30_000,
    );
    assert.equal(completed.status?.desired, 2);
    assert.equal(completed.status?.completed, 2);
    assert.equal(completed.status?.succeeded, 2);
  });
});
