// Nodes run by a virtual kubelet (serverless container platforms) have no kruise-daemon, so
// containers there cannot be killed through a ContainerRecreateRequest: the CRR webhook marks CRRs
// for such nodes and the sidecar terminator stops sidecars by swapping their image instead
// (upstream pkg/util VirtualKubeletLabelKey/Value).

export const VIRTUAL_KUBELET_LABEL = 'type';
export const VIRTUAL_KUBELET_LABEL_VALUE = 'virtual-kubelet';

export function isVirtualKubeletNode(node: { metadata?: { labels?: Record<string, string> | null } | null } | null | undefined): boolean {
  return node?.metadata?.labels?.[VIRTUAL_KUBELET_LABEL] === VIRTUAL_KUBELET_LABEL_VALUE;
}
