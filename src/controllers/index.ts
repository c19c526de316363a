// Every controller the manager runs on the leader (with --sharding: the sharded ones on every shard).
import { advancedCronJobController } from './advancedcronjob/controller.ts';
import { broadcastJobController } from './broadcastjob/controller.ts';
import { cloneSetController } from './cloneset/controller.ts';
import { containerLaunchPriorityController } from './containerlaunchpriority/controller.ts';
import { daemonSetController } from './daemonset/controller.ts';
import { ephemeralJobController } from './ephemeraljob/controller.ts';
import { containerRecreateRequestController } from './containerrecreaterequest/controller.ts';
import { imageListPullJobController } from './imagelistpulljob/controller.ts';
import { imagePullJobController } from './imagepulljob/controller.ts';
import { nodeImageController } from './nodeimage/controller.ts';
import { persistentPodStateController } from './persistentpodstate/controller.ts';
import { nodePodProbeController } from './nodepodprobe/controller.ts';
import { podProbeMarkerController } from './podprobemarker/controller.ts';
import { podReadinessController } from './podreadiness/controller.ts';
import { podUnavailableBudgetController } from './podunavailablebudget/controller.ts';
import { resourceDistributionController } from './resourcedistribution/controller.ts';
import { sidecarSetController } from './sidecarset/controller.ts';
import { sidecarTerminatorController } from './sidecarterminator/controller.ts';
import { statefulSetController } from './statefulset/controller.ts';
import { unitedDeploymentController } from './uniteddeployment/controller.ts';
import type { ControllerSetup } from './types.ts';
import { workloadSpreadController } from './workloadspread/controller.ts';

export const allControllers: readonly ControllerSetup[] = [
  cloneSetController,
  daemonSetController,
  statefulSetController,
  nodeImageController,
  imagePullJobController,
  imageListPullJobController,
  containerRecreateRequestController,
  podReadinessController,
  sidecarTerminatorController,
  sidecarSetController,
  containerLaunchPriorityController,
  broadcastJobController,
  advancedCronJobController,
  unitedDeploymentController,
  ephemeralJobController,
  podUnavailableBudgetController,
  resourceDistributionController,
  persistentPodStateController,
  podProbeMarkerController,
  nodePodProbeController,
  workloadSpreadController,
];

/** With --sharding (docs/sharding.md): the sharder the leader runs, and which controllers run on every shard. */
export { sharderController, SHARDER_ACCESS, SHARDED_CHILDREN, SHARDED_CONTROLLERS, SHARDED_WORKLOADS } from './sharder/controller.ts';
