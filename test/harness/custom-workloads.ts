// The suite's WorkloadSpread custom-workload whitelist (kruise-configuration key
// WorkloadSpread_Watch_Custom_Workload_WhiteList). Two files that may run at the same time need an
// entry in it (manager.test.ts: upstream's TFJob example; custom-workloads.test.ts: its Sprocket
// CRD): both write this same value and neither removes the key, so one never takes away the
// other's entry.
export const WORKLOADSPREAD_WHITELIST_KEY = 'WorkloadSpread_Watch_Custom_Workload_WhiteList';
export const SPROCKET = { Group: 'customwl.kruise-ts.io', Version: 'v1', Kind: 'Sprocket' };
export const SUITE_WORKLOADSPREAD_WHITELIST = JSON.stringify({
  workloads: [
    { Group: 'kubeflow.org', Kind: 'TFJob', replicasPath: 'spec.tfReplicaSpecs.Worker.replicas' },
    { ...SPROCKET, replicasPath: 'spec.replicas' },
  ],
});
