// A stable webhook endpoint in url mode. The API server calls one URL per webhook; pointing it at
// one replica's port makes that replica's death an outage of every Kruise write and v1alpha1 read
// until another replica rewrites the configuration. On the local cluster a webhook proxy (the
// kube-proxy role, src/cluster/webhook-proxy.ts) owns one port and forwards each review to a
// healthy replica, so the configuration names the proxy and never changes on fail-over.
// The proxy announces itself in a ConfigMap; every replica, leader or not, registers itself as a
// backend with a Lease it renews, so the proxy learns the replicas' ports and forgets dead ones.

import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ConfigMap, Lease } from '../../apis/core-objects.ts';
import { formatMicroTime } from '../leaderelection.ts';
import type { KubeClient } from '../client.ts';
import { isAlreadyExists, isConflict, isForbidden, isNotFound } from '../errors.ts';
import { ConfigMaps, Leases, MutatingWebhookConfigurations, ValidatingWebhookConfigurations } from '../resources.ts';
import { logger as rootLogger, type Logger } from '../log.ts';
import { MUTATING_WEBHOOK_CONFIGURATION_NAME, VALIDATING_WEBHOOK_CONFIGURATION_NAME } from './configuration.ts';

/** Where the webhook proxy announces the address it serves on (`data.address`, host:port). */
export const WEBHOOK_PROXY_CONFIGMAP = { namespace: 'kube-public', name: 'kruise-ts-webhook-proxy' } as const;
/** Label of the backend Leases the proxy discovers replicas by. */
export const WEBHOOK_BACKEND_LABEL = 'webhook.kruise-ts.io/backend';
/** Annotation of a backend Lease: the replica's webhook server, host:port. */
export const WEBHOOK_BACKEND_ADDRESS = 'webhook.kruise-ts.io/address';
/** A backend Lease not renewed for this long is ignored (a frozen or dead replica). */
export const WEBHOOK_BACKEND_LEASE_SECONDS = 6;
const RENEW_MS = 2_000;

export interface HostPort {
  host: string;
  port: number;
}

export function parseHostPort(address: string | undefined): HostPort | undefined {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address ?? '');
  return m ? { host: m[1]!, port: Number(m[2]) } : undefined;
}

export function formatHostPort({ host, port }: HostPort): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The webhook proxy's address when the cluster runs one, else undefined. */
export async function findWebhookProxy(client: KubeClient): Promise<HostPort | undefined> {
  try {
    const cm = await client.get<ConfigMap>(ConfigMaps, WEBHOOK_PROXY_CONFIGMAP.name, { namespace: WEBHOOK_PROXY_CONFIGMAP.namespace });
    return parseHostPort(cm.data?.address);
  } catch (err) {
    // No proxy, or a cluster whose RBAC does not let the manager look (then it has none either).
    if (isNotFound(err) || isForbidden(err)) return undefined;
    throw err;
  }
}

/** The backend Lease's name for a replica (identities may hold characters names may not). */
export function backendLeaseName(identity: string): string {
  return `kruise-webhook-backend-${createHash('sha256').update(identity).digest('hex').slice(0, 12)}`;
}

/** Whether a backend Lease was renewed within its duration. */
export function backendLeaseFresh(lease: Lease, now = Date.now()): boolean {
  const renewed = Date.parse(lease.spec?.renewTime ?? '');
  return Number.isFinite(renewed) && renewed + (lease.spec?.leaseDurationSeconds ?? 0) * 1_000 > now;
}

/**
 * Registers this replica's webhook server as a proxy backend until stop(): creates and renews its
 * Lease every 2 s; stop() deletes it so the proxy stops sending reviews before the server closes.
 */
