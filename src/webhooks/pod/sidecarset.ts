// SidecarSet injection at pod creation (upstream pkg/webhook/pod/mutating/sidecarset.go,
// sidecarset_hotupgrade.go; spec §6.2). Pure: the SidecarSets, the pod's Namespace and the
// SidecarSets' ControllerRevisions come from the caller (the informer caches), time and randomness
// are injected.
import type { SidecarContainer } from '../../apis/apps/sidecarset.ts';
import type { Container, EnvVar, LocalObjectReference, Volume, VolumeMount } from '../../apis/core.ts';
import type { ControllerRevision, Namespace, Pod } from '../../apis/core-objects.ts';
import {
  ENV_IS_INJECTED,
  ENV_SIDECARSET_VERSION,
  ENV_SIDECARSET_VERSION_ALT,
  SIDECARSET_CUSTOM_VERSION_LABEL,
  SIDECARSET_HASH_ANNOTATION,
  SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
  SIDECARSET_INJECTED_LIST_ANNOTATION,
  SIDECARSET_NAME_REVISION_LABEL,
  SIDECARSET_VERSION_ALT_ANNOTATION_PREFIX,
  SIDECARSET_VERSION_ANNOTATION_PREFIX,
  SIDECARSET_WORKING_HOTUPGRADE_CONTAINER_ANNOTATION,
} from '../../apis/constants.ts';
import { matchesLabelSelector } from '../../util/labelselector.ts';
import { marshalGoJSON } from '../../util/revision.ts';
import {
  formatUpgradeSpecs,
  canaryBaseOf,
  hotUpgradeContainerNames,
  hotUpgradeWorkInfo,
  isHotUpgradeContainer,
  isNativeSidecar,
  metaTime,
  parseUpgradeSpecs,
  patchPodMetadata,
  plainContainer,
  podMatchesSidecarSet,
  restoreSidecarSetRevision,
  sidecarSetHashOf,
  sidecarSetHashWithoutImageOf,
  type StoredSidecarSet,
} from '../../util/sidecarset.ts';
import { AdmissionDenied } from '../../runtime/webhook/types.ts';
import { applyResourcesPolicy } from './sidecarset-resources.ts';

export interface SidecarSetInjectionInputs {
  /** Every SidecarSet (v1beta1, as stored). */
  sidecarSets: readonly StoredSidecarSet[];
  /** The pod's Namespace, for namespaceSelector; undefined when the cache has none. */
  namespace: Pick<Namespace, 'metadata'> | undefined;
  /** The ControllerRevisions of a SidecarSet (label kruise.io/sidecarset-name), for injectionStrategy.revision. */
  revisionsOf(sidecarSetName: string): readonly ControllerRevision[];
  /** Gate EnableSortSidecarContainerByName. */
  sortByName: boolean;
  now: Date;
  /** [0, 1): picks between the history revision and the latest by a percent partition. */
  random: () => number;
}

/**
 * The SidecarSets to inject into a new pod: matching, not paused, at the revision to inject. A
 * canary SidecarSet that matches the pod suppresses its base (spec §6.2 step 2): only the canary's
 * sidecars are injected.
 */
export function sidecarSetsToInject(pod: Pod, inputs: SidecarSetInjectionInputs): StoredSidecarSet[] {
  const matched = inputs.sidecarSets.filter((s) => !s.spec?.injectionStrategy?.paused && podMatchesSidecarSet(pod, s, inputs.namespace));
  const replacedByCanary = new Set(matched.map(canaryBaseOf).filter((base) => base !== undefined));
  return matched.filter((s) => !replacedByCanary.has(s.metadata.name)).map((s) => suitableRevision(s, pod, inputs));
}

/** getSuitableRevisionSidecarSet for CREATE (spec §6.2 step 2). */
function suitableRevision(s: StoredSidecarSet, pod: Pod, inputs: SidecarSetInjectionInputs): StoredSidecarSet {
  const info = s.spec?.injectionStrategy?.revision;
  if (!info || (info.revisionName == null && info.customVersion == null)) return s;
  const history = historyRevision(s, info, inputs);
  if (s.spec?.updateStrategy?.paused) return history;
  if (info.policy === 'Partial') {
    const sel = s.spec?.updateStrategy?.selector;
    if (sel && !matchesLabelSelector(sel, pod.metadata.labels)) return history;
    const partition = s.spec?.updateStrategy?.partition;
    if (typeof partition !== 'string') return s;
    const probability = Number(partition.replace(/%$/, '')) / 100;
    if (!Number.isFinite(probability)) throw new AdmissionDenied(`invalid partition ${partition} of SidecarSet ${s.metadata.name}`, 500);
    return inputs.random() <= probability ? history : s;
  }
  return history;
}

