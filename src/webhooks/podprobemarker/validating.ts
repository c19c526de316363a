// PodProbeMarker validating webhook (upstream pkg/webhook/podprobemarker/validating): a fixed
// non-empty selector and well-formed probes whose results land in a condition and/or metadata.
import type { PodProbeMarker } from '../../apis/apps/podprobemarker.ts';
import type { Probe } from '../../apis/core.ts';
import { type FieldError, duplicate, forbidden, invalid, notSupported, required } from '../../apis/field-errors.ts';
import { labelSelectorAsSelector, validateLabelSelector, validateLabels } from '../../util/labelselector.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

// Pod condition types Kubernetes and Kruise own; a probe may not report into them.
const RESERVED_CONDITION_TYPES = [
  'PodScheduled', 'Ready', 'Initialized', 'ContainersReady', 'PodReadyToStartContainers', 'DisruptionTarget',
  'InPlaceUpdateReady', 'KruisePodReady',
];
const MARKER_STATES = ['Succeeded', 'Failed'];

function validatePort(port: number | string | undefined, path: string): FieldError[] {
  if (typeof port === 'number') return port >= 1 && port <= 65535 ? [] : [invalid(path, port, 'must be between 1 and 65535, inclusive')];
  if (typeof port === 'string' && /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(port) && port.length <= 15 && /[a-z]/.test(port)) return [];
  return [invalid(path, port ?? '', 'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)')];
}

function validateHandler(probe: Probe | undefined, path: string): FieldError[] {
  if (!probe) return [required(path, 'probe is required')];
  const handlers = (['exec', 'httpGet', 'tcpSocket'] as const).filter((h) => probe[h]);
  if (handlers.length === 0) return [required(path, 'must specify a handler type')];
  if (handlers.length > 1) return [forbidden(`${path}.${handlers[1]}`, 'may not specify more than 1 handler type')];
  const errs: FieldError[] = [];
  if (probe.exec && !(probe.exec.command ?? []).length) errs.push(required(`${path}.exec.command`));
  if (probe.httpGet) {
    const hp = `${path}.httpGet`;
    if (probe.httpGet.host) errs.push(forbidden(`${hp}.host`, 'host is not supported'));
    if (probe.httpGet.path !== undefined && !probe.httpGet.path.startsWith('/')) errs.push(invalid(`${hp}.path`, probe.httpGet.path, "must start with '/'"));
    if (probe.httpGet.scheme && !['HTTP', 'HTTPS'].includes(probe.httpGet.scheme)) errs.push(notSupported(`${hp}.scheme`, probe.httpGet.scheme, ['HTTP', 'HTTPS']));
    errs.push(...validatePort(probe.httpGet.port, `${hp}.port`));
  }
  if (probe.tcpSocket) {
    if (probe.tcpSocket.host) errs.push(forbidden(`${path}.tcpSocket.host`, 'host is not supported'));
    errs.push(...validatePort(probe.tcpSocket.port, `${path}.tcpSocket.port`));
  }
  return errs;
}

export function validatePodProbeMarkerSpec(obj: PodProbeMarker): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj.spec;
  const selector = spec?.selector;
  if (!selector || Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions ?? []).length === 0) {
    errs.push(invalid('spec.selector', selector ?? null, 'empty selector is not valid for PodProbeMarker.'));
  } else {
    errs.push(...validateLabelSelector(selector, 'spec.selector'));
    try {
      labelSelectorAsSelector(selector);
    } catch (e) {
      errs.push(invalid('spec.selector', selector, (e as Error).message));
    }
  }
  const probes = spec?.probes ?? [];
  if (probes.length === 0) errs.push(required('spec.probes', 'probes can not be empty'));
  const names = new Set<string>();
  const conditionTypes = new Set<string>();
  probes.forEach((p, i) => {
    const pp = `spec.probes[${i}]`;
    if (!p.name) errs.push(required(`${pp}.name`, 'probe name can not be empty'));
    else {
      if (names.has(p.name)) errs.push(duplicate(`${pp}.name`, p.name));
      names.add(p.name);
      if (p.name.includes('#')) errs.push(invalid(`${pp}.name`, p.name, "probe name can't contain '#'"));
      if (RESERVED_CONDITION_TYPES.includes(p.name)) errs.push(invalid(`${pp}.name`, p.name, 'probe name can not be a reserved pod condition type'));
    }
    if (!p.containerName) errs.push(required(`${pp}.containerName`, 'containerName can not be empty'));
    errs.push(...validateHandler(p.probe, `${pp}.probe`));
    const policies = p.markerPolicy ?? [];
    if (!p.podConditionType && policies.length === 0) {
      errs.push(forbidden(`${pp}.podConditionType`, 'podConditionType and markerPolicy cannot be empty at the same time'));
    }
    if (p.podConditionType) {
      if (conditionTypes.has(p.podConditionType)) errs.push(duplicate(`${pp}.podConditionType`, p.podConditionType));
      conditionTypes.add(p.podConditionType);
      if (RESERVED_CONDITION_TYPES.includes(p.podConditionType)) {
        errs.push(invalid(`${pp}.podConditionType`, p.podConditionType, 'podConditionType can not be a reserved pod condition type'));
      }
    }
    const states = new Set<string>();
    policies.forEach((m, j) => {
      const mp = `${pp}.markerPolicy[${j}]`;
      if (!MARKER_STATES.includes(m.state)) errs.push(notSupported(`${mp}.state`, m.state, MARKER_STATES));
      if (states.has(m.state)) errs.push(duplicate(`${mp}.state`, m.state));
      states.add(m.state);
      if (Object.keys(m.labels ?? {}).length + Object.keys(m.annotations ?? {}).length === 0) {
        errs.push(required(mp, 'markerPolicy labels or annotations can not be empty'));
      }
      errs.push(...validateLabels(m.labels, `${mp}.labels`));
    });
  });
  return errs;
}

export function validatePodProbeMarkerUpdate(obj: PodProbeMarker, old: PodProbeMarker): FieldError[] {
  if (JSON.stringify(obj.spec?.selector ?? null) !== JSON.stringify(old.spec?.selector ?? null)) {
    return [forbidden('spec.selector', 'selector is immutable')];
  }
  return [];
}

export function validatePodProbeMarker(obj: PodProbeMarker, old: PodProbeMarker | undefined, _ctx: AdmissionContext): FieldError[] {
  const errs = validatePodProbeMarkerSpec(obj);
  if (old) errs.push(...validatePodProbeMarkerUpdate(obj, old));
  return errs;
}
