// The two node scopes (context.ts NodeScope): one real node with its container runtime, or every
// simulated node of the local cluster, tracked through a Node informer.
import { CRR_NODE_NAME_LABEL } from '../apis/constants.ts';
import type { KubeObject } from '../apis/core-objects.ts';
import { Nodes } from '../runtime/resources.ts';
import type { SharedInformerFactory } from '../runtime/informer-factory.ts';
import { unwrapDeleted } from '../runtime/store.ts';
import { parseSelector, type Selector } from '../util/labelselector.ts';
import type { NodeScope } from './context.ts';
import type { ContainerRuntime } from './runtime/types.ts';

export function singleNodeScope(nodeName: string, runtime: ContainerRuntime): NodeScope {
  return {
    crrSelector: { labelSelector: `${CRR_NODE_NAME_LABEL}=${nodeName}` },
    podSelector: { fieldSelector: `spec.nodeName=${nodeName}` },
    nodeNamedSelector: { fieldSelector: `metadata.name=${nodeName}` },
    owns: (n) => n === nodeName,
    runtimeFor: (n) => (n === nodeName ? runtime : undefined),
    onNodeChange: () => {},
  };
}

/**
 * Every node matching selector. Watches cannot be narrowed to a changing set of node names, so
 * they cover all CRRs with a node label, all scheduled pods and all NodeImages and NodePodProbes; owns() filters.
 */
export function selectedNodesScope(
  informers: SharedInformerFactory,
  selector: string,
  runtimeFor: (node: string) => ContainerRuntime,
  forget: (node: string) => void,
): NodeScope {
  const parsed: Selector = parseSelector(selector);
  const nodes = informers.informerFor<KubeObject>(Nodes, { labelSelector: selector });
  const listeners: Array<(node: string) => void> = [];
  const owned = (n: string | undefined) => !!n && !!nodes.lister.get(n) && parsed.matches(nodes.lister.get(n)!.metadata.labels);
  const changed = (node: KubeObject) => {
    for (const fn of listeners) fn(node.metadata.name!);
  };
  nodes.addEventHandler({
    onAdd: changed,
    onDelete: (obj) => {
      const node = unwrapDeleted(obj);
      forget(node.metadata.name!);
      changed(node);
    },
  });
  return {
    crrSelector: { labelSelector: CRR_NODE_NAME_LABEL },
    podSelector: { fieldSelector: 'spec.nodeName!=' },
    nodeNamedSelector: {},
    owns: owned,
    runtimeFor: (n) => (owned(n) ? runtimeFor(n) : undefined),
    onNodeChange: (fn) => {
      listeners.push(fn);
    },
  };
}
