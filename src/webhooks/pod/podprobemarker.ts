// The PodProbeMarker hook of /mutate-pod (upstream podProbeMarkerMutatingPod, gate
// EnablePodProbeMarkerOnServerless, spec §15): a pod created where a serverless provider may run it
// (no kruise-daemon there) carries the probes it must run. The probes of the PodProbeMarkers
// selecting the pod go in the annotation kruise.io/podprobe as the JSON list upstream writes —
// PodContainerProbe objects with Go's field order, markerPolicy left out (the manager applies it
// from the condition the provider reports) — and their names in kruise.io/podprobemarker-list.
// Only probes with a podConditionType (where the provider reports) for a container the pod has
// (or a restartable init container) are handed over; the first probe per condition type and per
// container/probe name wins. Cache-only: a namespace without PodProbeMarkers costs one list.
import { APPS_GROUP, POD_PROBE_ANNOTATION, POD_PROBE_MARKER_LIST_ANNOTATION } from '../../apis/constants.ts';
import type { Pod, Stored } from '../../apis/core-objects.ts';
import type { PodProbeMarker } from '../../apis/apps/podprobemarker.ts';
import { marshalGoJSON } from '../../util/revision.ts';
import { podProbeMarkersForPod, type MarkerProbe } from '../../util/probe-marker.ts';
import type { PodAdmission } from './types.ts';
import { isJsonObject, type JsonObject } from '../../apis/json.ts';

/** json.Marshal of a Go struct: the fields in this order, undefined ones left out (omitempty). */
function goStruct(fields: Array<[string, string | undefined]>): string {
  return `{${fields
    .filter((f): f is [string, string] => f[1] !== undefined)
    .map(([k, v]) => `${marshalGoJSON(k)}:${v}`)
    .join(',')}}`;
}
const omitEmpty = (v: unknown) => (v === undefined || v === null || v === '' || v === 0 || v === false ? undefined : marshalGoJSON(v));
const omitEmptyList = (v: unknown) => (Array.isArray(v) && v.length ? marshalGoJSON(v) : undefined);
const required = (v: unknown, zero: unknown) => marshalGoJSON(v ?? zero);

/** corev1.Probe (k8s.io/api v0.30): ProbeHandler inline, then the timings. */
function goProbe(p: unknown): string {
  const probe = isJsonObject(p) ? p : {};
  const handler = (v: unknown, fields: (h: JsonObject) => Array<[string, string | undefined]>) =>
    isJsonObject(v) ? goStruct(fields(v)) : undefined;
  return goStruct([
    ['exec', handler(probe.exec, (h) => [['command', omitEmptyList(h.command)]])],
    [
      'httpGet',
      handler(probe.httpGet, (h) => [
        ['path', omitEmpty(h.path)],
        ['port', required(h.port, 0)],
        ['host', omitEmpty(h.host)],
        ['scheme', omitEmpty(h.scheme)],
        [
          'httpHeaders',
          Array.isArray(h.httpHeaders) && h.httpHeaders.length
            ? `[${h.httpHeaders
                .map((x) => (isJsonObject(x) ? x : {}))
                .map((x) =>
                  goStruct([
                    ['name', required(x.name, '')],
                    ['value', required(x.value, '')],
                  ]),
                )
                .join(',')}]`
            : undefined,
        ],
      ]),
    ],
    [
      'tcpSocket',
      handler(probe.tcpSocket, (h) => [
        ['port', required(h.port, 0)],
        ['host', omitEmpty(h.host)],
      ]),
    ],
    [
      'grpc',
      handler(probe.grpc, (h) => [
        ['port', required(h.port, 0)],
        ['service', required(h.service, null)],
      ]),
    ],
    ['initialDelaySeconds', omitEmpty(probe.initialDelaySeconds)],
    ['timeoutSeconds', omitEmpty(probe.timeoutSeconds)],
    ['periodSeconds', omitEmpty(probe.periodSeconds)],
    ['successThreshold', omitEmpty(probe.successThreshold)],
    ['failureThreshold', omitEmpty(probe.failureThreshold)],
    [
      'terminationGracePeriodSeconds',
      probe.terminationGracePeriodSeconds == null ? undefined : marshalGoJSON(probe.terminationGracePeriodSeconds),
    ],
  ]);
}

/** The kruise.io/podprobe value: []PodContainerProbe as upstream marshals it (no markerPolicy). */
export function podProbeAnnotation(probes: readonly MarkerProbe[]): string {
  return `[${probes
    .map((p) =>
      goStruct([
        ['name', marshalGoJSON(p.name)],
        ['containerName', marshalGoJSON(p.containerName)],
        ['probe', goProbe(p.probe)],
        ['podConditionType', omitEmpty(p.podConditionType)],
      ]),
    )
    .join(',')}]`;
}

/** What the pod is handed: the probes and the names of the markers they come from (sorted). */
export function serverlessProbes(pod: Pod, markers: readonly Stored<PodProbeMarker>[]): { probes: MarkerProbe[]; markers: string[] } {
  const containers = new Set([
    ...(pod.spec?.containers ?? []).map((c) => c.name),
    ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => c.name),
  ]);
  const probes: MarkerProbe[] = [];
  const names = new Set<string>();
  const keys = new Set<string>();
  const conditionTypes = new Set<string>();
  for (const ppm of markers) {
    for (const probe of ppm.spec?.probes ?? []) {
      const key = `${probe.containerName}/${probe.name}`;
      const type = probe.podConditionType;
      if (!type || conditionTypes.has(type) || keys.has(key) || !containers.has(probe.containerName)) continue;
      const { markerPolicy: _markerPolicy, ...handedOver } = probe;
      probes.push(handedOver);
      keys.add(key);
      conditionTypes.add(type);
      names.add(ppm.metadata.name ?? '');
    }
  }
  return { probes, markers: [...names].sort() };
}

export async function annotateServerlessProbes(pod: Pod, req: PodAdmission): Promise<boolean> {
  if (!req.cache) return false;
  const namespace = pod.metadata.namespace ?? '';
  const all = await req.cache.list<Stored<PodProbeMarker>>(`${APPS_GROUP}/v1alpha1`, 'PodProbeMarker', { namespace });
  if (!all.length) return false;
  const { probes, markers } = serverlessProbes(pod, podProbeMarkersForPod(pod, all));
  if (!probes.length) return false;
  pod.metadata.annotations = {
    ...pod.metadata.annotations,
    [POD_PROBE_ANNOTATION]: podProbeAnnotation(probes),
    [POD_PROBE_MARKER_LIST_ANNOTATION]: markers.join(','),
  };
  return true;
}
