// A PodProbeMarker probe's markerPolicy applied to a pod (spec §15), one rule for both ways a probe
// result arrives: from kruise-daemon through the node's NodePodProbe (the NodePodProbe controller)
// and from a serverless provider's pod condition (the PodProbeMarker controller, gate
// EnablePodProbeMarkerOnServerless). The keys of the policies for other states are removed, then
// the labels and annotations of the policy for the probe's state are set, so a flipped result
// flips the marks. Also which markers apply to a pod, shared by the pod webhook's serverless hook.
import type { PodProbeMarkerSpec, ProbeState } from '../apis/apps/podprobemarker.ts';
import { POD_PROBE_MARKER_LIST_ANNOTATION } from '../apis/constants.ts';
import { labelSelectorAsSelector, type LabelSelectorLike } from './labelselector.ts';

export type MarkerPolicy = NonNullable<PodProbeMarkerSpec['probes'][number]['markerPolicy']>[number];

/** Wanted label and annotation values; null removes the key. Later probes override earlier ones. */
export interface MarkWants {
  labels: Map<string, string | null>;
  annotations: Map<string, string | null>;
}

export const emptyMarkWants = (): MarkWants => ({ labels: new Map(), annotations: new Map() });

/** `state` is a ProbeState as stored: a value it does not know matches no policy and clears them all. */
export function applyMarkerPolicy(wants: MarkWants, policies: readonly MarkerPolicy[], state: ProbeState | (string & {})): void {
  for (const p of policies.filter((x) => x.state !== state)) {
    for (const k of Object.keys(p.labels ?? {})) wants.labels.set(k, null);
    for (const k of Object.keys(p.annotations ?? {})) wants.annotations.set(k, null);
  }
  for (const p of policies.filter((x) => x.state === state)) {
    for (const [k, v] of Object.entries(p.labels ?? {})) wants.labels.set(k, v);
    for (const [k, v] of Object.entries(p.annotations ?? {})) wants.annotations.set(k, v);
  }
}

/** Metadata changes as a merge patch holds them: null removes a key. */
export interface MarkPatch {
  labels?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
}

/** Only what differs from the pod's metadata; empty when nothing does. */
export function markPatch(wants: MarkWants, meta: { labels?: Record<string, string>; annotations?: Record<string, string> }): MarkPatch {
  const changed = (want: Map<string, string | null>, have: Record<string, string> | undefined) => {
    const out: Record<string, string | null> = {};
    for (const [k, v] of want) {
      if (v === null ? have && Object.hasOwn(have, k) : have?.[k] !== v) out[k] = v;
    }
    return Object.keys(out).length ? out : undefined;
  };
  const patch: MarkPatch = {};
  const labels = changed(wants.labels, meta.labels);
  const annotations = changed(wants.annotations, meta.annotations);
  if (labels) patch.labels = labels;
  if (annotations) patch.annotations = annotations;
  return patch;
}

export type MarkerProbe = PodProbeMarkerSpec['probes'][number];

/**
 * The PodProbeMarkers of the pod's namespace that apply to it (upstream GetPodProbeMarkerForPod):
 * those named in its kruise.io/podprobemarker-list annotation when it has one, else those whose
 * selector matches its labels — an empty or invalid selector matches nothing. By name, so the
 * first marker to claim a condition type is always the same one.
 */
export function podProbeMarkersForPod<T extends { metadata: { name?: string }; spec?: { selector?: LabelSelectorLike } }>(
  pod: { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } },
  markers: readonly T[],
): T[] {
  const listed = pod.metadata.annotations?.[POD_PROBE_MARKER_LIST_ANNOTATION];
  const names = listed ? new Set(listed.split(',')) : undefined;
  const applies = (m: T) => {
    if (names) return names.has(m.metadata.name ?? '');
    try {
      const selector = labelSelectorAsSelector(m.spec?.selector);
      return !selector.isEverything() && selector.matches(pod.metadata.labels ?? {});
    } catch {
      return false;
    }
  };
  return markers.filter(applies).sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
}
