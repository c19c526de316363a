// PodProbeMarker validating webhook (upstream pkg/webhook/podprobemarker/validating, with the
// httpGet probes of upstream master): a non-empty selector and well-formed probes whose results land
// in a condition and/or metadata. Upstream's paths and words, including its quirks (probe problems
// reported at spec.probes or spec.probe, the first broken probe rule ending the walk).
import type { PodProbeMarker } from '../../apis/apps/podprobemarker.ts';
import type { Probe } from '../../apis/core.ts';
import { type FieldError, forbidden, invalid, notSupported, required } from '../../apis/field-errors.ts';
import { AdmissionDenied, type AdmissionContext } from '../../runtime/webhook/types.ts';
import { isQualifiedName, labelSelectorAsSelector, validateLabelSelector, validateLabels } from '../../util/labelselector.ts';
import { validateAnnotations, validateNonnegative } from '../podtemplate.ts';

// Pod condition types Kubernetes and Kruise own; a probe may not be named after them.
const NATIVE_POD_CONDITIONS = new Set(['PodScheduled', 'Initialized', 'Ready', 'ContainersReady', 'KruisePodReady', 'InPlaceUpdateReady']);
const MARKER_STATES = ['Succeeded', 'Failed'];
const HTTP_SCHEMES = ['HTTP', 'HTTPS'];
const HTTP_HEADER_NAME_RE = /^[-A-Za-z0-9]+$/;

/** validation.IsValidPortNum / IsValidPortName, as ValidatePortNumOrName reports them. */
function validatePortNumOrName(port: number | string | undefined, path: string): FieldError[] {
  if (typeof port === 'number') return port >= 1 && port <= 65535 ? [] : [invalid(path, port, 'must be between 1 and 65535, inclusive')];
  const name = port ?? '';
  const msgs: string[] = [];
  if (name.length > 15) msgs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name)) msgs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) msgs.push('must contain at least one letter (a-z)');
  if (name.includes('--')) msgs.push('must not contain consecutive hyphens');
  if (name.startsWith('-') || name.endsWith('-')) msgs.push('must not begin or end with a hyphen');
  return msgs.map((m) => invalid(path, name, m));
}

function validateHandler(probe: Probe, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let handlers = 0;
  if (probe.exec) {
    handlers++;
    if (!(probe.exec.command ?? []).length) errs.push(required(`${path}.exec.command`));
  }
  if (probe.httpGet) {
    const hp = `${path}.httpGet`;
    if (handlers++ > 0) errs.push(forbidden(hp, 'may not specify more than 1 handler type'));
    else {
      const http = probe.httpGet;
      if (!http.path) errs.push(required(`${hp}.path`));
      if (http.host) errs.push(invalid(`${hp}.host`, http.host, 'host field in probes is not allowed'));
      errs.push(...validatePortNumOrName(http.port, `${hp}.port`));
      if (!HTTP_SCHEMES.includes(http.scheme ?? '')) errs.push(notSupported(`${hp}.scheme`, http.scheme ?? '', HTTP_SCHEMES));
      for (const header of http.httpHeaders ?? []) {
        if (!HTTP_HEADER_NAME_RE.test(header.name ?? '')) {
          errs.push(
            invalid(
              `${hp}.httpHeaders`,
              header.name ?? '',
              "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
            ),
          );
        }
      }
    }
  }
  if (probe.tcpSocket) {
    const tp = `${path}.tcpSocket`;
    if (handlers++ > 0) errs.push(forbidden(tp, 'may not specify more than 1 handler type'));
    else {
      if (probe.tcpSocket.host) errs.push(invalid(`${tp}.host`, probe.tcpSocket.host, 'host field in probes is not allowed'));
      errs.push(...validatePortNumOrName(probe.tcpSocket.port, `${tp}.port`));
    }
  }
  if (handlers === 0) errs.push(required(path, 'must specify a handler type'));
  return errs;
}

function validateProbe(probe: Probe | undefined, path: string): FieldError[] {
  if (!probe) return [invalid(path, null, "probe can't be empty in podProbeMarker.")];
  return [
    ...validateHandler(probe, path),
    ...validateNonnegative(probe.initialDelaySeconds ?? 0, `${path}.initialDelaySeconds`),
    ...validateNonnegative(probe.timeoutSeconds ?? 0, `${path}.timeoutSeconds`),
    ...validateNonnegative(probe.periodSeconds ?? 0, `${path}.periodSeconds`),
    ...validateNonnegative(probe.successThreshold ?? 0, `${path}.successThreshold`),
    ...validateNonnegative(probe.failureThreshold ?? 0, `${path}.failureThreshold`),
  ];
}

