// The corpus of the differential admission test: valid samples (examples/, one per kind and served
// version) and, for each, field-level value mutations. Which fields exist, and whether they are
// int32, int64, int-or-string or string, is read from upstream's CRD schema of that version (its
// module's config/crd/bases), so every mutation names a field both implementations know; pod
// templates, PVC templates and free-form objects are left alone (the pod's own validation is not
// what differs between Kruise implementations).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../../src/cluster/binaries.ts';
import type { Operation, Target } from './admission-chain.ts';

export interface CorpusCase {
  /** Stable identity, e.g. `CloneSet/v1alpha1 CREATE spec.replicas=-1`; the allow-list matches it. */
  id: string;
  target: Target;
  op: Operation;
  /** The valid sample this case starts from. */
  sample: Record<string, unknown>;
  /**
   * Makes the case's object from a copy of its base: the sample for CREATE; for UPDATE the sample
   * as the side under test stored it (defaulted by its own chain), as a user edits what they read.
   */
  edit: (o: any) => void;
}

interface Kind {
  kind: string;
  group: string;
  resource: string;
  namespaced: boolean;
  file: string;
  versions: string[];
}

// Every kind upstream v1.8.2 admits through a webhook, the versions it serves, and the examples file
// holding a sample of each.
const KINDS: Kind[] = [
  {
    kind: 'AdvancedCronJob',
    group: 'apps.kruise.io',
    resource: 'advancedcronjobs',
    namespaced: true,
    file: 'advancedcronjob.yaml',
    versions: ['v1alpha1'],
  },
  {
    kind: 'BroadcastJob',
    group: 'apps.kruise.io',
    resource: 'broadcastjobs',
    namespaced: true,
    file: 'broadcastjob.yaml',
    versions: ['v1alpha1'],
  },
  { kind: 'CloneSet', group: 'apps.kruise.io', resource: 'clonesets', namespaced: true, file: 'cloneset.yaml', versions: ['v1alpha1'] },
  {
    kind: 'ContainerRecreateRequest',
    group: 'apps.kruise.io',
    resource: 'containerrecreaterequests',
    namespaced: true,
    file: 'containerrecreaterequest.yaml',
    versions: ['v1alpha1'],
  },
  { kind: 'DaemonSet', group: 'apps.kruise.io', resource: 'daemonsets', namespaced: true, file: 'daemonset.yaml', versions: ['v1alpha1'] },
  {
    kind: 'EphemeralJob',
    group: 'apps.kruise.io',
    resource: 'ephemeraljobs',
    namespaced: true,
    file: 'ephemeraljob.yaml',
    versions: ['v1alpha1'],
  },
  {
    kind: 'ImageListPullJob',
    group: 'apps.kruise.io',
    resource: 'imagelistpulljobs',
    namespaced: true,
    file: 'imagelistpulljob.yaml',
    versions: ['v1alpha1'],
  },
  {
    kind: 'ImagePullJob',
    group: 'apps.kruise.io',
    resource: 'imagepulljobs',
    namespaced: true,
    file: 'imagepulljob.yaml',
    versions: ['v1alpha1'],
  },
  {
    kind: 'NodeImage',
    group: 'apps.kruise.io',
    resource: 'nodeimages',
    namespaced: false,
    file: 'imagepulljob.yaml',
    versions: ['v1alpha1'],
  },
  {
    kind: 'PersistentPodState',
    group: 'apps.kruise.io',
    resource: 'persistentpodstates',
    namespaced: true,
    file: 'persistentpodstate.yaml',
    versions: ['v1alpha1'],
  },
  {
    kind: 'PodProbeMarker',
    group: 'apps.kruise.io',
    resource: 'podprobemarkers',
    namespaced: true,
    file: 'podprobemarker.yaml',
    versions: ['v1alpha1'],
  },
  {
    kind: 'PodUnavailableBudget',
    group: 'policy.kruise.io',
    resource: 'podunavailablebudgets',
    namespaced: true,
    file: 'podunavailablebudget.yaml',
    versions: ['v1alpha1'],
  },
  {
    kind: 'ResourceDistribution',
    group: 'apps.kruise.io',
    resource: 'resourcedistributions',
    namespaced: false,
    file: 'resourcedistribution.yaml',
    versions: ['v1alpha1'],
  },
  {
    kind: 'SidecarSet',
    group: 'apps.kruise.io',
    resource: 'sidecarsets',
    namespaced: false,
    file: 'sidecarset.yaml',
    versions: ['v1alpha1'],
  },
  {
    kind: 'StatefulSet',
    group: 'apps.kruise.io',
    resource: 'statefulsets',
    namespaced: true,
    file: 'advanced-statefulset.yaml',
    versions: ['v1alpha1', 'v1beta1'],
  },
  {
    kind: 'UnitedDeployment',
    group: 'apps.kruise.io',
    resource: 'uniteddeployments',
    namespaced: true,
    file: 'uniteddeployment.yaml',
    versions: ['v1alpha1'],
  },
  {
    kind: 'WorkloadSpread',
    group: 'apps.kruise.io',
    resource: 'workloadspreads',
    namespaced: true,
    file: 'workloadspread.yaml',
    versions: ['v1alpha1'],
  },
];

// Values tried per field type: signs, zero, the first value past int32, and every malformed
// percentage the int-or-string parsers disagree on.
const INT32 = [-1, 0, 2147483648];
const INT64 = [-1, 0];
const INT_OR_STRING = [-1, 0, 2147483648, '-1%', '%', '101%', '50%', '0%', '', '5', 'abc'];
const STRING = ['', 'Bad_Name', '101%'];
// Values seen accepted in the field (issue #10), tried beyond the sets above.
const EXTRA: Record<string, unknown[]> = {
  'BroadcastJob spec.completionPolicy.ttlSecondsAfterFinished': [-517968],
  'ImagePullJob spec.pullPolicy.timeoutSeconds': [-493102],
};

