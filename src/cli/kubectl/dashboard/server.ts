// `kubectl kruise dashboard`'s server: a local, read-only web page over the user's kubeconfig. One
// informer per kind (the Kruise workloads, pods, ControllerRevisions, nodes, events) holds what the
// page shows; the JSON endpoints read those caches (model.ts) and a server-sent event stream tells
// the page when a watch delivered a change, so it refreshes live. The rollout plan of a proposed
// change runs the controllers' own planners as `rollout plan` does (plan-rollout.ts). Only GET is
// served: nothing on the page can change the cluster.
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { KubeObject, Node, Pod } from '../../../apis/core-objects.ts';
import { repoRoot } from '../../../cluster/binaries.ts';
import { SharedInformerFactory, type Informer } from '../../../runtime/informer-factory.ts';
import {
  AdvancedDaemonSets,
  AdvancedStatefulSets,
  BroadcastJobs,
  CloneSets,
  ControllerRevisions,
  Events,
  Nodes,
  Pods,
  SidecarSets,
  UnitedDeployments,
  type ResourceType,
} from '../../../runtime/resources.ts';
import { matchesLabelSelector, type LabelSelectorLike } from '../../../util/labelselector.ts';
import type { ControllerRevision } from '../../../util/revision-data.ts';
import { gatherPlanState } from '../plan-command.ts';
import { forecastRollout, isPlanned, planRound, renderForecast, type PlanState } from '../plan-rollout.ts';
import { intOrPercent, renderReport, type PlanOverrides } from '../plan.ts';
import { CliError, describeError, type Session } from '../session.ts';
import {
  DASHBOARD_KINDS,
  eventRows,
  groupByRevision,
  summarize,
  type DashboardKind,
  type EventObject,
  type WorkloadDetail,
  type WorkloadSummary,
} from './model.ts';
import { DASHBOARD_HTML } from './page.ts';

const TYPES: Record<DashboardKind, ResourceType> = {
  CloneSet: CloneSets,
  StatefulSet: AdvancedStatefulSets,
  DaemonSet: AdvancedDaemonSets,
  UnitedDeployment: UnitedDeployments,
  SidecarSet: SidecarSets,
  BroadcastJob: BroadcastJobs,
};

/** The page's script: ui/app.ts with preact and htm, bundled by hack/build.sh (no network at run time). */
export const DASHBOARD_SCRIPT = path.join(repoRoot, 'dist/dashboard/app.js');

export interface DashboardOptions {
  port: number;
  address: string;
  /** Only this namespace's workloads; all namespaces when undefined. */
  namespace?: string;
  /** The manager's --feature-gates, for the plans (as `rollout plan --feature-gates`). */
  featureGates?: string;
  /** How long to wait for the watches' initial lists. */
  syncTimeoutMs?: number;
}

export interface Dashboard {
  url: string;
  close(): Promise<void>;
}

/** A change a watch delivered, throttled to at most one message per interval per page. */
const STREAM_INTERVAL_MS = 250;
const KEEPALIVE_MS = 15_000;

