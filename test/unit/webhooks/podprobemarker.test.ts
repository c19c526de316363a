import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { registrations, validatePodProbeMarker } from '../../../src/webhooks/podprobemarker/index.ts';
import { admission, loadExamples, msg } from './nonworkload-helpers.ts';

const V = 'apps.kruise.io/v1alpha1';
const probe = (p: Record<string, any> = {}) => ({
  name: 'healthy',
  containerName: 'main',
  probe: { exec: { command: ['true'] } },
  podConditionType: 'game.io/healthy',
  ...p,
});
const ppm = (probes: any[], selector: any = { matchLabels: { app: 'game' } }): any => ({ apiVersion: V, kind: 'PodProbeMarker', metadata: { name: 'p', namespace: 'default' }, spec: { selector, probes } });
const errors = (obj: any, old?: any) => msg(validatePodProbeMarker(obj, old, admission(V, old ? 'UPDATE' : 'CREATE')));

describe('PodProbeMarker validation', () => {
  test('upstream examples pass', () => {
    for (const doc of loadExamples('podprobemarker.yaml', 'PodProbeMarker')) assert.equal(errors(doc), '', doc.metadata.name);
  });
  const cases: Array<[string, any, string]> = [
    ['empty selector', ppm([probe()], {}), 'spec.selector: Invalid value: {}: empty selector is not valid for PodProbeMarker.'],
    ['no probes', ppm([]), 'spec.probes: Required value: probes can not be empty'],
    ['duplicate probe', ppm([probe(), probe({ podConditionType: 'other' })]), 'spec.probes[1].name: Duplicate value: "healthy"'],
    ['# in name', ppm([probe({ name: 'a#b' })]), `spec.probes[0].name: Invalid value: "a#b": probe name can't contain '#'`],
    ['no container', ppm([probe({ containerName: '' })]), 'spec.probes[0].containerName: Required value: containerName can not be empty'],
    ['no handler', ppm([probe({ probe: {} })]), 'spec.probes[0].probe: Required value: must specify a handler type'],
    ['two handlers', ppm([probe({ probe: { exec: { command: ['a'] }, tcpSocket: { port: 80 } } })]), 'spec.probes[0].probe.tcpSocket: Forbidden: may not specify more than 1 handler type'],
    ['http host', ppm([probe({ probe: { httpGet: { host: 'x', port: 80, path: '/' } } })]), 'spec.probes[0].probe.httpGet.host: Forbidden: host is not supported'],
    ['no result sink', ppm([probe({ podConditionType: undefined })]), 'spec.probes[0].podConditionType: Forbidden: podConditionType and markerPolicy cannot be empty at the same time'],
    ['bad marker state', ppm([probe({ markerPolicy: [{ state: 'Unknown', labels: { a: 'b' } }] })]), 'spec.probes[0].markerPolicy[0].state: Unsupported value: "Unknown": supported values: "Succeeded", "Failed"'],
    ['empty marker', ppm([probe({ markerPolicy: [{ state: 'Succeeded' }] })]), 'spec.probes[0].markerPolicy[0]: Required value: markerPolicy labels or annotations can not be empty'],
  ];
  for (const [name, obj, expected] of cases) test(name, () => assert.equal(errors(obj), expected));
  test('selector is immutable', () => {
    assert.equal(errors(ppm([probe()], { matchLabels: { app: 'other' } }), ppm([probe()])), 'spec.selector: Forbidden: selector is immutable');
  });
  test('registration gated on PodProbeMarkerGate', () => {
    assert.deepEqual(registrations.map((r) => [r.resource, r.versions, r.gate]), [['podprobemarkers', ['v1alpha1'], 'PodProbeMarkerGate']]);
  });
});