interface Schema {
  type?: string;
  format?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

// Sub-objects whose validation is Kubernetes' own or free-form: not walked.
const SKIPPED_KEYS = new Set([
  'status',
  'metadata',
  'patch',
  'resource',
  'volumeClaimTemplates',
  'resources',
  'nodeSelectorTerm',
  'requiredNodeSelectorTerm',
  'preferredNodeSelectorTerms',
  'tolerations',
  'matchExpressions',
  'affinity',
  'lifecycle',
  'volumes',
  'imagePullSecrets',
]);

function isPodLike(s: Schema): boolean {
  const p = s.properties ?? {};
  return 'containers' in p || 'accessModes' in p || ('image' in p && 'name' in p);
}

interface Leaf {
  path: (string | number)[];
  values: unknown[];
}

/** Mutable leaves: scalar fields of the schema, walking into arrays only where the sample has an element. */
function leaves(schema: Schema, sample: unknown, at: (string | number)[], out: Leaf[]): void {
  if (schema['x-kubernetes-int-or-string']) return void out.push({ path: at, values: INT_OR_STRING });
  if (schema.type === 'integer') return void out.push({ path: at, values: schema.format === 'int32' ? INT32 : INT64 });
  if (schema.type === 'string') return void out.push({ path: at, values: STRING });
  if (schema.type === 'array' && schema.items && Array.isArray(sample) && sample.length)
    return leaves(schema.items, sample[0], [...at, 0], out);
  if (schema.type !== 'object' || !schema.properties || (at.length > 1 && isPodLike(schema))) return;
  for (const [key, sub] of Object.entries(schema.properties)) {
    if (SKIPPED_KEYS.has(key)) continue;
    leaves(sub, (sample as Record<string, unknown> | undefined)?.[key], [...at, key], out);
  }
}

function setPath(obj: Record<string, unknown>, at: (string | number)[], value: unknown): void {
  let cur = obj as Record<string | number, unknown>;
  for (const key of at.slice(0, -1)) {
    if (cur[key] === undefined || cur[key] === null) cur[key] = {};
    cur = cur[key] as Record<string | number, unknown>;
  }
  cur[at[at.length - 1]!] = value;
}

function sampleOf(k: Kind, version: string): Record<string, unknown> {
  const docs = parseAllDocuments(readFileSync(path.join(repoRoot, 'examples', k.file), 'utf8')).map(
    (d) => d.toJSON() as Record<string, any>,
  );
  const doc = docs.find((d) => d?.kind === k.kind && d.apiVersion === `${k.group}/${version}`);
  if (!doc) throw new Error(`examples/${k.file} has no ${k.kind} ${version}`);
  const metadata = { ...doc.metadata };
  if (k.namespaced) metadata.namespace = 'default';
  else delete metadata.namespace;
  return { ...doc, metadata };
}

function specSchema(moduleDir: string, k: Kind, version: string): Schema {
  const file = path.join(moduleDir, 'config/crd/bases', `${k.group}_${k.resource}.yaml`);
  const crd = parseAllDocuments(readFileSync(file, 'utf8'))[0]!.toJSON() as {
    spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: Schema } }> };
  };
  const v = crd.spec.versions.find((x) => x.name === version);
  if (!v) throw new Error(`${file} has no version ${version}`);
  return v.schema.openAPIV3Schema.properties!.spec!;
}

const show = (v: unknown) => JSON.stringify(v);

/** The whole corpus: per kind and version, the sample, each mutation on CREATE and the first of each field's on UPDATE, and naming and selector changes. */
export function admissionCorpus(moduleDir: string): CorpusCase[] {
  const cases: CorpusCase[] = [];
  for (const k of KINDS) {
    for (const version of k.versions) {
      const target: Target = { group: k.group, version, resource: k.resource, kind: k.kind, namespaced: k.namespaced };
      const sample = sampleOf(k, version);
      const name = `${k.kind}/${version}`;
      const add = (op: Operation, what: string, edit: (o: any) => void) =>
        cases.push({ id: `${name} ${op} ${what}`, target, op, sample, edit });
      add('CREATE', 'sample', () => undefined);
      add('UPDATE', 'sample', () => undefined);

      const out: Leaf[] = [];
      leaves(specSchema(moduleDir, k, version), sample.spec, ['spec'], out);
      for (const leaf of out) {
        const field = leaf.path.join('.');
        const values = [...leaf.values, ...(EXTRA[`${k.kind} ${field}`] ?? [])];
        values.forEach((value, i) => {
          const edit = (o: Record<string, unknown>) => setPath(o, leaf.path, value);
          add('CREATE', `${field}=${show(value)}`, edit);
          if (i === 0) add('UPDATE', `${field}=${show(value)}`, edit);
        });
      }

      for (const [what, edit] of [
        ['metadata.name="Bad_Name"', (o: any) => (o.metadata.name = 'Bad_Name')],
        ['metadata.labels={"bad key":"v"}', (o: any) => (o.metadata.labels = { 'bad key': 'v' })],
      ] as const)
        add('CREATE', what, edit);
      const selector = (sample.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector;
      if (selector?.matchLabels) {
        add('UPDATE', 'spec.selector changed', (o) => (o.spec.selector = { matchLabels: { ...selector.matchLabels, changed: 'true' } }));
      }
    }
  }
  return cases;
}
