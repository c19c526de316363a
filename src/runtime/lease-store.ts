// The LeaseStore leader election runs on: one coordination.k8s.io/v1 Lease read and written through
// the KubeClient, like client-go's resourcelock.LeaseLock. Writes are compare-and-swaps on
// metadata.resourceVersion, and the API server's 409 (AlreadyExists on create, Conflict on update)
// surfaces as a StatusError whose code is 409, which is what the elector checks. Note the record's
// leaderTransitions is stored as spec.leaseTransitions (the API field's name).

import type { Lease, LeaseSpec, ObjectMeta } from '../apis/core-objects.ts';
import type { KubeClient } from './client.ts';
import { isNotFound } from './errors.ts';
import { Leases } from './resources.ts';
import { formatMicroTime, type LeaseRecord, type LeaseStore, type StoredLease } from './leaderelection.ts';

export interface KubeLeaseStoreOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  /** Labels put on the Lease when this store creates it. */
  labels?: Record<string, string>;
}

export class KubeLeaseStore implements LeaseStore {
  private readonly client: KubeClient;
  readonly namespace: string;
  readonly name: string;
  private readonly labels: Record<string, string> | undefined;
  /** The Lease as last read or written, so an update keeps what others put in it (labels, strategy…). */
  private last: Lease | undefined;

  constructor(opts: KubeLeaseStoreOptions) {
    if (!opts.namespace || !opts.name) throw new Error('lease namespace and name are required');
    this.client = opts.client;
    this.namespace = opts.namespace;
    this.name = opts.name;
    this.labels = opts.labels;
  }

  async get(signal?: AbortSignal): Promise<StoredLease | null> {
    let lease: Lease;
    try {
      lease = await this.client.get<Lease>(Leases, this.name, { namespace: this.namespace, signal });
    } catch (err) {
      if (isNotFound(err)) {
        this.last = undefined;
        return null;
      }
      throw err;
    }
    this.last = lease;
    return { ...leaseToRecord(lease), resourceVersion: lease.metadata.resourceVersion ?? '' };
  }

  async create(record: LeaseRecord, signal?: AbortSignal): Promise<string> {
    const metadata: ObjectMeta = { name: this.name, namespace: this.namespace };
    if (this.labels) metadata.labels = { ...this.labels };
    const created = await this.client.create<Lease>(Leases, { metadata, spec: recordToSpec(record) }, { signal });
    this.last = created;
    return created.metadata.resourceVersion ?? '';
  }

  async update(record: LeaseRecord, resourceVersion: string, signal?: AbortSignal): Promise<string> {
    const base: Lease = this.last?.metadata.resourceVersion === resourceVersion ? this.last : { metadata: {} };
    const lease: Lease = {
      ...base,
      metadata: { ...base.metadata, name: this.name, namespace: this.namespace, resourceVersion, managedFields: undefined },
      spec: { ...base.spec, ...recordToSpec(record) },
    };
    const updated = await this.client.update<Lease>(Leases, lease, { signal });
    this.last = updated;
    return updated.metadata.resourceVersion ?? '';
  }
}

/** The elector's view of a Lease; absent fields read as zero values, as client-go does. */
export function leaseToRecord(lease: Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: spec.acquireTime ?? '',
    renewTime: spec.renewTime ?? '',
    leaderTransitions: spec.leaseTransitions ?? 0,
  };
}

export function recordToSpec(record: LeaseRecord): LeaseSpec {
  const spec: LeaseSpec = {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaderTransitions,
  };
  const acquireTime = toMicroTime(record.acquireTime);
  const renewTime = toMicroTime(record.renewTime);
  if (acquireTime) spec.acquireTime = acquireTime;
  if (renewTime) spec.renewTime = renewTime;
  return spec;
}

/** The API server accepts only RFC 3339 with exactly 6 fractional digits for MicroTime fields. */
function toMicroTime(stamp: string): string | undefined {
  if (!stamp) return undefined;
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(stamp)) return stamp;
  const ms = Date.parse(stamp);
  if (Number.isNaN(ms)) throw new Error(`invalid lease time ${JSON.stringify(stamp)}`);
  return formatMicroTime(ms);
}
