// kruise-daemon's RBAC, next to the sub-controllers that need it (config/rbac/daemon.yaml is
// generated from this by hack/gen-rbac.ts).
import { ConfigMaps, ContainerRecreateRequests, Events, NodeImages, NodePodProbes, Nodes, Pods, Secrets } from '../runtime/resources.ts';
import { access, READ, type Access } from '../runtime/rbac.ts';

export const daemonAccess: readonly Access[] = [
  // Node scope: which nodes this daemon serves (simulated mode: every KWOK node).
  access(Nodes, READ),
  // Pods on its nodes (CRR targets, container meta); the simulated runtime writes pod status.
  access(Pods, READ),
  access(Pods, ['update', 'patch'], 'status'),
  // ContainerRecreateRequest executor: reads them, writes their status.
  access(ContainerRecreateRequests, READ),
  access(ContainerRecreateRequests, ['update', 'patch'], 'status'),
  // Image puller: its node's NodeImage (the pull secrets it names: daemonSecretAccess).
  access(NodeImages, READ),
  access(NodeImages, ['update', 'patch'], 'status'),
  // Prober: its node's NodePodProbe, whose status it writes.
  access(NodePodProbes, READ),
  access(NodePodProbes, ['update', 'patch'], 'status'),
  // Simulated nodes: the kubelet's launch barrier reads the pod's <pod>-barrier ConfigMap.
  access(ConfigMaps, ['get']),
  access(Events, ['create', 'patch']),
  // --metrics-secure on :10221.
  { group: 'authentication.k8s.io', resources: ['tokenreviews'], verbs: ['create'] },
  { group: 'authorization.k8s.io', resources: ['subjectaccessreviews'], verbs: ['create'] },
];

/**
 * In kruise-daemon-config only (a Role there, as upstream's kruise-daemon-secret-role): the pull
 * secrets NodeImages name, which the ImagePullJob controller copies there. The daemon can read no
 * other Secret.
 */
export const daemonSecretAccess: readonly Access[] = [access(Secrets, ['get'])];
