// A small Kubernetes REST client. Kubeconfigs are read by ./kubeconfig.ts; requests and watches to a
// cluster share one transport (./transport.ts: one HTTP/2 connection, or HTTP/1.1 pools) with the
// cluster's TLS material, and watch streams are not cut by body timeouts.
// Node's own HTTP clients rather than the undici package: undici (and the bundled copy inside Node it
// pulls in) cost ≈40 MiB of RSS and ≈0.4 s of start-up.

import type { Readable } from 'node:stream';
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, ObjectMeta } from '../apis/core-objects.ts';
import { realClock, type Clock } from '../util/clock.ts';
import { BucketRateLimiter } from './ratelimiter.ts';
import { ListBodyReader, withoutManagedFields, type ListHead } from './list-reader.ts';
import {
  PROTOBUF_MEDIA_TYPE,
  ProtobufListReader,
  prepareCodec,
  ProtobufWatchDecoder,
  decodeObject,
  isProtobuf,
  readsAsProtobuf,
  statusJson,
} from './protobuf/codec.ts';
import { accessFromDefault, accessFromKubeconfigFile, type AuthHeaders, type TLSOptions } from './kubeconfig.ts';
import { newTransport, type ApiResponse, type HttpMethod, type Transport } from './transport.ts';
import fjp, { type Operation } from 'fast-json-patch';
import { applyMergePatch, createMergePatch } from '../util/merge-patch.ts';
import { isJsonObject } from '../apis/json.ts';
import { fromWire, toWire, WireVersions } from './wire-versions.ts';
import { StatusError, isConflict, isNotFound, type Status } from './errors.ts';
import { Pods, apiVersionOf, type APIResourceList, type ResourceType } from './resources.ts';

// ---------------------------------------------------------------------------------------------
// Object shapes: the stored objects are src/apis's; what follows is only the API machinery's own.

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface ObjectList<T extends KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

export interface Scale extends KubeObject {
  spec?: { replicas?: number };
  status?: { replicas: number; selector?: string };
}

// ---------------------------------------------------------------------------------------------
// Options

export interface KubeClientOptions {
  /** Base URL, e.g. https://127.0.0.1:6443 (http:// is accepted, for tests and local proxies). */
  server: string;
  tls?: TLSOptions;
  auth?: AuthHeaders;
  /** Client-side rate limit for non-watch requests; qps <= 0 disables it. Default 30. */
  qps?: number;
  /** Default 50. */
  burst?: number;
  clock?: Clock;
  userAgent?: string;
  /** Time allowed for headers and for the body of a non-watch request. Default 60 s. */
  requestTimeoutMs?: number;
  /** Called before every write (after any rate-limit wait); throwing refuses the write. */
  writeFence?: () => void;
  /**
   * How often an answer of 429 or 5xx carrying Retry-After is retried (API priority and fairness; an
   * API server still installing its paths after a restart answers 503 with Retry-After). Default 5.
   */
  maxRetries?: number;
  /** What the cluster serves of the Kruise kinds; derived clients share their parent's. */
  wireVersions?: WireVersions;
}

/** What a client derived with KubeClient.withOwnLimit changes: who it says it is and its own budget. */
export interface ClientIdentity {
  userAgent: string;
  /** qps <= 0 disables the limit. */
  qps: number;
  burst: number;
  /** Called before every write (after any rate-limit wait); throwing refuses the write. */
  writeFence?: () => void;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

export interface GetOptions extends RequestOptions {
  namespace?: string;
  resourceVersion?: string;
  subresource?: string;
}

export interface ListOptions extends RequestOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  /**
   * A page after the first of a paged list. It is not charged to the rate limiter: the list was
   * when it began (client-go's reflector makes its initial list in one request, charged once).
   */
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  /**
   * Called with the page's continue token as soon as its metadata has arrived — the API server
   * writes it ahead of the items — so that the next page can be asked for while this one is still
   * in transfer and being parsed. Not called for a last page, nor on an error.
   */
  onContinue?: (token: string) => void;
  /**
   * Called with each item as soon as it has arrived and been parsed; such items are not kept in
   * the returned page (its items are empty), so a long list is never held twice.
   */
  onItem?: (item: KubeObject) => void;
  /** Items come without metadata.managedFields, left out before they are parsed (an informer's list). */
  withoutManagedFields?: boolean;
}

