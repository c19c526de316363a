// `kubectl kruise get TYPE [NAME...]`: workloads with their rollout columns, across namespaces
// with -A; -o json|yaml|name|wide as kubectl.
import { Command } from 'commander';
import type { KubeObject } from '../../apis/core-objects.ts';
import { withSession } from './program.ts';
import { CliError, cliIO, describeError, getTarget, ns, parseOutput, printData, resolveType, table, typeName, write } from './session.ts';
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

export function getCommand(): Command {
  return new Command('get')
    .description('list workloads (CloneSet, Advanced StatefulSet/DaemonSet, Deployment, …) with their rollout columns')
    .argument('<type>', 'the resource type, e.g. clonesets, asts, ads, deployments')
    .argument('[names...]', 'names to show (default: all)')
    .option('-l, --selector <selector>', 'label selector to filter on')
    .option('-o, --output <format>', 'output format: json|yaml|name|wide')
    .action(async function (this: Command, typeArg: string, names: string[]) {
      await withSession(this, async (session, opts) => {
        const type = resolveType(typeArg);
        const output = parseOutput(opts.output, ['json', 'yaml', 'name', 'wide']);
        let items: Listed[];
        if (names.length > 0) {
          items = [];
          for (const name of names) items.push(await getTarget<Listed>(session, { type, name }));
        } else {
          try {
            const namespace = session.allNamespaces ? undefined : ns(session, type);
            items = (await session.client.list<Listed>(type, { namespace, labelSelector: opts.selector })).items;
          } catch (err) {
            throw new CliError(describeError(err));
          }
        }
        if (output === 'name') return write(items.map((i) => `${typeName(type)}/${i.metadata.name}`).join('\n'));
        const data = names.length === 1 ? items[0] : { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items };
        if (printData(data, output)) return;
        if (items.length === 0) {
          cliIO().err(session.allNamespaces ? 'No resources found\n' : `No resources found in ${session.namespace} namespace.\n`);
          return;
        }
        write(table(rows(items, { allNamespaces: session.allNamespaces, wide: output === 'wide', nowMs: Date.now() })));
      });
    });
}
