// `kubectl kruise get TYPE [NAME...]`: workloads with their rollout columns, across namespaces
// with -A; -o json|yaml|name|wide as kubectl.
import { Command } from 'commander';
import type { KubeObject } from '../../apis/core-objects.ts';
import { withSession } from './program.ts';
import type { ResourceType } from '../../runtime/resources.ts';
import {
  CliError,
  cliIO,
  describeError,
  getTarget,
  KruiseRollouts,
  ns,
  parseOutput,
  pluralName,
  printData,
  asServed,
  resolveType,
  servedType,
  table,
  typeName,
  write,
  type Session,
} from './session.ts';
import type { Workload } from './status.ts';

type Listed = KubeObject & Workload & { spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } } };

export function age(created: string | undefined, nowMs: number): string {
  if (!created) return '<unknown>';
  const s = Math.max(0, Math.floor((nowMs - Date.parse(created)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

export function rows(items: readonly Listed[], o: { allNamespaces: boolean; wide: boolean; nowMs: number }): string[][] {
  const header = [
    ...(o.allNamespaces ? ['NAMESPACE'] : []),
    'NAME',
    'DESIRED',
    'UPDATED',
    'READY',
    'AVAILABLE',
    'AGE',
    ...(o.wide ? ['UPDATE-REVISION', 'IMAGES', 'PAUSED'] : []),
  ];
  return [
    header,
    ...items.map((w) => {
      const s = w.status ?? {};
      return [
        ...(o.allNamespaces ? [w.metadata.namespace ?? ''] : []),
        w.metadata.name ?? '',
        String(w.spec?.replicas ?? s.desiredNumberScheduled ?? ''),
        String(s.updatedReplicas ?? s.updatedNumberScheduled ?? 0),
        String(s.readyReplicas ?? 0),
        String(s.availableReplicas ?? s.numberAvailable ?? 0),
        age(w.metadata.creationTimestamp, o.nowMs),
        ...(o.wide
          ? [
              s.updateRevision ?? '',
              (w.spec?.template?.spec?.containers ?? []).map((c) => c.image).join(','),
              String(!!(w.spec?.updateStrategy?.rollingUpdate?.paused || w.spec?.paused)),
            ]
          : []),
      ];
    }),
  ];
}

/** A summary column set of kruise-tools' `get`: the kinds that are not workloads with a rollout. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- one table per kind, each reading a few fields of its own kind's spec and status
type Summary = (o: KubeObject & { spec?: any; status?: any }, nowMs: number) => string[];

const SUMMARIES: Record<string, { header: string[]; row: Summary }> = {
  'rollouts.rollouts.kruise.io': {
    header: ['NAME', 'STATUS', 'CANARY_STEP', 'CANARY_STATE', 'MESSAGE', 'AGE'],
    row: (o, now) => [
      o.metadata.name ?? '',
      o.status?.phase ?? '',
      String(o.status?.canaryStatus?.currentStepIndex ?? 0),
      o.status?.canaryStatus ? (o.status.canaryStatus.currentStepState ?? '') : 'Completed',
      o.status?.message ?? '',
      age(o.metadata.creationTimestamp, now),
    ],
  },
  'broadcastjobs.apps.kruise.io': {
    header: ['NAME', 'DESIRED', 'ACTIVE', 'SUCCEEDED', 'FAILED', 'AGE'],
    row: (o, now) => [
      o.metadata.name ?? '',
      String(o.status?.desired ?? o.spec?.parallelism ?? '<all>'),
      String(o.status?.active ?? 0),
      String(o.status?.succeeded ?? 0),
      String(o.status?.failed ?? 0),
      age(o.metadata.creationTimestamp, now),
    ],
  },
  'containerrecreaterequests.apps.kruise.io': {
    header: ['NAME', 'PHASE', 'POD', 'AGE'],
    row: (o, now) => [o.metadata.name ?? '', o.status?.phase ?? '', o.spec?.podName ?? '', age(o.metadata.creationTimestamp, now)],
  },
  'advancedcronjobs.apps.kruise.io': {
    header: ['NAME', 'SCHEDULE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'AGE'],
    row: (o, now) => [
      o.metadata.name ?? '',
      o.spec?.schedule ?? '',
      String(!!o.spec?.paused),
      String(o.status?.active?.length ?? 0),
      o.status?.lastScheduleTime ? age(o.status.lastScheduleTime, now) : '<none>',
      age(o.metadata.creationTimestamp, now),
    ],
  },
  'resourcedistributions.apps.kruise.io': {
    header: ['NAME', 'TOTAL', 'SUCCEEDED', 'AGE'],
    row: (o, now) => [
      o.metadata.name ?? '',
      String(o.status?.desired ?? 0),
      String(o.status?.succeeded ?? 0),
      age(o.metadata.creationTimestamp, now),
    ],
  },
  'uniteddeployments.apps.kruise.io': {
    header: ['NAME', 'DESIRED', 'UPDATED', 'READY', 'TOTAL', 'AGE'],
    row: (o, now) => [
      o.metadata.name ?? '',
      String(o.spec?.replicas ?? 1),
      String(o.status?.updatedReplicas ?? 0),
      String(o.status?.readyReplicas ?? 0),
      String(o.status?.replicas ?? 0),
      age(o.metadata.creationTimestamp, now),
    ],
  },
  'sidecarsets.apps.kruise.io': {
    header: ['NAME', 'MATCHED', 'UPDATED', 'READY', 'AGE'],
    row: (o, now) => [
      o.metadata.name ?? '',
      String(o.status?.matchedPods ?? 0),
      String(o.status?.updatedPods ?? 0),
      String(o.status?.readyPods ?? 0),
      age(o.metadata.creationTimestamp, now),
    ],
  },
  'podprobemarkers.apps.kruise.io': {
    header: ['NAME', 'PROBES', 'AGE'],
    row: (o, now) => [o.metadata.name ?? '', String(o.spec?.probes?.length ?? 0), age(o.metadata.creationTimestamp, now)],
  },
  'imagepulljobs.apps.kruise.io': {
    header: ['NAME', 'TOTAL', 'ACTIVE', 'SUCCEEDED', 'FAILED', 'AGE'],
    row: (o, now) => [
      o.metadata.name ?? '',
      String(o.status?.desired ?? 0),
      String(o.status?.active ?? 0),
      String(o.status?.succeeded ?? 0),
      String(o.status?.failed ?? 0),
      age(o.metadata.creationTimestamp, now),
    ],
  },
  'podunavailablebudgets.policy.kruise.io': {
    header: ['NAME', 'ALLOWED', 'CURRENT', 'DESIRED', 'EXPECTED', 'AGE'],
    row: (o, now) => [
      o.metadata.name ?? '',
      String(o.status?.unavailableAllowed ?? 0),
      String(o.status?.currentAvailable ?? 0),
      String(o.status?.desiredAvailable ?? 0),
      String(o.status?.totalReplicas ?? 0),
      age(o.metadata.creationTimestamp, now),
    ],
  },
};

/** What `get all` lists, in kruise-tools' order: the Kruise kinds and Kruise Rollout's Rollouts. */
export const GET_ALL_TYPES = [
  'clonesets.apps.kruise.io',
  'statefulsets.apps.kruise.io',
  'daemonsets.apps.kruise.io',
  'rollouts.rollouts.kruise.io',
  'broadcastjobs.apps.kruise.io',
  'containerrecreaterequests.apps.kruise.io',
  'advancedcronjobs.apps.kruise.io',
  'resourcedistributions.apps.kruise.io',
  'uniteddeployments.apps.kruise.io',
  'sidecarsets.apps.kruise.io',
  'podprobemarkers.apps.kruise.io',
  'imagepulljobs.apps.kruise.io',
  'podunavailablebudgets.policy.kruise.io',
];

/** The table of one type: the rollout columns of a workload, kruise-tools' summary of the others. */
export function tableOf(type: ResourceType, items: readonly Listed[], o: { allNamespaces: boolean; wide: boolean; nowMs: number }): string {
  const summary = SUMMARIES[pluralName(type)];
  if (!summary) return table(rows(items, o));
  const ns = (x: Listed) => (o.allNamespaces ? [x.metadata.namespace ?? ''] : []);
  return table([
    [...(o.allNamespaces ? ['NAMESPACE'] : []), ...summary.header],
    ...items.map((i) => [...ns(i), ...summary.row(i, o.nowMs)]),
  ]);
}

async function listOf(session: Session, type: ResourceType, labelSelector: string | undefined): Promise<Listed[]> {
  const served = await servedType(session, type);
  const namespace = session.allNamespaces ? undefined : ns(session, served);
  try {
    return (await session.client.list<Listed>(served, { namespace, labelSelector })).items;
  } catch (err) {
    throw new CliError(describeError(err));
  }
}

/** `get all`: one section per kind that has objects (Rollouts only where Kruise Rollout is installed). */
async function getAll(session: Session, labelSelector: string | undefined): Promise<void> {
  let printed = false;
  for (const name of GET_ALL_TYPES) {
    const type = resolveType(name);
    let items: Listed[];
    try {
      items = await listOf(session, type, labelSelector);
    } catch (err) {
      if (type === KruiseRollouts && err instanceof CliError && /not installed/.test(err.message)) continue;
      throw err;
    }
    if (items.length === 0) continue;
    printed = true;
    const allNamespaces = session.allNamespaces || !type.namespaced;
    write(`\n${name}:\n${tableOf(type, items, { allNamespaces, wide: false, nowMs: Date.now() })}`);
  }
  if (!printed) cliIO().err(session.allNamespaces ? 'No resources found\n' : `No resources found in ${session.namespace} namespace.\n`);
}

export function getCommand(): Command {
  return new Command('get')
    .description(
      'list workloads (CloneSet, Advanced StatefulSet/DaemonSet, Deployment, …) with their rollout columns, other Kruise kinds and Rollouts with their summary; `get all` every Kruise kind',
    )
    .argument('<type>', 'the resource type, e.g. clonesets, asts, ads, deployments, rollouts, or all')
    .argument('[names...]', 'names to show (default: all)')
    .option('-l, --selector <selector>', 'label selector to filter on')
    .option('-o, --output <format>', 'output format: json|yaml|name|wide')
    .action(async function (this: Command, typeArg: string, names: string[]) {
      await withSession(this, async (session, opts) => {
        if (typeArg === 'all') {
          if (names.length > 0) throw new CliError('`get all` takes no names');
          return getAll(session, opts.selector);
        }
        const type = resolveType(typeArg);
        const output = parseOutput(opts.output, ['json', 'yaml', 'name', 'wide']);
        let items: Listed[];
        if (names.length > 0) {
          items = [];
          for (const name of names) items.push(await getTarget<Listed>(session, { type, name }));
        } else {
          items = await listOf(session, type, opts.selector);
        }
        if (output === 'name') return write(items.map((i) => `${typeName(type)}/${i.metadata.name}`).join('\n'));
        if (output === 'json' || output === 'yaml') {
          const served = await Promise.all(items.map((item) => asServed(session, type, item)));
          const data =
            names.length === 1 ? served[0] : { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: served };
          printData(data, output);
          return;
        }
        if (items.length === 0) {
          cliIO().err(session.allNamespaces ? 'No resources found\n' : `No resources found in ${session.namespace} namespace.\n`);
          return;
        }
        write(tableOf(type, items, { allNamespaces: session.allNamespaces, wide: output === 'wide', nowMs: Date.now() }));
      });
    });
}