/**
 * What a list or watch of pods and nodes asks for: protobuf, which the API server encodes several
 * times faster than JSON (a 50k-pod list: ~1.6 s of its CPU less), and which is decoded here into
 * the same objects (src/runtime/protobuf/codec.ts); JSON if a server in between cannot give it.
 * CRDs are served only as JSON.
 */
const PROTOBUF_ACCEPT = `${PROTOBUF_MEDIA_TYPE}, application/json`;

export interface WriteOptions extends RequestOptions {
  /** Defaults to the object's metadata.namespace. */
  namespace?: string;
  fieldManager?: string;
  dryRun?: boolean;
  subresource?: string;
}

export const PatchType = {
  JSON: 'application/json-patch+json',
  Merge: 'application/merge-patch+json',
  StrategicMerge: 'application/strategic-merge-patch+json',
  Apply: 'application/apply-patch+yaml',
} as const;
export type PatchType = (typeof PatchType)[keyof typeof PatchType];

export interface PatchOptions extends RequestOptions {
  namespace?: string;
  patchType: PatchType;
  /** Required for server-side apply. */
  fieldManager?: string;
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
  dryRun?: boolean;
  subresource?: string;
}

export interface DeleteOptions extends RequestOptions {
  namespace?: string;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
  dryRun?: boolean;
}

export interface DeleteCollectionOptions extends DeleteOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

export interface WatchOptions extends RequestOptions {
  namespace?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
  labelSelector?: string;
  fieldSelector?: string;
  /** Objects come without metadata.managedFields (an informer's watch). */
  withoutManagedFields?: boolean;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
const watchEventTypes: readonly WatchEventType[] = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'];

export type WatchEvent<T extends KubeObject> =
  { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T } | { type: 'ERROR'; object: Status };

/** The watch stream carried something that is not a watch event (or ended mid-event). */
export class WatchDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WatchDecodeError';
  }
}

type Query = Record<string, string | number | boolean | undefined>;

interface RawResponse {
  status: number;
  body: string;
}

// ---------------------------------------------------------------------------------------------
// The client

export class KubeClient {
  private readonly base: URL;
  private readonly transport: Transport;
  /** Derived clients share their parent's connections; only the parent closes them. */
  private readonly ownsTransport: boolean;
  private readonly limiter: BucketRateLimiter | undefined;
  private readonly auth: AuthHeaders | undefined;
  private readonly clock: Clock;
  private readonly userAgent: string;
  private readonly requestTimeoutMs: number;
  private readonly maxRetries: number;
  private readonly options: KubeClientOptions;
  /** The versions the cluster serves of the Kruise kinds (src/runtime/wire-versions.ts). */
  readonly wireVersions: WireVersions;

  constructor(opts: KubeClientOptions, sharedTransport?: Transport) {
    this.wireVersions = opts.wireVersions ?? new WireVersions(opts.clock);
    this.options = { ...opts, wireVersions: this.wireVersions };
    this.base = new URL(opts.server);
    if (this.base.protocol !== 'https:' && this.base.protocol !== 'http:') {
      throw new Error(`unsupported server URL ${opts.server}`);
    }
    this.clock = opts.clock ?? realClock;
    const qps = opts.qps ?? 30;
    this.limiter = qps > 0 ? new BucketRateLimiter(qps, Math.max(1, opts.burst ?? 50), this.clock) : undefined;
    this.auth = opts.auth;
    this.userAgent = opts.userAgent ?? 'kruise-ts';
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 60_000;
    this.maxRetries = opts.maxRetries ?? 5;
    this.ownsTransport = !sharedTransport;
    this.transport = sharedTransport ?? newTransport(this.base, opts.tls ?? {});
  }

  /**
   * A client over this one's connections with its own user agent and rate limit: upstream gives each
   * controller such a client (`kruise-manager/<controller>`), so the QPS/burst flags are a budget
   * per controller and one busy controller does not starve the others.
   */
  withOwnLimit(identity: ClientIdentity): KubeClient {
    return new KubeClient({ ...this.options, ...identity }, this.transport);
  }

  /** Releases the connections (a client from withOwnLimit leaves them to its parent); in-flight watches are torn down. */
  async close(): Promise<void> {
    if (this.ownsTransport) this.transport.close();
  }

  // --- reads -----------------------------------------------------------------------------------

