// SidecarSet mutating webhook (upstream pkg/webhook/sidecarset/mutating + SetDefaultsSidecarSet):
// defaults on CREATE and UPDATE, then the two hash annotations the controller and the pod webhook
// compare against the per-pod records.
import { createHash } from 'node:crypto';
import type { SidecarContainer, SidecarSet } from '../../apis/apps/sidecarset.ts';
import { SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION } from '../../apis/constants.ts';
import { marshalGoSidecarContainers } from '../../util/go-container.ts';
import { safeEncodeString } from '../../util/revision.ts';
import { defaultHTTPGet, defaultProbe, defaultPullPolicyForImage, defaultResourceList, setDefaultPodVolumes } from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

// Kubernetes SetDefaults_Container (pull policy from the image tag, unlike workload templates)
// plus the sidecar fields' defaults.
function defaultSidecarContainer(c: SidecarContainer, injectPolicy: 'BeforeAppContainer' | 'AfterAppContainer'): void {
  if (!c.podInjectPolicy) c.podInjectPolicy = injectPolicy;
  c.upgradeStrategy ??= {};
  if (!c.upgradeStrategy.upgradeType) c.upgradeStrategy.upgradeType = 'ColdUpgrade';
  c.shareVolumePolicy ??= {};
  if (!c.shareVolumePolicy.type) c.shareVolumePolicy.type = 'disabled';

  if (!c.imagePullPolicy) c.imagePullPolicy = defaultPullPolicyForImage(c.image);
  if (!c.terminationMessagePath) c.terminationMessagePath = '/dev/termination-log';
  if (!c.terminationMessagePolicy) c.terminationMessagePolicy = 'File';
  for (const p of c.ports ?? []) if (!p.protocol) p.protocol = 'TCP';
  for (const t of c.transferEnv ?? []) {
    const ref = t.sourceContainerNameFrom?.fieldRef;
    if (ref && !ref.apiVersion) ref.apiVersion = 'v1';
  }
  for (const e of c.env ?? []) {
    const ref = e.valueFrom?.fieldRef;
    if (ref && !ref.apiVersion) ref.apiVersion = 'v1';
  }
  // SetDefaults_ResourceList: quantities in Go's canonical text ("0.5" → "500m"), which the
  // revision name and the hash annotations cover (a SidecarSet created through Kruise TS must hash
  // as under OpenKruise).
  defaultResourceList(c.resources?.limits);
  defaultResourceList(c.resources?.requests);
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultHTTPGet(c.lifecycle?.postStart?.httpGet);
  defaultHTTPGet(c.lifecycle?.preStop?.httpGet);
}

/** SetDefaultsSidecarSet; the same for v1alpha1 and v1beta1. */
export function setDefaultsSidecarSet(obj: SidecarSet): void {
  const spec = (obj.spec ??= {});
  const strategy = (spec.updateStrategy ??= {});
  if (!strategy.type) strategy.type = 'RollingUpdate';
  strategy.maxUnavailable ??= 1;
  strategy.partition ??= 0;
  for (const c of spec.initContainers ?? []) defaultSidecarContainer(c, 'AfterAppContainer');
  for (const c of spec.containers ?? []) defaultSidecarContainer(c, 'BeforeAppContainer');
  setDefaultPodVolumes(spec.volumes);
  spec.revisionHistoryLimit ??= 10;
  for (const patch of spec.patchPodMetadata ?? []) if (!patch.patchPolicy) patch.patchPolicy = 'Retain';
  const revision = spec.injectionStrategy?.revision;
  if (revision && !revision.policy) revision.policy = 'Always';
}

/** A native sidecar: an init container that keeps running (restartPolicy Always). */
export function isNativeSidecar(c: { restartPolicy?: string | null }): boolean {
  return c.restartPolicy === 'Always';
}

// Containers, plus the init containers when any of them is a native sidecar (upgradable).
/** encodeSidecarSet: a map {containers, initContainers (when one is a native sidecar)} of Go-typed containers. */
function encodeSidecarSet(spec: NonNullable<SidecarSet['spec']>): string {
  const init = (spec.initContainers ?? []).some(isNativeSidecar)
    ? `,"initContainers":${marshalGoSidecarContainers(spec.initContainers)}`
    : '';
  return `{"containers":${marshalGoSidecarContainers(spec.containers)}${init}}`;
}

function hashOf(data: string): string {
  return safeEncodeString(createHash('sha256').update(data).digest('hex'));
}

/** kruise.io/sidecarset-hash: changes with any sidecar container field. */
export function sidecarSetHash(obj: SidecarSet): string {
  return hashOf(encodeSidecarSet(obj.spec ?? {}));
}

/** kruise.io/sidecarset-hash-without-image: equal across image-only changes (in-place upgradable). */
export function sidecarSetHashWithoutImage(obj: SidecarSet): string {
  const spec = structuredClone(obj.spec ?? {});
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) c.image = '';
  return hashOf(encodeSidecarSet(spec));
}

export function mutateSidecarSet(obj: SidecarSet, ctx: AdmissionContext): void {
  if (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE') return;
  setDefaultsSidecarSet(obj);
  obj.metadata ??= {};
  const annotations = (obj.metadata.annotations ??= {});
  annotations[SIDECARSET_HASH_ANNOTATION] = sidecarSetHash(obj);
  annotations[SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION] = sidecarSetHashWithoutImage(obj);
}
