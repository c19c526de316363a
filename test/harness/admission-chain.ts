// The admission chain an API server would run for an object, replayed directly against a
// manager's webhook server: the cluster's kruise webhook configurations say which webhook paths
// serve a group/version/resource and operation; the mutating ones run first, in order, each on the
// previous one's patched object, then every validating one on the defaulted object.
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:https';
import fjp from 'fast-json-patch';
import { kubectl, type ClusterState } from '../../src/cluster/local-cluster.ts';

interface Rule {
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  operations: string[];
}
interface Webhook {
  name: string;
  url: string;
  rules: Rule[];
}

export type Operation = 'CREATE' | 'UPDATE';

export interface Target {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
}

export interface Verdict {
  allowed: boolean;
  /** The denying webhook's message (status.message), or why the chain could not run. */
  message: string;
  code?: number;
  /** The object after the mutating webhooks (what validation saw). */
  defaulted: unknown;
}

export class AdmissionChain {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 4, rejectUnauthorized: false });

  private constructor(
    readonly mutating: Webhook[],
    readonly validating: Webhook[],
  ) {}

  /** Reads the kruise webhook configurations of a cluster whose manager already registered itself. */
  static async of(cluster: ClusterState): Promise<AdmissionChain> {
    const read = async (kind: string, name: string) => {
      const cfg = JSON.parse(await kubectl(cluster, ['get', kind, name, '-o', 'json'])) as {
        webhooks?: Array<{ name: string; clientConfig: { url?: string }; rules?: Rule[] }>;
      };
      return (cfg.webhooks ?? [])
        .filter((w) => w.clientConfig.url)
        .map((w) => ({ name: w.name, url: w.clientConfig.url!, rules: w.rules ?? [] }));
    };
    return new AdmissionChain(
      await read('MutatingWebhookConfiguration', 'kruise-mutating-webhook-configuration'),
      await read('ValidatingWebhookConfiguration', 'kruise-validating-webhook-configuration'),
    );
  }

  /** Whether any webhook of this chain serves the target (a version the manager does not serve has none). */
  serves(t: Target, op: Operation): boolean {
    return [...this.mutating, ...this.validating].some((w) => matches(w, t, op));
  }

  async admit(t: Target, op: Operation, object: unknown, oldObject?: unknown): Promise<Verdict> {
    let current = structuredClone(object) as Record<string, unknown>;
    for (const hook of this.mutating.filter((w) => matches(w, t, op))) {
      const res = await this.review(hook, t, op, current, oldObject);
      if (!res.allowed) return { allowed: false, message: res.status?.message ?? '', code: res.status?.code, defaulted: current };
      if (res.patch) {
        const ops = JSON.parse(Buffer.from(res.patch, 'base64').toString('utf8')) as fjp.Operation[];
        current = fjp.applyPatch(current, ops, false, false).newDocument;
      }
    }
    for (const hook of this.validating.filter((w) => matches(w, t, op))) {
      const res = await this.review(hook, t, op, current, oldObject);
      if (!res.allowed) return { allowed: false, message: res.status?.message ?? '', code: res.status?.code, defaulted: current };
    }
    return { allowed: true, message: '', defaulted: current };
  }

  close(): void {
    this.agent.destroy();
  }

  private review(
    hook: Webhook,
    t: Target,
    op: Operation,
    object: unknown,
    oldObject: unknown,
  ): Promise<{ allowed: boolean; patch?: string; status?: { message?: string; code?: number } }> {
    const meta = (object as { metadata?: { name?: string; namespace?: string } }).metadata ?? {};
    const gvk = { group: t.group, version: t.version, kind: t.kind };
    const gvr = { group: t.group, version: t.version, resource: t.resource };
    const body = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: randomUUID(),
        kind: gvk,
        resource: gvr,
        requestKind: gvk,
        requestResource: gvr,
        name: meta.name ?? '',
        ...(t.namespaced ? { namespace: meta.namespace ?? 'default' } : {}),
        operation: op,
        userInfo: { username: 'kruise-ts-admin', groups: ['system:masters', 'system:authenticated'] },
        object,
        ...(op === 'UPDATE' ? { oldObject } : {}),
        dryRun: false,
        options: { apiVersion: 'meta.k8s.io/v1', kind: op === 'CREATE' ? 'CreateOptions' : 'UpdateOptions' },
      },
    });
    const url = new URL(hook.url);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          timeout: 10_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              const review = JSON.parse(text) as {
                response?: { allowed: boolean; patch?: string; status?: { message?: string; code?: number } };
              };
              if (!review.response) throw new Error('no response');
              resolve(review.response);
            } catch {
              reject(
                new Error(`${hook.name} (${hook.url}) answered HTTP ${res.statusCode} with no AdmissionReview: ${text.slice(0, 300)}`),
              );
            }
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${hook.name} (${hook.url}) did not answer within 10s`)));
      req.on('error', reject);
      req.end(body);
    });
  }
}

function matches(w: Webhook, t: Target, op: Operation): boolean {
  const has = (list: string[], v: string) => list.includes('*') || list.includes(v);
  return w.rules.some(
    (r) => has(r.apiGroups, t.group) && has(r.apiVersions, t.version) && has(r.resources, t.resource) && has(r.operations, op),
  );
}