  async get<T extends KubeObject>(type: ResourceType, name: string, opts: GetOptions = {}): Promise<T> {
    const wire = await this.servedVersion(type);
    const path = this.path(type, opts.namespace, name, opts.subresource, wire);
    return fromWire(type, wire, await this.json<T>('GET', path, { resourceVersion: opts.resourceVersion }, undefined, opts.signal));
  }

  /**
   * The discovery document of one group version (GET /apis/<group>/<version>, /api/<version> for
   * the core group): undefined when the server does not serve it.
   */
  async discoverResources(group: string, version: string, signal?: AbortSignal): Promise<APIResourceList | undefined> {
    const path = (group ? ['apis', group, version] : ['api', version]).map(encodeURIComponent).join('/');
    try {
      return await this.json<APIResourceList>('GET', path, {}, undefined, signal);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * One page of a list (or all of it when no limit is given). Items get apiVersion/kind filled in.
   * The body is parsed as it arrives (ListBodyReader), one item at a time.
   */
  async list<T extends KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<ObjectList<T>> {
    const wire = await this.servedVersion(type);
    const url = this.url(this.path(type, opts.namespace, undefined, undefined, wire), {
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      limit: opts.limit,
      continue: opts.continue,
      resourceVersion: opts.resourceVersion,
      resourceVersionMatch: opts.resourceVersionMatch,
    });
    const apiVersion = apiVersionOf({ ...type, version: wire });
    const items: T[] = [];
    const onHead = (head: ListHead) => {
      const token = head.metadata?.continue;
      if (opts.onContinue && typeof token === 'string' && token) opts.onContinue(token);
    };
    const onItem = (item: unknown) => {
      let obj = item as T;
      obj.apiVersion ??= apiVersion;
      obj.kind ??= type.kind;
      obj = fromWire(type, wire, obj);
      if (opts.onItem) opts.onItem(obj);
      else items.push(obj);
    };
    let head: ListHead = {};
    const accept = this.acceptFor(type);
    // A start's first list (the pods') waits tens of milliseconds for its answer: the codec is
    // built meanwhile (in an immediate, so the request goes first), not once the answer has come.
    if (accept) setImmediate(() => prepareCodec({ withoutManagedFields: opts.withoutManagedFields }));
    const res = await this.send('GET', url, undefined, opts.signal, {
      throttle: !opts.continue,
      accept,
      consume: async (body, headers) => {
        const reader = isProtobuf(headers['content-type'])
          ? new ProtobufListReader(onHead, onItem, { dropManagedFields: opts.withoutManagedFields })
          : new ListBodyReader(onHead, onItem, { dropManagedFields: opts.withoutManagedFields });
        for await (const chunk of body) reader.push(chunk as Buffer);
        head = reader.end();
      },
    });
    if (res.status < 200 || res.status >= 300) throw StatusError.fromResponse(res.status, res.body);
    return { ...head, metadata: head.metadata ?? {}, items } as ObjectList<T>;
  }

  /** Follows continue tokens until the whole list is read; pageSize defaults to 500. */
  async listAll<T extends KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<ObjectList<T>> {
    const items: T[] = [];
    let cont: string | undefined;
    let last: ObjectList<T>;
    do {
      last = await this.list<T>(type, { ...opts, limit: opts.limit ?? 500, continue: cont });
      items.push(...last.items);
      cont = last.metadata.continue || undefined;
    } while (cont);
    return { ...last, metadata: { resourceVersion: last.metadata.resourceVersion }, items };
  }

  // --- writes ----------------------------------------------------------------------------------

  async create<T extends KubeObject>(type: ResourceType, obj: T, opts: Omit<WriteOptions, 'subresource'> = {}): Promise<T> {
    const ns = opts.namespace ?? obj.metadata.namespace;
    if (type.namespaced && !ns) throw new Error(`${type.resource}: namespace required`);
    const wire = await this.servedVersion(type);
    const body = jsonBody(toWire(type, wire, await this.servedOwners(withTypeMeta(type, obj))));
    return fromWire(
      type,
      wire,
      await this.json<T>(
        'POST',
        this.path(type, ns, undefined, undefined, wire),
        writeQuery(opts),
        body,
        opts.signal,
        this.acceptFor(type),
      ),
    );
  }

  /** PUT; obj.metadata.resourceVersion makes it a compare-and-swap (409 Conflict when stale). */
  async update<T extends KubeObject>(type: ResourceType, obj: T, opts: WriteOptions = {}): Promise<T> {
    const ns = opts.namespace ?? obj.metadata.namespace;
    const wire = await this.servedVersion(type);
    const put = (o: T, subresource?: string) =>
      this.json<T>(
        'PUT',
        this.path(type, ns, requireName(o), subresource, wire),
        writeQuery(opts),
        jsonBody(o),
        opts.signal,
        this.acceptFor(type),
      );
    const sent = toWire(type, wire, await this.servedOwners(withTypeMeta(type, obj)));
    let written = await put(sent, opts.subresource);
    // Converted down, status the older version cannot hold goes to annotations (a CRR's
    // PreRecreateGrace is v1alpha1's unready-acquired annotation), which the status subresource
    // leaves alone: they follow in a write of the object itself.
    if (wire !== type.version && opts.subresource === 'status' && !sameMarks(sent.metadata, written.metadata)) {
      const { labels, annotations } = sent.metadata;
      written = await put({ ...written, metadata: { ...written.metadata, labels, annotations } });
    }
    return fromWire(type, wire, written);
  }

  async patch<T extends KubeObject>(type: ResourceType, name: string, patch: unknown, opts: PatchOptions): Promise<T> {
    if (opts.patchType === PatchType.Apply && !opts.fieldManager) {
      throw new Error('server-side apply needs a fieldManager');
    }
    const query: Query = { fieldManager: opts.fieldManager, dryRun: opts.dryRun ? 'All' : undefined };
    if (opts.force !== undefined) {
      if (opts.patchType !== PatchType.Apply) throw new Error('force is only valid for server-side apply');
      query.force = opts.force;
    }
    const wire = await this.servedVersion(type);
    // The scale subresource is autoscaling/v1's Scale at every version of the resource.
    const converted = wire !== type.version && opts.subresource !== 'scale';
    if (converted && !patchesMetadataOnly(patch, opts.patchType)) return this.patchConverted<T>(type, name, patch, opts);
    const doc = typeof patch === 'string' ? patch : await this.servedOwners(patch);
    const body = { contentType: opts.patchType, data: typeof doc === 'string' ? doc : JSON.stringify(doc) };
    const path = this.path(type, opts.namespace, name, opts.subresource, wire);
    const patched = await this.json<T>('PATCH', path, query, body, opts.signal, this.acceptFor(type));
    return converted ? fromWire(type, wire, patched) : patched;
  }

  /**
   * A patch written for the version the code works with, to a resource served only at another: the
   * API server would apply it to the wrong field paths, so it is applied here to the object read and
   * converted. What reaches the API server is the merge patch, at the served version, between the
   * object read and the patched one, both converted down: only what the patch changed moves, so a
   * field it left alone stays as stored (Go's zero values OpenKruise stored: an empty
   * `scaleStrategy`), and a status write in between cannot fail it. A merge patch goes unguarded, as
   * it would at its own version (with the resourceVersion it names, a precondition); a JSON patch,
   * whose tests were taken against the object read, goes with that resourceVersion and is tried
   * again on a conflict. A subresource (status) is written back whole.
   */
  private async patchConverted<T extends KubeObject>(type: ResourceType, name: string, patch: unknown, opts: PatchOptions): Promise<T> {
    if (opts.patchType === PatchType.Apply || opts.patchType === PatchType.StrategicMerge) {
      throw new Error(
        `${opts.patchType} of ${type.resource}.${type.group} served at another version than ${type.version} is not supported`,
      );
    }
    const doc = typeof patch === 'string' ? (JSON.parse(patch) as unknown) : patch;
    const merge = opts.patchType === PatchType.Merge;
    const precondition = merge ? (doc as { metadata?: ObjectMeta } | null)?.metadata?.resourceVersion : undefined;
    const applied = (current: T): T =>
      merge
        ? (applyMergePatch(current, doc) as T)
        : (fjp.applyPatch(structuredClone(current), doc as Operation[], true, true).newDocument as T);
    const wire = await this.servedVersion(type);
    const path = this.path(type, opts.namespace, name, undefined, wire);
    const query: Query = { fieldManager: opts.fieldManager, dryRun: opts.dryRun ? 'All' : undefined };
    for (let attempt = 0; ; attempt++) {
      const current = await this.get<T>(type, name, { namespace: opts.namespace, signal: opts.signal });
      const next = applied(current);
      try {
        // A precondition is in `next` already: the merge patch named it.
        if (opts.subresource) {
          return await this.update<T>(type, next, {
            namespace: opts.namespace,
            subresource: opts.subresource,
            fieldManager: opts.fieldManager,
            dryRun: opts.dryRun,
            signal: opts.signal,
          });
        }
        const served = toWire(type, wire, await this.servedOwners(next));
        const diff = (createMergePatch(toWire(type, wire, current), served) ?? {}) as { metadata?: Partial<ObjectMeta> };
        const guard = precondition ?? (merge ? undefined : current.metadata.resourceVersion);
        if (guard) diff.metadata = { ...diff.metadata, resourceVersion: guard };
        const body = { contentType: PatchType.Merge, data: JSON.stringify(diff) };
        return fromWire(type, wire, await this.json<T>('PATCH', path, query, body, opts.signal, this.acceptFor(type)));
      } catch (err) {
        if (precondition || !isConflict(err) || attempt >= 4) throw err;
      }
    }
  }

  /** Server-side apply of a (partial) object, addressed by its own metadata. */
  async apply<T extends KubeObject>(
    type: ResourceType,
    obj: T,
    opts: { fieldManager: string; force?: boolean; dryRun?: boolean; subresource?: string; signal?: AbortSignal },
  ): Promise<T> {
    return this.patch<T>(type, requireName(obj), withTypeMeta(type, obj), {
      ...opts,
      namespace: obj.metadata.namespace,
      patchType: PatchType.Apply,
    });
  }

  /** Returns the object (still terminating: finalizers or grace period) or a success Status. */
  async delete<T extends KubeObject>(type: ResourceType, name: string, opts: DeleteOptions = {}): Promise<T | Status> {
    const wire = await this.servedVersion(type);
    const path = this.path(type, opts.namespace, name, undefined, wire);
    return fromWire(
      type,
      wire,
      await this.json<T | Status>('DELETE', path, {}, jsonBody(deleteBody(opts)), opts.signal, this.acceptFor(type)),
    );
  }

  async deleteCollection(type: ResourceType, opts: DeleteCollectionOptions = {}): Promise<Status | ObjectList<KubeObject>> {
    const query = { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector };
    const path = this.path(type, opts.namespace, undefined, undefined, await this.servedVersion(type));
    return this.json('DELETE', path, query, jsonBody(deleteBody(opts)), opts.signal);
  }

  /** policy/v1 Eviction; a PodDisruptionBudget refusal surfaces as a TooManyRequests StatusError. */
  async evict(namespace: string, name: string, opts: Omit<DeleteOptions, 'namespace'> = {}): Promise<Status> {
    const eviction = {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace },
      deleteOptions: deleteBody(opts),
    };
    return this.json<Status>(
      'POST',
      this.path(Pods, namespace, name, 'eviction'),
      {},
      jsonBody(eviction),
      opts.signal,
      this.acceptFor(Pods),
    );
  }

  // --- subresources ----------------------------------------------------------------------------

  async getStatus<T extends KubeObject>(type: ResourceType, name: string, opts: Omit<GetOptions, 'subresource'> = {}): Promise<T> {
    return this.get<T>(type, name, { ...opts, subresource: 'status' });
  }

  async updateStatus<T extends KubeObject>(type: ResourceType, obj: T, opts: Omit<WriteOptions, 'subresource'> = {}): Promise<T> {
    return this.update<T>(type, obj, { ...opts, subresource: 'status' });
  }

  async patchStatus<T extends KubeObject>(
    type: ResourceType,
    name: string,
    patch: unknown,
    opts: Omit<PatchOptions, 'subresource'>,
  ): Promise<T> {
    return this.patch<T>(type, name, patch, { ...opts, subresource: 'status' });
  }

  async getScale(type: ResourceType, name: string, opts: Omit<GetOptions, 'subresource'> = {}): Promise<Scale> {
    return this.get<Scale>(type, name, { ...opts, subresource: 'scale' });
  }

  async updateScale(type: ResourceType, name: string, scale: Scale, opts: Omit<WriteOptions, 'subresource'> = {}): Promise<Scale> {
    const ns = opts.namespace ?? scale.metadata.namespace;
    const body = { apiVersion: 'autoscaling/v1', kind: 'Scale', ...scale, metadata: { ...scale.metadata, name } };
    const path = this.path(type, ns, name, 'scale', await this.servedVersion(type));
    return this.json<Scale>('PUT', path, writeQuery(opts), jsonBody(body), opts.signal);
  }

  // --- watch -----------------------------------------------------------------------------------

  /**
   * Streams watch events. Not rate limited and without a body timeout: the server ends the stream
   * after timeoutSeconds, and callers abort through the signal or by leaving the loop. ERROR events
   * are yielded, not thrown; a non-2xx answer to the request itself throws a StatusError.
   */
  async *watch<T extends KubeObject>(type: ResourceType, opts: WatchOptions = {}): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const wire = await this.servedVersion(type);
    const event = (line: string): WatchEvent<T> => {
      const ev = parseWatchEvent<T>(line);
      if (wire !== type.version && ev.type !== 'ERROR' && ev.type !== 'BOOKMARK') ev.object = fromWire(type, wire, ev.object);
      if (opts.withoutManagedFields && ev.type !== 'ERROR') withoutManagedFields(ev.object);
      return ev;
    };
    const url = this.url(this.path(type, opts.namespace, undefined, undefined, wire), {
      watch: 'true',
      resourceVersion: opts.resourceVersion,
      allowWatchBookmarks: opts.allowWatchBookmarks,
      timeoutSeconds: opts.timeoutSeconds,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
    });
    const res = await this.exchange('GET', url, await this.headers(undefined, this.acceptFor(type)), undefined, opts.signal, {
      watch: true,
    });
    if (res.status < 200 || res.status >= 300) {
      throw StatusError.fromResponse(res.status, await readError(res));
    }
    if (isProtobuf(res.headers['content-type'])) {
      yield* this.protobufEvents<T>(res, type, wire, opts);
      return;
    }
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of res.body) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        let start = 0;
        let nl: number;
        while ((nl = buffered.indexOf('\n', start)) >= 0) {
          const line = buffered.slice(start, nl).trim();
          start = nl + 1;
          if (line) yield event(line);
        }
        buffered = buffered.slice(start);
      }
      buffered += decoder.decode();
      // The server writes one JSON document per line; a final event without its newline is still whole.
      if (buffered.trim()) yield event(buffered.trim());
    } finally {
      if (!res.body.destroyed) res.body.destroy();
    }
  }

  /** The events of a protobuf watch stream (pods and nodes are served at their own version: no conversion). */
  private async *protobufEvents<T extends KubeObject>(
    res: ApiResponse,
    type: ResourceType,
    wire: string,
    opts: WatchOptions,
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const decoder = new ProtobufWatchDecoder({ withoutManagedFields: opts.withoutManagedFields });
    try {
      for await (const chunk of res.body) {
        for (const ev of decoder.push(chunk as Buffer)) {
          if (!watchEventTypes.includes(ev.type as WatchEventType)) {
            throw new WatchDecodeError(`not a watch event: type ${JSON.stringify(ev.type)}`);
          }
          yield ev as WatchEvent<T>;
        }
      }
      if (decoder.pending() > 0) throw new WatchDecodeError(`the watch of ${type.resource} (${wire}) ended inside an event`);
    } finally {
      if (!res.body.destroyed) res.body.destroy();
    }
  }

  /**
   * Lists, watches and writes of pods and nodes ask for protobuf (a write's answer, a whole pod,
   * costs the API server less to encode and the manager less to read; its callers keep only its
   * metadata). A single GET stays JSON: its object is returned whole, managedFields included.
   */
  private acceptFor(type: ResourceType): string | undefined {
    return type.group === '' && readsAsProtobuf(type.kind) ? PROTOBUF_ACCEPT : undefined;
  }

  // --- transport -------------------------------------------------------------------------------

  /** `obj` (an object or a merge patch) with its Kruise owner references at the versions the cluster serves. */
  private async servedOwners<T>(obj: T): Promise<T> {
    const meta = (obj as { metadata?: ObjectMeta } | null)?.metadata;
    const refs = meta?.ownerReferences;
    if (!Array.isArray(refs) || refs.length === 0) return obj;
    const served = await this.wireVersions.servedOwnerReferences(refs, this.discover);
    return served === refs ? obj : { ...obj, metadata: { ...meta, ownerReferences: served } };
  }

  private readonly discover = async (group: string, version: string) => (await this.discoverResources(group, version))?.resources;

  /** The version the cluster serves `type` at (its own unless only another version of its kind is served). */
  servedVersion(type: ResourceType): Promise<string> {
    return this.wireVersions.versionOf(type, this.discover);
  }

  private path(type: ResourceType, namespace: string | undefined, name?: string, subresource?: string, version = type.version): string {
    const parts: string[] = type.group ? ['apis', type.group, version] : ['api', version];
    if (type.namespaced && namespace) parts.push('namespaces', namespace);
    else if (type.namespaced && name !== undefined) throw new Error(`${type.resource} ${name}: namespace required`);
    parts.push(type.resource);
    if (name !== undefined) {
      if (!name) throw new Error(`${type.resource}: empty name`);
      parts.push(name);
    }
    if (subresource) parts.push(subresource);
    return parts.map(encodeURIComponent).join('/');
  }

  private url(path: string, query: Query): URL {
    const url = new URL(this.base.href);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path}`;
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    }
    return url;
  }

  private async headers(contentType?: string, accept = 'application/json'): Promise<Record<string, string>> {
    const headers: Record<string, string> = {
      accept,
      'user-agent': this.userAgent,
      ...(this.auth ? await this.auth() : {}),
    };
    if (contentType) headers['content-type'] = contentType;
    return headers;
  }

  /**
   * One request on the transport. The timeout covers the wait for headers and, for a non-watch
   * request, every pause in its body; a watch's body may stay quiet for as long as the server keeps it open.
   */
  private exchange(
    method: HttpMethod,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
    opts: { watch?: boolean } = {},
  ): Promise<ApiResponse> {
    return this.transport.exchange({ method, url, headers, body, signal, watch: opts.watch, timeoutMs: this.requestTimeoutMs });
  }

  /**
   * A request answered with one object. With `accept` (a write of pods or nodes) the answer may come
   * as protobuf; either way it is read as the informers read pods: without metadata.managedFields.
   */
  private async json<T>(
    method: HttpMethod,
    path: string,
    query: Query,
    body: RequestBody | undefined,
    signal: AbortSignal | undefined,
    accept?: string,
  ): Promise<T> {
    let answer: unknown;
    const read: ReadOptions = accept
      ? {
          accept,
          consume: async (stream, headers) => {
            const bytes = await readBytes(stream);
            answer = isProtobuf(headers['content-type'])
              ? decodeObject(bytes, { withoutManagedFields: true })
              : withoutManagedFields(JSON.parse(bytes.toString('utf8')) as KubeObject);
          },
        }
      : {};
    const res = await this.send(method, this.url(path, query), body, signal, read);
    if (res.status < 200 || res.status >= 300) throw StatusError.fromResponse(res.status, res.body);
    return (accept ? answer : JSON.parse(res.body)) as T;
  }

  private async send(
    method: HttpMethod,
    url: URL,
    body: RequestBody | undefined,
    signal: AbortSignal | undefined,
    read: ReadOptions = {},
  ): Promise<RawResponse> {
    for (let attempt = 0; ; attempt++) {
      // Reservation semantics: every request takes a token now and waits off any debt.
      const wait = read.throttle === false ? 0 : (this.limiter?.when() ?? 0);
      if (wait > 0) await this.clock.sleep(wait, signal);
      if (method !== 'GET') this.options.writeFence?.();
      const res = await this.exchange(method, url, await this.headers(body?.contentType, read.accept), body?.data, signal);
      const status = res.status;
      let text = '';
      if (status >= 200 && status < 300 && read.consume) await read.consume(res.body, res.headers);
      else text = await readError(res);
      const retryAfter = retryAfterMs(status, res.headers['retry-after']);
      if (retryAfter === undefined || attempt >= this.maxRetries) return { status, body: text };
      await this.clock.sleep(retryAfter, signal);
    }
  }
}

interface RequestBody {
  contentType: string;
  data: string;
}

interface ReadOptions {
  /** false: not charged to the rate limiter. */
  throttle?: boolean;
  /** The Accept header; default application/json. */
  accept?: string;
  /** Reads a 2xx answer's body as it arrives (the response's body is then ''). */
  consume?: (body: Readable, headers: ApiResponse['headers']) => Promise<void>;
}

async function readBytes(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

async function readText(body: Readable): Promise<string> {
  return (await readBytes(body)).toString('utf8');
}

/** A response's body as text; a protobuf one (a metav1.Status, from a request that accepted protobuf) as its JSON. */
async function readError(res: ApiResponse): Promise<string> {
  if (!isProtobuf(res.headers['content-type'])) return readText(res.body);
  const bytes = await readBytes(res.body);
  try {
    return statusJson(bytes);
  } catch {
    return '';
  }
}

function jsonBody(v: unknown): RequestBody {
  return { contentType: 'application/json', data: JSON.stringify(v) };
}

function writeQuery(opts: WriteOptions): Query {
  return { fieldManager: opts.fieldManager, dryRun: opts.dryRun ? 'All' : undefined };
}

function deleteBody(opts: DeleteOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
  if (opts.preconditions) body.preconditions = opts.preconditions;
  if (opts.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
  if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
  if (opts.dryRun) body.dryRun = ['All'];
  return body;
}

function withTypeMeta<T extends KubeObject>(type: ResourceType, obj: T): T {
  return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(type), kind: obj.kind ?? type.kind };
}

/** Whether two objects carry the same labels and annotations. */
function sameMarks(a: ObjectMeta, b: ObjectMeta): boolean {
  return isDeepStrictEqual(a.labels ?? {}, b.labels ?? {}) && isDeepStrictEqual(a.annotations ?? {}, b.annotations ?? {});
}

function requireName(obj: KubeObject): string {
  if (!obj.metadata.name) throw new Error('object has no metadata.name');
  return obj.metadata.name;
}

/**
 * Whether a merge or JSON patch touches `metadata` alone (labels and annotations key by key,
 * finalizers, owners, a resourceVersion precondition): the same at every version, so it goes to the
 * API server as it is, not through patchConverted's read, convert and write back. That write sends
 * the whole object again as conversion gives it back, which drops Go's zero values OpenKruise stored
 * (an empty `scaleStrategy`), changing the spec and bumping its generation. A patch replacing or
 * removing the whole label or annotation map is converted: the keys only the served version has
 * (CloneSet's, CRR's) must survive it.
 */
function patchesMetadataOnly(patch: unknown, patchType: PatchType): boolean {
  let doc: unknown = patch;
  if (typeof patch === 'string') {
    try {
      doc = JSON.parse(patch);
    } catch {
      return false;
    }
  }
  if (patchType === PatchType.Merge) {
    if (!isJsonObject(doc) || !Object.keys(doc).every((k) => k === 'metadata') || !isJsonObject(doc.metadata)) return false;
    const { labels, annotations } = doc.metadata;
    return (labels === undefined || isJsonObject(labels)) && (annotations === undefined || isJsonObject(annotations));
  }
  if (patchType === PatchType.JSON) {
    return (
      Array.isArray(doc) &&
      doc.every(
        (op: { path?: unknown; from?: unknown }) => isMetadataPointer(op.path) && (op.from === undefined || isMetadataPointer(op.from)),
      )
    );
  }
  return false;
}

const isMetadataPointer = (p: unknown) =>
  typeof p === 'string' && p.startsWith('/metadata/') && p !== '/metadata/labels' && p !== '/metadata/annotations';

/** client-go's checkWait: a 429 or any 5xx that says when to come back is sent again then, whatever its method. */
function retryAfterMs(status: number, header: string | string[] | undefined): number | undefined {
  if ((status !== 429 && status < 500) || header === undefined) return undefined;
  const seconds = Number(Array.isArray(header) ? header[0] : header);
  if (!Number.isFinite(seconds) || seconds < 0) return undefined;
  return Math.min(seconds, 60) * 1000;
}

function parseWatchEvent<T extends KubeObject>(line: string): WatchEvent<T> {
  let ev: unknown;
  try {
    ev = JSON.parse(line);
  } catch {
    throw new WatchDecodeError(`undecodable watch event: ${line.slice(0, 200)}`);
  }
  const e = ev as { type?: unknown; object?: unknown };
  if (
    typeof e !== 'object' ||
    e === null ||
    !watchEventTypes.includes(e.type as WatchEventType) ||
    typeof e.object !== 'object' ||
    e.object === null
  ) {
    throw new WatchDecodeError(`not a watch event: ${line.slice(0, 200)}`);
  }
  return ev as WatchEvent<T>;
}

// ---------------------------------------------------------------------------------------------
// Kubeconfig

export function fromKubeconfigFile(path: string, opts: Partial<KubeClientOptions> = {}): KubeClient {
  return new KubeClient({ ...accessFromKubeconfigFile(path), ...opts });
}

/** $KUBECONFIG, then ~/.kube/config, then the in-cluster service account. */
export function fromDefault(opts: Partial<KubeClientOptions> = {}): KubeClient {
  return new KubeClient({ ...accessFromDefault(), ...opts });
}
