// Storage for the local cluster: a default StorageClass (`standard`, as kind names its own) and the
// small external provisioner behind it, so PersistentVolumeClaims bind, expand and are reclaimed as
// on a cluster with a CSI driver. Advanced StatefulSet's volumeClaimTemplates and OpenKruise's e2e
// storage specs need exactly that.
//
// The provisioner plays the external-provisioner + external-resizer pair, with
// kube-controller-manager's PV controller doing the rest (docs/local-cluster.md#storage):
//   - provision: a PVC that kube-controller-manager hands to us (annotation
//     volume.kubernetes.io/storage-provisioner = ours; with WaitForFirstConsumer only once the
//     scheduler has picked a node, volume.kubernetes.io/selected-node) gets a PV `pvc-<uid>` with a
//     claimRef to it; kube-controller-manager binds the two.
//   - expand: a bound PVC asking for more than its PV holds, in a class that allows expansion
//     (the API server refuses the resize otherwise), gets the PV's capacity raised and its status
//     capacity set, as a driver without node-side expansion does.
//   - reclaim: a Released PV of ours with reclaim policy Delete is deleted, with its directory.
// Every PV is a hostPath volume in `<run dir>/volumes/<pv>` (DirectoryOrCreate), pinned to the
// selected node when there is one: KWOK nodes never mount it, and a real node's kubelet (all run
// on this machine) mounts a real directory — a local-volume provisioner on real nodes too.
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { KubeObject, PersistentVolume, StorageClass, Stored } from '../apis/core-objects.ts';
import type { PersistentVolumeClaim } from '../apis/core.ts';
import { compareQuantity, tryParseQuantity } from '../apis/quantity.ts';
import { PatchType, type KubeClient } from '../runtime/client.ts';
import { PersistentVolumeClaims, StorageClasses, type ResourceType } from '../runtime/resources.ts';
import { isAlreadyExists, isNotFound } from '../runtime/errors.ts';
import { SharedIndexInformer } from '../runtime/informer.ts';
import { logger as rootLogger, type Logger } from '../runtime/log.ts';
import { DEFAULT_STORAGE_CLASS, LOCAL_VOLUME_PROVISIONER } from './names.ts';

export { DEFAULT_STORAGE_CLASS, LOCAL_VOLUME_PROVISIONER };

const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
const STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
const SELECTED_NODE = 'volume.kubernetes.io/selected-node';
const IS_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';

export const PersistentVolumes: ResourceType = Object.freeze({
  group: '',
  version: 'v1',
  resource: 'persistentvolumes',
  kind: 'PersistentVolume',
  namespaced: false,
});

export type PVC = Stored<PersistentVolumeClaim> & { status?: { allocatedResources?: Record<string, string> } };

/**
 * The default class: WaitForFirstConsumer, like kind's `standard` and every local-volume class (a
 * volume lives on one node, so it waits for the pod's node), expandable, reclaimed on release.
 */
export function defaultStorageClass(): StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: DEFAULT_STORAGE_CLASS, annotations: { [IS_DEFAULT_CLASS]: 'true' } },
    provisioner: LOCAL_VOLUME_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
    allowVolumeExpansion: true,
  };
}

export interface StorageObservation {
  claims: readonly PVC[];
  volumes: readonly PersistentVolume[];
  classes: readonly StorageClass[];
  /** Where volume directories live (the cluster's run dir + /volumes). */
  volumeRoot: string;
}

export type StorageAction =
  | { kind: 'provision'; volume: PersistentVolume }
  | { kind: 'expand'; volume: string; claim: { namespace: string; name: string }; size: string }
  | { kind: 'reclaim'; volume: string; directory?: string };

const quantityText = (q: string | number | undefined) => (q === undefined ? undefined : String(q));
const requested = (c: PVC) => quantityText(c.spec?.resources?.requests?.storage);
const volumeNameFor = (c: PVC) => `pvc-${c.metadata.uid}`;
const ours = (v: PersistentVolume) => v.metadata.annotations?.[PROVISIONED_BY] === LOCAL_VOLUME_PROVISIONER;

