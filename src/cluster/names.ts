/** The local cluster `kruise start` and `kruise cluster` use when no name is given. */
export const DEFAULT_CLUSTER = 'default';

/** The local cluster's default StorageClass (kind's name for its own) and its provisioner (src/cluster/storage.ts). */
export const DEFAULT_STORAGE_CLASS = 'standard';
export const LOCAL_VOLUME_PROVISIONER = 'kruise-ts.io/local-volume';