/** GetHistorySidecarSet: the revision named, or the newest with the custom version; the latest when none is found. */
function historyRevision(
  s: StoredSidecarSet,
  info: { revisionName?: string; customVersion?: string },
  inputs: SidecarSetInjectionInputs,
): StoredSidecarSet {
  const revisions = inputs
    .revisionsOf(s.metadata.name)
    .filter((r) => r.metadata.labels?.[SIDECARSET_NAME_REVISION_LABEL] === s.metadata.name);
  let revision: ControllerRevision | undefined;
  if (info.revisionName != null) {
    revision = revisions.find((r) => r.metadata.name === info.revisionName);
    if (!revision) {
      throw new AdmissionDenied(`controllerrevisions.apps "${info.revisionName}" not found`, 500);
    }
  } else {
    const candidates = revisions
      .filter((r) => r.metadata.labels?.[SIDECARSET_CUSTOM_VERSION_LABEL] === info.customVersion)
      .sort((a, b) => a.revision - b.revision || ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
    revision = candidates.at(-1);
    if (!revision) throw new AdmissionDenied(`controllerrevisions.apps "${s.metadata.name}" not found`, 500);
  }
  return restoreSidecarSetRevision(s, revision);
}

/** Sidecars as the pod gets them, with where they go. */
interface InjectedContainer {
  container: Container;
  policy: SidecarContainer['podInjectPolicy'];
}

/**
 * Injects the SidecarSets into the pod (sidecarsetMutatingPod for CREATE). Returns whether the pod
 * changed.
 */
export function injectSidecarSets(
  pod: Pod,
  matched: readonly StoredSidecarSet[],
  inputs: Pick<SidecarSetInjectionInputs, 'now' | 'sortByName'>,
): boolean {
  if (!matched.length) return false;
  const annotations = (pod.metadata.annotations ??= {});
  const before = JSON.stringify(annotations);
  for (const s of matched) {
    try {
      patchPodMetadata(annotations, s.spec?.patchPodMetadata ?? []);
    } catch (err) {
      throw new AdmissionDenied((err as Error).message, 500);
    }
  }
  const metadataChanged = JSON.stringify(annotations) !== before;

  const spec = (pod.spec ??= { containers: [] });
  const hashes = parseUpgradeSpecs(annotations[SIDECARSET_HASH_ANNOTATION]);
  const hashesWithoutImage = parseUpgradeSpecs(annotations[SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION]);
  const workInfo = hotUpgradeWorkInfo(pod);
  const names = new Set(annotations[SIDECARSET_INJECTED_LIST_ANNOTATION]?.split(',').filter(Boolean) ?? []);
  const injectedAnnotations: Record<string, string> = {};
  const containers: InjectedContainer[] = [];
  const initContainers: InjectedContainer[] = [];
  const volumes: Volume[] = [];
  const secrets: LocalObjectReference[] = [];
  const timestamp = metaTime(inputs.now);

  // resourcesPolicy reads the pod's own containers, never these.
  const sidecarNames = new Set(
    matched.flatMap((s) => [...(s.spec?.initContainers ?? []), ...(s.spec?.containers ?? [])].map((c) => c.name)),
  );
  for (const s of matched) {
    names.add(s.metadata.name);
    const volumesByName = new Map((s.spec?.volumes ?? []).map((v) => [v.name, v]));
    const sidecarList = new Set<string>();
    const build = (sidecar: SidecarContainer, into: InjectedContainer[]) => {
      const c = structuredClone(sidecar);
      applyResourcesPolicy(c, pod, sidecarNames);
      const { mounts, envs } = sharedVolumeMountsAndEnvs(c, pod);
      const transferred = mergeEnvs(transferEnvs(c, pod), envs);
      for (const m of c.volumeMounts ?? []) {
        const v = volumesByName.get(m.name);
        if (v) volumes.push(v);
      }
      c.volumeMounts = mergeVolumeMounts(c.volumeMounts ?? [], mounts);
      c.env = mergeEnvs([...(c.env ?? []), { name: ENV_IS_INJECTED, value: 'true' }], transferred);
      if (isHotUpgradeContainer(c)) {
        for (const hot of hotUpgradeContainers(c, workInfo, injectedAnnotations)) into.push({ container: hot, policy: c.podInjectPolicy });
      } else {
        into.push({ container: plainContainer(c), policy: c.podInjectPolicy });
      }
    };
    for (const ic of s.spec?.initContainers ?? []) {
      if (isNativeSidecar(ic)) sidecarList.add(ic.name);
      // Only native sidecars may hot-upgrade; other init containers run once as written.
      build(isNativeSidecar(ic) ? ic : { ...ic, upgradeStrategy: undefined }, initContainers);
    }
    secrets.push(...(s.spec?.imagePullSecrets ?? []));
    for (const c of s.spec?.containers ?? []) {
      sidecarList.add(c.name);
      build(c, containers);
    }
    const list = [...sidecarList].sort();
    hashes[s.metadata.name] = {
      updateTimestamp: timestamp,
      hash: sidecarSetHashOf(s),
      sidecarSetName: s.metadata.name,
      sidecarList: list,
      ...(s.status?.latestRevision ? { controllerRevision: s.status.latestRevision } : {}),
    };
    hashesWithoutImage[s.metadata.name] = {
      updateTimestamp: timestamp,
      hash: sidecarSetHashWithoutImageOf(s),
      sidecarSetName: s.metadata.name,
      sidecarList: list,
    };
  }
  if (!containers.length && !initContainers.length) return metadataChanged;

  injectedAnnotations[SIDECARSET_HASH_ANNOTATION] = formatUpgradeSpecs(hashes);
  injectedAnnotations[SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION] = formatUpgradeSpecs(hashesWithoutImage);
  injectedAnnotations[SIDECARSET_INJECTED_LIST_ANNOTATION] = [...names].sort().join(',');

  initContainers.sort((a, b) => (a.container.name < b.container.name ? -1 : a.container.name > b.container.name ? 1 : 0));
  spec.initContainers = mergeSidecarContainers(spec.initContainers ?? [], initContainers, false);
  if (!spec.initContainers.length) delete spec.initContainers;
  spec.containers = mergeSidecarContainers(spec.containers ?? [], containers, inputs.sortByName);
  const mergedVolumes = mergeByName(spec.volumes ?? [], volumes);
  if (mergedVolumes.length) spec.volumes = mergedVolumes;
  const mergedSecrets = mergeByName(spec.imagePullSecrets ?? [], secrets, (s) => s.name ?? '');
  if (mergedSecrets.length) spec.imagePullSecrets = mergedSecrets;
  Object.assign(annotations, injectedAnnotations);
  return true;
}

/**
 * Before-app sidecars go first (in SidecarSet order, or by name under EnableSortSidecarContainerByName),
 * after-app ones last; a sidecar named like an existing container replaces it where it stands.
 */
function mergeSidecarContainers(origins: Container[], injected: InjectedContainer[], sortByName: boolean): Container[] {
  const index = new Map(origins.map((c, i) => [c.name, i]));
  const result = [...origins];
  const before: Container[] = [];
  const after: Container[] = [];
  for (const { container, policy } of injected) {
    const at = index.get(container.name);
    if (at !== undefined) result[at] = container;
    else if (policy === 'BeforeAppContainer') before.push(container);
    else after.push(container);
  }
  if (sortByName) before.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return [...before, ...result, ...after];
}

function mergeByName<T>(original: T[], additional: T[], name: (x: T) => string = (x) => (x as { name: string }).name): T[] {
  const seen = new Set(original.map(name));
  const out = [...original];
  for (const x of additional) {
    if (seen.has(name(x))) continue;
    seen.add(name(x));
    out.push(x);
  }
  return out;
}

/** util.MergeEnvVar: the first env of a name wins. */
function mergeEnvs(original: EnvVar[], additional: EnvVar[]): EnvVar[] {
  return mergeByName(original, additional);
}

/** util.MergeVolumeMounts: the first mount of a path wins. */
function mergeVolumeMounts(original: VolumeMount[], additional: VolumeMount[]): VolumeMount[] {
  return mergeByName(original, additional, (m) => m.mountPath);
}

const SUBPATH_EXPR_ENV = /\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)/g;

