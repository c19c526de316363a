// Pull-secret copies in kruise-daemon-config (upstream syncJobPullSecrets): kruise-daemon may read
// secrets only there, so each source secret a job names is copied once and shared by every job
// naming it. The copy remembers its source (source-key) and the jobs using it (references); a job
// that completes, is deleted or stops naming the secret lets go of it, and the last one out deletes
// it. Pure: the executor applies the plan.
import {
  IMAGEPULLJOB_MODE_ANNOTATION,
  IMAGEPULLJOB_REFERENCES_ANNOTATION,
  IMAGEPULLJOB_SOURCE_KEY_ANNOTATION,
  IMAGEPULLJOB_SOURCE_UID_LABEL,
  KRUISE_DAEMON_CONFIG_NAMESPACE,
} from '../../apis/constants.ts';
import { isDeepStrictEqual } from 'node:util';
import { isActiveJob, jobKey, type ImagePullJob } from '../imagejobs/resources.ts';
import type { Secret } from '../../apis/core-objects.ts';

/** A pull secret as NodeImages reference it (ReferenceObject). */
export interface PullSecretRef {
  namespace: string;
  name: string;
  /** 'batch' for copies the job controller created: NodeImage cleanup leaves them to the job. */
  mode?: string;
}

/** Mode of copies made by this controller; NodeImage cleanup leaves such references alone. */
export const SECRET_MODE_BATCH = 'batch';

export function referencingJobs(secret: Secret): Set<string> {
  const raw = secret.metadata.annotations?.[IMAGEPULLJOB_REFERENCES_ANNOTATION] ?? '';
  return new Set(raw.split(',').filter((k) => k.includes('/')));
}

const joinRefs = (refs: Set<string>) => [...refs].sort().join(',');

export interface SecretSyncInput {
  job: ImagePullJob;
  /** Every secret in kruise-daemon-config. */
  copies: readonly Secret[];
  /** Source secrets by name in the job's namespace (undefined: does not exist). */
  source(name: string): Secret | undefined;
  /** Suffix for a new copy's name. */
  randomSuffix(): string;
}

export interface SecretSyncPlan {
  /** Copies whose references annotation changes (data refreshed too for claimed ones). */
  update: Secret[];
  delete: Secret[];
  create: Secret[];
  /** What the job's NodeImage entries must reference, in pullSecrets order. */
  refs: PullSecretRef[];
}

/** A job in kruise-daemon-config itself uses its secrets where they are. */
export function planSecretSync(input: SecretSyncInput): SecretSyncPlan {
  const { job } = input;
  const ns = job.metadata.namespace ?? '';
  const plan: SecretSyncPlan = { update: [], delete: [], create: [], refs: [] };
  const names = [...new Set(job.spec?.pullSecrets ?? [])];
  if (ns === KRUISE_DAEMON_CONFIG_NAMESPACE) {
    plan.refs = names.map((name) => ({ namespace: ns, name }));
    return plan;
  }
  const key = jobKey(job);
  const active = isActiveJob(job);
  // source key → the copy this job will use; a copy already referencing the job wins over others.
  const wanted = new Map<string, Secret | undefined>(active ? names.map((n) => [`${ns}/${n}`, undefined]) : []);
  const released: Secret[] = [];
  const copies = [...input.copies].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  for (const copy of copies) {
    if (copy.metadata.deletionTimestamp) continue;
    const refs = referencingJobs(copy);
    const source = copy.metadata.annotations?.[IMAGEPULLJOB_SOURCE_KEY_ANNOTATION] ?? '';
    if (active && wanted.has(source)) {
      if (!wanted.get(source) || refs.has(key)) wanted.set(source, copy);
      continue;
    }
    if (refs.has(key)) released.push(copy);
  }
  for (const copy of released) {
    const refs = referencingJobs(copy);
    refs.delete(key);
    if (refs.size === 0) plan.delete.push(copy);
    else plan.update.push(withReferences(copy, refs));
  }
  for (const [sourceKey, copy] of wanted) {
    const name = sourceKey.slice(ns.length + 1);
    const source = input.source(name);
    if (!source) continue;
    if (!copy) {
      const created = newCopy(source, key, input.randomSuffix());
      plan.create.push(created);
      plan.refs.push({ namespace: KRUISE_DAEMON_CONFIG_NAMESPACE, name: created.metadata.name!, mode: SECRET_MODE_BATCH });
      continue;
    }
    const ref: PullSecretRef = { namespace: KRUISE_DAEMON_CONFIG_NAMESPACE, name: copy.metadata.name ?? '' };
    const mode = copy.metadata.annotations?.[IMAGEPULLJOB_MODE_ANNOTATION];
    if (mode) ref.mode = mode;
    plan.refs.push(ref);
    const refs = referencingJobs(copy);
    refs.add(key);
    const next = withReferences(copy, refs);
    next.data = source.data;
    if (source.stringData) next.stringData = source.stringData;
    else delete next.stringData;
    if (!isDeepStrictEqual(next.data ?? {}, copy.data ?? {}) || !isDeepStrictEqual(next.metadata.annotations, copy.metadata.annotations)) {
      plan.update.push(next);
    }
  }
  return plan;
}

function withReferences(copy: Secret, refs: Set<string>): Secret {
  const next = structuredClone(copy);
  next.metadata.annotations = { ...next.metadata.annotations, [IMAGEPULLJOB_REFERENCES_ANNOTATION]: joinRefs(refs) };
  return next;
}

function newCopy(source: Secret, key: string, suffix: string): Secret {
  const copy: Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      namespace: KRUISE_DAEMON_CONFIG_NAMESPACE,
      name: `${source.metadata.name}-${suffix}`,
      annotations: {
        ...source.metadata.annotations,
        [IMAGEPULLJOB_REFERENCES_ANNOTATION]: key,
        [IMAGEPULLJOB_SOURCE_KEY_ANNOTATION]: `${source.metadata.namespace}/${source.metadata.name}`,
        [IMAGEPULLJOB_MODE_ANNOTATION]: SECRET_MODE_BATCH,
      },
    },
  };
  copy.metadata.labels = { ...source.metadata.labels, [IMAGEPULLJOB_SOURCE_UID_LABEL]: source.metadata.uid ?? '' };
  if (source.type) copy.type = source.type;
  if (source.data) copy.data = { ...source.data };
  return copy;
}
