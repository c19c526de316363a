// Feature gates of kruise-manager and kruise-daemon (behaviour spec §2, upstream
// pkg/features/kruise_features.go): names, defaults, `--feature-gates` parsing and the
// dependency rules applied at start-up.

import { ENV_CUSTOM_RESOURCE_ENABLE } from './constants.ts';

/** Gate name → default. */
export const FEATURE_GATE_DEFAULTS = {
  PodWebhook: true,
  KruiseDaemon: true,
  DaemonWatchingPod: true,
  CloneSetShortHash: false,
  KruisePodReadinessGate: false,
  PreDownloadImageForInPlaceUpdate: false,
  CloneSetPartitionRollback: false,
  ResourcesDeletionProtection: false,
  WorkloadSpread: true,
  PodUnavailableBudgetDeleteGate: true,
  PodUnavailableBudgetUpdateGate: false,
  TemplateNoDefaults: false,
  InPlaceUpdateEnvFromMetadata: true,
  StatefulSetAutoDeletePVC: true,
  SidecarSetPatchPodMetadataDefaultsAllowed: false,
  SidecarTerminator: false,
  PodProbeMarkerGate: true,
  PreDownloadImageForDaemonSetUpdate: false,
  CloneSetEventHandlerOptimization: false,
  PreparingUpdateAsUpdate: false,
  ImagePullJobGate: false,
  ResourceDistributionGate: false,
  DeletionProtectionForCRDCascadingGate: false,
  EnhancedLivenessProbe: false,
  RecreatePodWhenChangeVCTInCloneSetGate: false,
  StatefulSetStartOrdinal: false,
  PodIndexLabel: true,
  EnableExternalCerts: false,
  StatefulSetAutoResizePVCGate: false,
  ForceDeleteTimeoutExpectationGate: false,
  InPlaceWorkloadVerticalScaling: false,
  EnablePodProbeMarkerOnServerless: false,
  EnableSortSidecarContainerByName: false,
  InPlacePodVerticalScaling: false,
  DefaultHostNetworkHostPortsInPodTemplates: false,
  DaemonSetPruneIneligibleNodes: false,
} as const satisfies Record<string, boolean>;

export type FeatureGate = keyof typeof FEATURE_GATE_DEFAULTS;

/**
 * Each gate's stage in OpenKruise v1.8.2, which `AllAlpha` / `AllBeta` act on. The gates added after
 * v1.8.2 have no stage here, so the pseudo-gates leave them as v1.8.2 would: at their default.
 */
const FEATURE_GATE_STAGES: Partial<Record<FeatureGate, 'Alpha' | 'Beta'>> = {
  PodWebhook: 'Beta',
  KruiseDaemon: 'Beta',
  DaemonWatchingPod: 'Beta',
  CloneSetShortHash: 'Alpha',
  KruisePodReadinessGate: 'Alpha',
  PreDownloadImageForInPlaceUpdate: 'Alpha',
  CloneSetPartitionRollback: 'Alpha',
  ResourcesDeletionProtection: 'Beta',
  WorkloadSpread: 'Beta',
  PodUnavailableBudgetDeleteGate: 'Beta',
  PodUnavailableBudgetUpdateGate: 'Alpha',
  TemplateNoDefaults: 'Alpha',
  InPlaceUpdateEnvFromMetadata: 'Beta',
  StatefulSetAutoDeletePVC: 'Beta',
  SidecarSetPatchPodMetadataDefaultsAllowed: 'Alpha',
  SidecarTerminator: 'Alpha',
  PodProbeMarkerGate: 'Beta',
  PreDownloadImageForDaemonSetUpdate: 'Alpha',
  CloneSetEventHandlerOptimization: 'Alpha',
  PreparingUpdateAsUpdate: 'Alpha',
  ImagePullJobGate: 'Alpha',
  ResourceDistributionGate: 'Alpha',
  DeletionProtectionForCRDCascadingGate: 'Alpha',
  EnhancedLivenessProbe: 'Alpha',
  RecreatePodWhenChangeVCTInCloneSetGate: 'Alpha',
  StatefulSetStartOrdinal: 'Alpha',
  PodIndexLabel: 'Beta',
  EnableExternalCerts: 'Alpha',
  StatefulSetAutoResizePVCGate: 'Alpha',
  ForceDeleteTimeoutExpectationGate: 'Alpha',
  InPlaceWorkloadVerticalScaling: 'Alpha',
  EnablePodProbeMarkerOnServerless: 'Alpha',
};

/** component-base's pseudo-gates: `AllAlpha=<bool>` / `AllBeta=<bool>` set every gate of that stage not named itself. */
const PSEUDO_GATE_STAGES = { AllAlpha: 'Alpha', AllBeta: 'Beta' } as const;
export type FeatureGates = Readonly<Record<FeatureGate, boolean>>;

