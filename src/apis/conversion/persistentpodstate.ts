// PersistentPodState v1alpha1 ↔ v1beta1 (behaviour spec §22): the topology terms' v1alpha1
// nodeTopologyKeys is v1beta1 keys, in requiredPersistentTopology and in every
// preferredPersistentTopology preference.

import { withVersion, type KindConversion, type KubeObject } from './shared.ts';
import { isJsonObject } from '../json.ts';

function renameTermKeys(obj: KubeObject, from: string, to: string): KubeObject {
  const spec = obj.spec;
  if (!isJsonObject(spec)) return obj;
  const terms: unknown[] = [spec.requiredPersistentTopology];
  if (Array.isArray(spec.preferredPersistentTopology)) {
    for (const p of spec.preferredPersistentTopology) if (isJsonObject(p)) terms.push(p.preference);
  }
  for (const term of terms) {
    if (!isJsonObject(term) || !Object.hasOwn(term, from)) continue;
    term[to] = term[from];
    delete term[from];
  }
  return obj;
}

export const persistentPodStateConversion: KindConversion = {
  toV1beta1: (obj) => renameTermKeys(withVersion(obj, 'v1beta1'), 'nodeTopologyKeys', 'keys'),
  toV1alpha1: (obj) => renameTermKeys(withVersion(obj, 'v1alpha1'), 'keys', 'nodeTopologyKeys'),
};