/** Whether quantity a is larger than b (an unparsable one never is). */
function larger(a: string | undefined, b: string | undefined): boolean {
  const qa = a === undefined ? undefined : tryParseQuantity(a);
  const qb = b === undefined ? undefined : tryParseQuantity(b);
  return !!qa && !!qb && compareQuantity(qa, qb) > 0;
}

/** What the provisioner has to do for the observed claims, volumes and classes (pure). */
export function planStorage(o: StorageObservation): StorageAction[] {
  const classes = new Map(o.classes.filter((c) => c.provisioner === LOCAL_VOLUME_PROVISIONER).map((c) => [c.metadata.name!, c]));
  const volumes = new Map(o.volumes.map((v) => [v.metadata.name!, v]));
  const actions: StorageAction[] = [];
  for (const claim of o.claims) {
    const cls = classes.get(claim.spec?.storageClassName ?? '');
    if (!cls || claim.metadata.deletionTimestamp) continue;
    const size = requested(claim);
    if (!claim.spec?.volumeName) {
      if (claim.metadata.annotations?.[STORAGE_PROVISIONER] !== LOCAL_VOLUME_PROVISIONER || !size) continue;
      const node = claim.metadata.annotations?.[SELECTED_NODE];
      if (cls.volumeBindingMode === 'WaitForFirstConsumer' && !node) continue;
      const name = volumeNameFor(claim);
      if (volumes.has(name)) continue; // kube-controller-manager has yet to bind it
      actions.push({ kind: 'provision', volume: volumeFor(claim, cls, name, size, node, o.volumeRoot) });
      continue;
    }
    const volume = volumes.get(claim.spec.volumeName);
    if (!volume || !ours(volume) || volume.spec?.claimRef?.uid !== claim.metadata.uid) continue;
    const capacity = volume.spec?.capacity?.storage;
    const target = { volume: volume.metadata.name!, claim: { namespace: claim.metadata.namespace!, name: claim.metadata.name! } };
    if (cls.allowVolumeExpansion && larger(size, capacity)) {
      actions.push({ kind: 'expand', ...target, size: size! });
    } else if (capacity && claim.status?.phase === 'Bound' && larger(capacity, quantityText(claim.status.capacity?.storage))) {
      // The PV grew but the claim's status did not follow (the status write failed): finish it.
      actions.push({ kind: 'expand', ...target, size: capacity });
    }
  }
  for (const volume of o.volumes) {
    if (ours(volume) && volume.status?.phase === 'Released' && volume.spec?.persistentVolumeReclaimPolicy === 'Delete') {
      const dir = volume.spec.hostPath?.path;
      actions.push({ kind: 'reclaim', volume: volume.metadata.name!, directory: dir && isInside(dir, o.volumeRoot) ? dir : undefined });
    }
  }
  return actions;
}

const isInside = (dir: string, root: string) => !path.relative(root, dir).startsWith('..') && path.isAbsolute(dir);

function volumeFor(claim: PVC, cls: StorageClass, name: string, size: string, node: string | undefined, root: string): PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { [PROVISIONED_BY]: LOCAL_VOLUME_PROVISIONER } },
    spec: {
      capacity: { storage: size },
      accessModes: claim.spec?.accessModes?.length ? [...claim.spec.accessModes] : ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? 'Delete',
      storageClassName: cls.metadata.name,
      volumeMode: claim.spec?.volumeMode ?? 'Filesystem',
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: claim.metadata.namespace,
        name: claim.metadata.name,
        uid: claim.metadata.uid,
      },
      hostPath: { path: path.join(root, name), type: 'DirectoryOrCreate' },
      ...(node
        ? {
            nodeAffinity: {
              required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] },
            },
          }
        : {}),
    },
  };
}

export interface StorageProvisionerOptions {
  client: KubeClient;
  volumeRoot: string;
  logger?: Logger;
}

