// The suite's WorkloadSpread custom-workload whitelist (kruise-configuration key
// WorkloadSpread_Watch_Custom_Workload_WhiteList). Two files that may run at the same time need an
// entry in it (manager.test.ts: upstream's TFJob example; custom-workloads.test.ts: its Sprocket
// CRD): both write this same value and neither removes the key, so one never takes away the
// other's entry.
import { apply, kubectl } from './cluster.ts';

export const WORKLOADSPREAD_WHITELIST_KEY = 'WorkloadSpread_Watch_Custom_Workload_WhiteList';
export const SPROCKET = { Group: 'customwl.kruise-ts.io', Version: 'v1', Kind: 'Sprocket' };
export const SUITE_WORKLOADSPREAD_WHITELIST = JSON.stringify({
  workloads: [
    { Group: 'kubeflow.org', Kind: 'TFJob', replicasPath: 'spec.tfReplicaSpecs.Worker.replicas' },
    { ...SPROCKET, replicasPath: 'spec.replicas' },
  ],
});

/**
 * Installs a namespaced CRD standing for a third-party workload: schemaless spec, a scale
 * subresource (`spec.replicas`, `status.replicas`, selector string `spec.podSelector`), and waits
 * until it is Established.
 */
export async function installScalableWorkloadCRD(group: string, plural: string, kind: string): Promise<void> {
  const name = `${plural}.${group}`;
  await apply({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group,
      names: { plural, singular: kind.toLowerCase(), kind },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
          },
          subresources: {
            scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.podSelector' },
          },
        },
      ],
    },
  });
  await kubectl(['wait', '--for=condition=Established', `crd/${name}`, '--timeout=60s']);
}