/**
 * shareVolumePolicy enabled: every volume mount of the app containers (not of injected sidecars),
 * and the envs their subPathExpr references.
 */
function sharedVolumeMountsAndEnvs(c: SidecarContainer, pod: Pod): { mounts: VolumeMount[]; envs: EnvVar[] } {
  const mounts: VolumeMount[] = [];
  const envs: EnvVar[] = [];
  if (c.shareVolumePolicy?.type !== 'enabled') return { mounts, envs };
  for (const app of pod.spec?.containers ?? []) {
    if (app.env?.some((e) => e.name === ENV_IS_INJECTED && e.value === 'true')) continue;
    for (const m of app.volumeMounts ?? []) {
      mounts.push(m);
      for (const [, envName] of (m.subPathExpr ?? '').matchAll(SUBPATH_EXPR_ENV)) {
        const env = app.env?.find((e) => e.name === envName);
        if (env) envs.push(env);
      }
    }
  }
  return { mounts, envs };
}

const FIELD_PATH = /^(metadata\.(?:labels|annotations))\['(.*)'\]$/;

/** GetSidecarTransferEnvs: envs copied from the named app container (or the one a label/annotation names). */
function transferEnvs(c: SidecarContainer, pod: Pod): EnvVar[] {
  const out: EnvVar[] = [];
  for (const t of c.transferEnv ?? []) {
    const envNames = new Set<string>();
    if (t.envName) envNames.add(t.envName);
    for (const n of t.envNames ?? []) envNames.add(n);
    let source = t.sourceContainerName ?? '';
    const ref = t.sourceContainerNameFrom?.fieldRef;
    if (ref) {
      const m = FIELD_PATH.exec(ref.fieldPath);
      if (!m) continue;
      source = (m[1] === 'metadata.labels' ? pod.metadata.labels : pod.metadata.annotations)?.[m[2]!] ?? '';
    }
    const from = pod.spec?.containers.find((x) => x.name === source);
    for (const name of [...envNames].sort()) {
      const env = from?.env?.find((e) => e.name === name);
      if (env) out.push(env);
    }
  }
  return out;
}