export const FEATURE_GATE_NAMES = Object.keys(FEATURE_GATE_DEFAULTS) as FeatureGate[];

export function isFeatureGate(name: string): name is FeatureGate {
  return Object.hasOwn(FEATURE_GATE_DEFAULTS, name);
}

// strconv.ParseBool, which Kubernetes feature gates use for values.
const TRUE_VALUES = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_VALUES = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/**
 * Parses a `--feature-gates` value such as `A=true,B=false`, as component-base does: `AllAlpha` and
 * `AllBeta` set every gate of their stage, and a gate named on its own wins over them wherever it
 * stands. Throws on an unknown gate (naming it), a missing value or a value that is not a boolean.
 */
export function parseFeatureGates(flag: string): Partial<Record<FeatureGate, boolean>> {
  const named: Partial<Record<FeatureGate, boolean>> = {};
  const byStage: Partial<Record<'Alpha' | 'Beta', boolean>> = {};
  for (const part of flag.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq < 0) throw new Error(`missing bool value for ${item}`);
    const name = item.slice(0, eq).trim();
    const value = parseBool(name, item.slice(eq + 1).trim());
    if (Object.hasOwn(PSEUDO_GATE_STAGES, name)) byStage[PSEUDO_GATE_STAGES[name as keyof typeof PSEUDO_GATE_STAGES]] = value;
    else if (isFeatureGate(name)) named[name] = value;
    else throw new Error(`unrecognized feature gate: ${name}`);
  }
  const out: Partial<Record<FeatureGate, boolean>> = {};
  for (const [gate, stage] of Object.entries(FEATURE_GATE_STAGES) as [FeatureGate, 'Alpha' | 'Beta'][]) {
    const value = byStage[stage];
    if (value !== undefined) out[gate] = value;
  }
  return { ...out, ...named };
}

function parseBool(name: string, raw: string): boolean {
  if (TRUE_VALUES.has(raw)) return true;
  if (FALSE_VALUES.has(raw)) return false;
  throw new Error(`invalid value of ${name}=${raw}, err: strconv.ParseBool: parsing "${raw}": invalid syntax`);
}

/**
 * Defaults for this process: CUSTOM_RESOURCE_ENABLE, when set, lists the enabled custom
 * resources, and without SidecarSet among them the pod webhook defaults to off.
 */
export function defaultFeatureGates(env: Readonly<Record<string, string | undefined>>): FeatureGates {
  const gates: Record<FeatureGate, boolean> = { ...FEATURE_GATE_DEFAULTS };
  const enabled = (env[ENV_CUSTOM_RESOURCE_ENABLE] ?? '').trim();
  if (enabled !== '' && !enabled.split(',').includes('SidecarSet')) gates.PodWebhook = false;
  return gates;
}

/**
 * The dependency rules upstream enforces at start-up (SetDefaultFeatureGates), applied in its
 * order: a gate whose prerequisite is off is forced off, pre-download forces ImagePullJobGate on.
 */
export function applyFeatureGateDependencies(input: FeatureGates): FeatureGates {
  const gates: Record<FeatureGate, boolean> = { ...input };
  if (!gates.PodWebhook) {
    gates.KruisePodReadinessGate = false;
    gates.PodUnavailableBudgetDeleteGate = false;
    gates.PodUnavailableBudgetUpdateGate = false;
    gates.WorkloadSpread = false;
    gates.SidecarSetPatchPodMetadataDefaultsAllowed = false;
    gates.EnhancedLivenessProbe = false;
    gates.EnablePodProbeMarkerOnServerless = false;
  }
  if (!gates.KruiseDaemon) {
    gates.PreDownloadImageForInPlaceUpdate = false;
    gates.PreDownloadImageForDaemonSetUpdate = false;
    gates.DaemonWatchingPod = false;
    gates.InPlaceUpdateEnvFromMetadata = false;
    gates.PodProbeMarkerGate = false;
    gates.SidecarTerminator = false;
    gates.ImagePullJobGate = false;
    gates.EnhancedLivenessProbe = false;
  }
  if (gates.PreDownloadImageForInPlaceUpdate || gates.PreDownloadImageForDaemonSetUpdate) {
    gates.ImagePullJobGate = true;
  }
  if (!gates.ResourcesDeletionProtection) {
    gates.DeletionProtectionForCRDCascadingGate = false;
  }
  return gates;
}

/** The gates a process runs with: env defaults, then the flag, then the dependency rules. */
export function resolveFeatureGates(flag: string, env: Readonly<Record<string, string | undefined>> = {}): FeatureGates {
  return applyFeatureGateDependencies({ ...defaultFeatureGates(env), ...parseFeatureGates(flag) });
}
