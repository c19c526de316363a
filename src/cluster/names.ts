/** The local cluster `kruise start` and `kruise cluster` use when no name is given. */
export const DEFAULT_CLUSTER = 'default';