export function registerWebhookBackend(opts: {
  client: KubeClient;
  namespace: string;
  identity: string;
  address: HostPort;
  logger?: Logger;
}): { stop(): Promise<void> } {
  const { client, namespace, identity } = opts;
  const log = (opts.logger ?? rootLogger).child({ component: 'webhook-backend' });
  const name = backendLeaseName(identity);
  const abort = new AbortController();
  /** The Lease as the last write returned it: a renewal is then one PUT, not a GET and a PUT. */
  let last: Lease | undefined;
  const renew = async () => {
    const spec = { holderIdentity: identity, leaseDurationSeconds: WEBHOOK_BACKEND_LEASE_SECONDS, renewTime: formatMicroTime(Date.now()) };
    const metadata = {
      name,
      namespace,
      labels: { [WEBHOOK_BACKEND_LABEL]: 'true' },
      annotations: { [WEBHOOK_BACKEND_ADDRESS]: formatHostPort(opts.address) },
    };
    const update = (current: Lease) =>
      client.update<Lease>(
        Leases,
        { ...current, metadata: { ...current.metadata, ...metadata, managedFields: undefined }, spec: { ...current.spec, ...spec } },
        { signal: abort.signal },
      );
    if (last) {
      try {
        last = await update(last);
        return;
      } catch (err) {
        last = undefined;
        // Someone else wrote it (or removed it): read it again below.
        if (!isConflict(err) && !isNotFound(err)) throw err;
      }
    }
    try {
      last = await update(await client.get<Lease>(Leases, name, { namespace, signal: abort.signal }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      last = await client
        .create<Lease>(Leases, { metadata, spec: { ...spec, acquireTime: spec.renewTime } }, { signal: abort.signal })
        .catch((e: unknown) => {
          if (!isAlreadyExists(e)) throw e;
          return undefined;
        });
    }
  };
  const loop = (async () => {
    let failing = false;
    while (!abort.signal.aborted) {
      try {
        await renew();
        if (failing) log.info({ lease: name }, 'webhook backend registration renewed again');
        failing = false;
      } catch (err) {
        if (abort.signal.aborted) break;
        if (!failing) log.warn({ err, lease: name }, 'could not renew the webhook backend registration');
        failing = true;
      }
      await sleep(RENEW_MS, undefined, { signal: abort.signal }).catch(() => undefined);
    }
  })();
  log.info({ lease: `${namespace}/${name}`, address: formatHostPort(opts.address) }, 'registered as a webhook proxy backend');
  return {
    async stop() {
      abort.abort();
      await loop;
      await client.delete(Leases, name, { namespace }).catch((err: unknown) => {
        if (!isNotFound(err)) log.warn({ err, lease: name }, 'could not remove the webhook backend registration');
      });
    },
  };
}

/**
 * For a manager stopped on purpose on a cluster it no longer serves (`kruise start` on the local
 * cluster, left running): removes the two webhook configurations unless another replica still
 * serves (a fresh backend Lease in `namespace`). Left behind, their failurePolicy Fail would refuse
 * every pod creation outside the excluded namespaces (the pod webhook) and every Kruise write, with
 * no manager to answer. The next manager creates them again before it serves. Returns whether it
 * removed them.
 */
export async function releaseWebhookConfigurations(client: KubeClient, namespace: string, logger: Logger = rootLogger): Promise<boolean> {
  const backends = await client.list<Lease>(Leases, { namespace, labelSelector: WEBHOOK_BACKEND_LABEL });
  const serving = backends.items.filter((l) => backendLeaseFresh(l));
  if (serving.length > 0) {
    logger.info({ replicas: serving.map((l) => l.spec?.holderIdentity) }, 'webhook configurations kept: another manager serves them');
    return false;
  }
  for (const [type, name] of [
    [MutatingWebhookConfigurations, MUTATING_WEBHOOK_CONFIGURATION_NAME],
    [ValidatingWebhookConfigurations, VALIDATING_WEBHOOK_CONFIGURATION_NAME],
  ] as const) {
    await client.delete(type, name).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }
  logger.info('webhook configurations removed: no manager serves them any more');
  return true;
}