/** Runs planStorage on every change of a claim, volume or class (coalesced) and carries it out. */
export class StorageProvisioner {
  private readonly abort = new AbortController();
  private readonly claims: SharedIndexInformer<PVC>;
  private readonly volumes: SharedIndexInformer<PersistentVolume>;
  private readonly classes: SharedIndexInformer<StorageClass>;
  private readonly log: Logger;
  private pass: Promise<void> | undefined;
  private again = false;
  /** Actions already written, by key, until the caches show their effect (no duplicate writes). */
  private readonly done = new Set<string>();

  constructor(private readonly opts: StorageProvisionerOptions) {
    this.log = opts.logger ?? rootLogger;
    this.claims = new SharedIndexInformer<PVC>(opts.client, PersistentVolumeClaims);
    this.volumes = new SharedIndexInformer<PersistentVolume>(opts.client, PersistentVolumes);
    this.classes = new SharedIndexInformer<StorageClass>(opts.client, StorageClasses);
  }

  async start(): Promise<void> {
    await this.opts.client
      .create(StorageClasses, defaultStorageClass() as KubeObject)
      .catch((err: unknown) => (isAlreadyExists(err) ? undefined : Promise.reject(err)));
    const informers = [this.claims, this.volumes, this.classes] as Array<SharedIndexInformer<KubeObject>>;
    for (const informer of informers) {
      informer.addEventHandler({ onAdd: () => this.kick(), onUpdate: () => this.kick(), onDelete: () => this.kick() });
      void informer.run(this.abort.signal);
    }
    await Promise.all(informers.map((i) => i.waitForSync(this.abort.signal)));
    this.kick();
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.pass;
  }

  private kick(): void {
    if (!this.claims.hasSynced() || !this.volumes.hasSynced() || !this.classes.hasSynced()) return;
    if (this.pass) {
      this.again = true;
      return;
    }
    this.pass = this.runPasses().finally(() => (this.pass = undefined));
  }

  private async runPasses(): Promise<void> {
    do {
      this.again = false;
      const actions = planStorage({
        claims: this.claims.lister.list(),
        volumes: this.volumes.lister.list(),
        classes: this.classes.lister.list(),
        volumeRoot: this.opts.volumeRoot,
      });
      const keys = new Set(actions.map(actionKey));
      for (const k of this.done) if (!keys.has(k)) this.done.delete(k);
      for (const action of actions) {
        const key = actionKey(action);
        if (this.done.has(key)) continue;
        try {
          await this.carryOut(action);
          this.done.add(key);
        } catch (err) {
          this.log.warn({ err, action: key }, 'storage provisioner: action failed; retrying');
          setTimeout(() => this.kick(), 1000).unref();
        }
      }
    } while (this.again && !this.abort.signal.aborted);
  }

  private async carryOut(action: StorageAction): Promise<void> {
    const { client } = this.opts;
    switch (action.kind) {
      case 'provision':
        await client
          .create(PersistentVolumes, action.volume)
          .catch((err: unknown) => (isAlreadyExists(err) ? undefined : Promise.reject(err)));
        this.log.info({ volume: action.volume.metadata.name, claim: action.volume.spec?.claimRef }, 'provisioned');
        return;
      case 'expand':
        await client.patch(
          PersistentVolumes,
          action.volume,
          { spec: { capacity: { storage: action.size } } },
          { patchType: PatchType.Merge },
        );
        await client.patch(
          PersistentVolumeClaims,
          action.claim.name,
          { status: { capacity: { storage: action.size }, allocatedResources: { storage: action.size }, conditions: null } },
          { namespace: action.claim.namespace, patchType: PatchType.Merge, subresource: 'status' },
        );
        this.log.info({ volume: action.volume, size: action.size }, 'expanded');
        return;
      case 'reclaim':
        await client.delete(PersistentVolumes, action.volume).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
        if (action.directory) rmSync(action.directory, { recursive: true, force: true });
        this.log.info({ volume: action.volume }, 'reclaimed');
        return;
    }
  }
}

function actionKey(a: StorageAction): string {
  return a.kind === 'provision'
    ? `provision/${a.volume.metadata.name}`
    : a.kind === 'expand'
      ? `expand/${a.volume}/${a.size}`
      : `reclaim/${a.volume}`;
}