/**
 * A hot-upgrade sidecar becomes `<name>-1` (working, the real image) and `<name>-2` (idle, the
 * empty image), each with SIDECARSET_VERSION(_ALT) from its version annotations.
 */
function hotUpgradeContainers(c: SidecarContainer, workInfo: Record<string, string>, annotations: Record<string, string>): Container[] {
  const [name1, name2] = hotUpgradeContainerNames(c.name);
  const withVersionEnv = (name: string, image: string | undefined): Container => ({
    ...plainContainer(c),
    name,
    image,
    env: [
      ...(c.env ?? []),
      {
        name: ENV_SIDECARSET_VERSION,
        valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${SIDECARSET_VERSION_ANNOTATION_PREFIX}${name}']` } },
      },
      {
        name: ENV_SIDECARSET_VERSION_ALT,
        valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${SIDECARSET_VERSION_ALT_ANNOTATION_PREFIX}${name}']` } },
      },
    ],
  });
  annotations[`${SIDECARSET_VERSION_ANNOTATION_PREFIX}${name1}`] = '1';
  annotations[`${SIDECARSET_VERSION_ALT_ANNOTATION_PREFIX}${name1}`] = '0';
  annotations[`${SIDECARSET_VERSION_ANNOTATION_PREFIX}${name2}`] = '0';
  annotations[`${SIDECARSET_VERSION_ALT_ANNOTATION_PREFIX}${name2}`] = '1';
  workInfo[c.name] = name1;
  annotations[SIDECARSET_WORKING_HOTUPGRADE_CONTAINER_ANNOTATION] = marshalGoJSON(workInfo);
  return [withVersionEnv(name1, c.image), withVersionEnv(name2, c.upgradeStrategy?.hotUpgradeEmptyImage)];
}
