// The Kruise kinds the daemon reads and writes, at their storage version (v1beta1): the daemon
// writes status fields (containerStatusSnapshot, conditions) that only v1beta1 carries.
import type { ResourceType } from '../runtime/client.ts';

export const ContainerRecreateRequests: ResourceType = Object.freeze({
  group: 'apps.kruise.io', version: 'v1beta1', resource: 'containerrecreaterequests', kind: 'ContainerRecreateRequest', namespaced: true,
});

export const NodeImages: ResourceType = Object.freeze({
  group: 'apps.kruise.io', version: 'v1beta1', resource: 'nodeimages', kind: 'NodeImage', namespaced: false,
});