export async function startDashboard(session: Session, o: DashboardOptions): Promise<Dashboard> {
  const script = await readFile(DASHBOARD_SCRIPT, 'utf8').catch(() => {
    throw new CliError(`the dashboard's page script ${DASHBOARD_SCRIPT} is missing: run hack/build.sh`);
  });
  const factory = new SharedInformerFactory(session.client);
  const selector = { namespace: o.namespace };
  const workloads = new Map<DashboardKind, Informer<KubeObject>>(
    DASHBOARD_KINDS.map((k) => [k, factory.informerFor<KubeObject>(TYPES[k], TYPES[k].namespaced ? selector : {})]),
  );
  const pods = factory.informerFor<Pod>(Pods, selector);
  const revisions = factory.informerFor<ControllerRevision & KubeObject>(ControllerRevisions, selector);
  const nodes = factory.informerFor<Node>(Nodes);
  const events = factory.informerFor<EventObject>(Events, selector);

  // Every open page's stream; a watch event marks its kind changed, sent at the next tick.
  const streams = new Set<http.ServerResponse>();
  const changed = new Set<string>();
  let flush: NodeJS.Timeout | undefined;
  const touch = (kind: string) => () => {
    changed.add(kind);
    flush ??= setTimeout(() => {
      flush = undefined;
      const data = `data: ${JSON.stringify({ changed: [...changed] })}\n\n`;
      changed.clear();
      for (const res of streams) res.write(data);
    }, STREAM_INTERVAL_MS);
  };
  for (const [kind, informer] of workloads) informer.addEventHandler({ onAdd: touch(kind), onUpdate: touch(kind), onDelete: touch(kind) });
  for (const [kind, informer] of [
    ['Pod', pods],
    ['Event', events],
  ] as const) {
    informer.addEventHandler({ onAdd: touch(kind), onUpdate: touch(kind), onDelete: touch(kind) });
  }

  const abort = new AbortController();
  factory.start(abort.signal);
  try {
    await factory.waitForCacheSync(abort.signal, o.syncTimeoutMs ?? 60_000);
  } catch (err) {
    abort.abort();
    throw new CliError(`the dashboard's watches did not sync: ${describeError(err)}`);
  }

  const summaries = (): WorkloadSummary[] =>
    DASHBOARD_KINDS.flatMap((k) =>
      workloads
        .get(k)!
        .lister.list()
        .map((obj) => summarize(k, TYPES[k], obj)),
    ).sort((a, b) => (a.namespace + '/' + a.name < b.namespace + '/' + b.name ? -1 : 1));

  const find = (kind: string, namespace: string, name: string) => {
    if (!(DASHBOARD_KINDS as readonly string[]).includes(kind)) throw new HttpError(404, `unknown kind ${kind}`);
    const k = kind as DashboardKind;
    const obj = TYPES[k].namespaced ? workloads.get(k)!.lister.get(namespace, name) : workloads.get(k)!.lister.get(name);
    if (!obj) throw new HttpError(404, `${kind} ${namespace}/${name} not found`);
    return { kind: k, obj };
  };

  /** The workload's pods: those it controls; a SidecarSet's and a UnitedDeployment's, by selector. */
  const podsOf = (kind: DashboardKind, obj: KubeObject): Pod[] => {
    const uid = obj.metadata.uid;
    const sel = (obj as { spec?: { selector?: LabelSelectorLike } }).spec?.selector;
    const bySelector = kind === 'SidecarSet' || kind === 'UnitedDeployment';
    return pods.lister
      .list(kind === 'SidecarSet' ? undefined : obj.metadata.namespace)
      .filter((p) =>
        bySelector
          ? matchesLabelSelector(sel, p.metadata.labels ?? {})
          : (p.metadata.ownerReferences?.some((r) => r.controller && r.uid === uid) ?? false),
      );
  };

  const detail = (kind: string, namespace: string, name: string): WorkloadDetail => {
    const found = find(kind, namespace, name);
    const summary = summarize(found.kind, TYPES[found.kind], found.obj);
    const owned = podsOf(found.kind, found.obj);
    const out: WorkloadDetail = {
      summary,
      revisions: groupByRevision(owned, summary.updateRevision),
      events: eventRows(events.lister.list(), new Set([found.obj.metadata.uid ?? '', ...owned.map((p) => p.metadata.uid ?? '')])),
    };
    if (isPlanned(found.kind)) {
      const uid = found.obj.metadata.uid;
      const state: PlanState = {
        kind: found.kind,
        workload: found.obj,
        pods: owned,
        revisions: revisions.lister
          .list(found.obj.metadata.namespace)
          .filter((r) => r.metadata.ownerReferences?.some((x) => x.controller && x.uid === uid)),
        pvcs: [],
        nodes: found.kind === 'DaemonSet' ? nodes.lister.list() : [],
      };
      // What the controller's planner counts now. Pure planners only read their input, as the
      // controllers hand them the same shared cache objects.
      const { report } = planRound(state, Date.now(), o.featureGates);
      out.partition = report.partition;
      out.budget = report.budget;
    }
    return out;
  };

  const plan = async (kind: string, namespace: string, name: string, q: URLSearchParams) => {
    const found = find(kind, namespace, name);
    if (!isPlanned(found.kind)) throw new HttpError(400, `rollout plan supports CloneSet, Advanced StatefulSet and Advanced DaemonSet`);
    const overrides: PlanOverrides = {
      images: q.getAll('image').filter(Boolean),
      partition: q.get('partition') ? intOrPercent(q.get('partition')!) : undefined,
      replicas: q.get('replicas') ? Number(q.get('replicas')) : undefined,
    };
    const state = await gatherPlanState(session, found.kind, found.obj, overrides);
    const now = Date.now();
    const { report } = planRound(state, now, o.featureGates);
    const rollout = forecastRollout(state, now, o.featureGates);
    return { report, rollout, text: `${renderReport(report)}\n${renderForecast(rollout, report)}` };
  };

  const server = http.createServer((req, res) => {
    void route(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : err instanceof CliError ? 400 : 500;
      sendJSON(res, status, { error: err instanceof Error ? err.message : String(err) });
    });
  });

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'GET') throw new HttpError(405, 'the dashboard is read-only');
    const url = new URL(req.url ?? '/', 'http://dashboard');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    if (url.pathname === '/') return send(res, 200, 'text/html; charset=utf-8', DASHBOARD_HTML);
    if (url.pathname === '/app.js') return send(res, 200, 'text/javascript; charset=utf-8', script);
    if (url.pathname === '/api/workloads') return sendJSON(res, 200, summaries());
    if (parts[0] === 'api' && parts[1] === 'workloads' && parts.length === 5)
      return sendJSON(res, 200, detail(parts[2], parts[3], parts[4]));
    if (parts[0] === 'api' && parts[1] === 'plan' && parts.length === 5)
      return sendJSON(res, 200, await plan(parts[2], parts[3], parts[4], url.searchParams));
    if (url.pathname === '/api/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.write('retry: 2000\n\n');
      streams.add(res);
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
      req.on('close', () => {
        clearInterval(keepalive);
        streams.delete(res);
      });
      return;
    }
    throw new HttpError(404, `no page ${url.pathname}`);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.address, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = o.address.includes(':') ? `[${o.address}]` : o.address;
  return {
    url: `http://${host}:${port}/`,
    close: async () => {
      clearTimeout(flush);
      for (const res of streams) res.end();
      streams.clear();
      abort.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await factory.whenStopped();
    },
  };
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

const sendJSON = (res: http.ServerResponse, status: number, body: unknown) =>
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