type MarkerPolicy = NonNullable<NonNullable<NonNullable<PodProbeMarker['spec']>['probes']>[number]['markerPolicy']>[number];

function validateMarkerPolicy(policy: MarkerPolicy, path: string): FieldError[] {
  if (!MARKER_STATES.includes(policy.state)) return [required(`${path}.state`, "marker policy state must be 'True' or 'False'")];
  if (!Object.keys(policy.labels ?? {}).length && !Object.keys(policy.annotations ?? {}).length) {
    return [required(path, "marker policy annotations or labels can't be both empty")];
  }
  // Upstream runs ValidateObjectMeta over {labels, annotations} below the policy's path.
  return [...validateLabels(policy.labels, `${path}.labels`), ...validateAnnotations(policy.annotations, `${path}.annotations`)];
}

export function validatePodProbeMarkerSpec(obj: PodProbeMarker): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj.spec;
  const selector = spec?.selector;
  if (!selector) errs.push(invalid('spec.selector', null, 'empty Selector is not valid for PodProbeMarker.'));
  else {
    errs.push(...validateLabelSelector(selector, 'spec.selector'));
    if (Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions ?? []).length === 0) {
      errs.push(invalid('spec.selector', selector, 'empty selector is not valid for podProbeMarker.'));
    }
    try {
      labelSelectorAsSelector(selector);
    } catch {
      errs.push(invalid('spec.selector.selector', selector, ''));
    }
  }
  const probes = spec?.probes ?? [];
  if (probes.length === 0) return [...errs, invalid('spec.probes', probes, 'empty probes is not valid for PodProbeMarker.')];
  const names = new Set<string>();
  const conditionTypes = new Set<string>();
  for (const p of probes) {
    const name = p.name ?? '';
    if (name.includes('#')) return [...errs, invalid('spec.probes', name, "probe name can't contains '#'.")];
    if (!name) return [...errs, invalid('spec.probes', name, "probe name can't be empty in PodProbeMarker.")];
    if (!p.containerName)
      return [...errs, invalid('spec.probes', p.containerName ?? '', "probe containerName can't be empty in PodProbeMarker.")];
    if (NATIVE_POD_CONDITIONS.has(name)) return [...errs, invalid('spec.probes', name, `probe name can't be ${name}`)];
    if (names.has(name)) return [...errs, invalid('spec.probes', name, 'probe name must be unique in PodProbeMarker.')];
    names.add(name);
    errs.push(...validateProbe(p.probe, 'spec.probe'));
    const policies = p.markerPolicy ?? [];
    if (!p.podConditionType && policies.length === 0) {
      return [...errs, invalid('spec.probes', p, 'podConditionType and markerPolicy cannot be empty at the same time')];
    }
    if (p.podConditionType) {
      if (conditionTypes.has(p.podConditionType)) {
        return [
          ...errs,
          invalid('spec.probes', p.podConditionType, `podConditionType ${p.podConditionType} must be unique in podProbeMarker`),
        ];
      }
      conditionTypes.add(p.podConditionType);
      for (const detail of isQualifiedName(p.podConditionType)) errs.push(invalid('spec', p.podConditionType, detail));
    }
    const states = new Set<string>();
    for (const policy of policies) {
      if (states.has(policy.state)) return [...errs, invalid('spec.markerPolicy', policy.state, 'marker policy state must be unique.')];
      states.add(policy.state);
      errs.push(...validateMarkerPolicy(policy, 'spec.markerPolicy'));
    }
  }
  return errs;
}

export function validatePodProbeMarkerUpdate(obj: PodProbeMarker, old: PodProbeMarker): FieldError[] {
  if (JSON.stringify(obj.spec?.selector ?? null) !== JSON.stringify(old.spec?.selector ?? null)) {
    return [invalid('selector', obj.spec?.selector ?? null, 'selector must be immutable')];
  }
  return [];
}

export function validatePodProbeMarker(obj: PodProbeMarker, old: PodProbeMarker | undefined, ctx: AdmissionContext): FieldError[] {
  // Served whatever the gates, as upstream does: without them no PodProbeMarker is admitted.
  for (const gate of ['PodProbeMarkerGate', 'KruiseDaemon'] as const) {
    if (!ctx.features[gate]) throw new AdmissionDenied(`feature-gate ${gate} is not enabled`, 403);
  }
  const errs = validatePodProbeMarkerSpec(obj);
  if (old) errs.push(...validatePodProbeMarkerUpdate(obj, old));
  return errs;
}
