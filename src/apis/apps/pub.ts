// Sub-types shared by several apps.kruise.io kinds (upstream `apis/apps/pub` and friends).

import { Type, type Static } from '@sinclair/typebox';
import { Bool, Int32, Int64, IntOrString, KnownString, LabelSelector, Opt, Str, StringList, StringMap } from '../schema.ts';

export const LifecycleHook = Type.Object({
  labelsHandler: Opt(StringMap()),
  finalizersHandler: Opt(StringList()),
  markPodNotReady: Opt(
    Bool({
      description:
        "MarkPodNotReady = true means the Pod is set 'NotReady' at preparingDelete/preparingUpdate state and restored to 'Ready' at Updated state if it was set 'NotReady' at preparingUpdate state.",
    }),
  ),
});
export type LifecycleHook = Static<typeof LifecycleHook>;

export const Lifecycle = Type.Object(
  {
    preDelete: Opt(LifecycleHook),
    inPlaceUpdate: Opt(LifecycleHook),
    preNormal: Opt(LifecycleHook),
  },
  { description: 'Lifecycle hooks for Pods pre-available (pre-normal), pre-delete and in-place update.' },
);
export type Lifecycle = Static<typeof Lifecycle>;

export const InPlaceUpdateStrategy = Type.Object(
  {
    gracePeriodSeconds: Opt(
      Int32({
        description: 'Timespan between setting the Pod not-ready and updating its images when updating in place.',
      }),
    ),
    imagePreDownloadParallelism: Opt(IntOrString()),
    imagePreDownloadTimeoutSeconds: Opt(Int32()),
    imagePreDownloadMinUpdatedReadyPods: Opt(Int32()),
  },
  { description: 'Strategies for in-place update.' },
);
export type InPlaceUpdateStrategy = Static<typeof InPlaceUpdateStrategy>;

export const UpdatePriorityOrderTerm = Type.Object({ orderedKey: Str() });

export const UpdatePriorityWeightTerm = Type.Object({
  weight: Int32({ description: 'Weight associated with matching matchSelector, in the range 1-100.' }),
  matchSelector: LabelSelector,
});

export const UpdatePriorityStrategy = Type.Object(
  {
    orderPriority: Opt(Type.Array(UpdatePriorityOrderTerm)),
    weightPriority: Opt(Type.Array(UpdatePriorityWeightTerm)),
  },
  { description: 'Rules for the order in which pods are updated; only one of orderPriority and weightPriority.' },
);
export type UpdatePriorityStrategy = Static<typeof UpdatePriorityStrategy>;

export const UpdateScatterStrategy = Type.Array(Type.Object({ key: Str(), value: Str() }), {
  description: 'Scatter pods with these label key/values across the update batches.',
});
export type UpdateScatterStrategy = Static<typeof UpdateScatterStrategy>;

/** The workload a WorkloadSpread / PersistentPodState points at. */
export const TargetReference = Type.Object({
  apiVersion: Str(),
  kind: Str(),
  name: Str(),
});
export type TargetReference = Static<typeof TargetReference>;

export type PodUpdatePolicy = 'ReCreate' | 'InPlaceIfPossible' | 'InPlaceOnly';

/** Job completion policy shared by BroadcastJob, ImagePullJob and ImageListPullJob. */
export const CompletionPolicy = Type.Object({
  type: Opt(KnownString<'Always' | 'Never'>({ description: 'Default is Always.' })),
  activeDeadlineSeconds: Opt(Int64()),
  ttlSecondsAfterFinished: Opt(Int32()),
});
export type CompletionPolicy = Static<typeof CompletionPolicy>;

/** Metadata attached to PullImage CRI calls. */
export const SandboxConfig = Type.Object({ labels: Opt(StringMap()), annotations: Opt(StringMap()) });
