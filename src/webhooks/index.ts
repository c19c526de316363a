// Every admission webhook the manager serves, in one list (spec §19). Each resource's folder owns its
// logic; this file only gathers their registrations.
import type { WebhookRegistration } from '../runtime/webhook/types.ts';
import { registrations as advancedcronjob } from './advancedcronjob/index.ts';
import { registrations as broadcastjob } from './broadcastjob/index.ts';
import { registrations as cloneset } from './cloneset/index.ts';
import { registrations as containerrecreaterequest } from './containerrecreaterequest/index.ts';
import { registrations as daemonset } from './daemonset/index.ts';
import { registrations as deletionprotection } from './deletionprotection/index.ts';
import { registrations as ephemeraljob } from './ephemeraljob/index.ts';
import { registrations as imagelistpulljob } from './imagelistpulljob/index.ts';
import { registrations as imagepulljob } from './imagepulljob/index.ts';
import { registrations as nodeimage } from './nodeimage/index.ts';
import { registrations as persistentpodstate } from './persistentpodstate/index.ts';
import { registrations as pod } from './pod/index.ts';
import { registrations as podprobemarker } from './podprobemarker/index.ts';
import { registrations as podunavailablebudget } from './podunavailablebudget/index.ts';
import { registrations as resourcedistribution } from './resourcedistribution/index.ts';
import { registrations as sidecarset } from './sidecarset/index.ts';
import { registrations as statefulset } from './statefulset/index.ts';
import { registrations as uniteddeployment } from './uniteddeployment/index.ts';
import { registrations as workloadspread } from './workloadspread/index.ts';

export const allRegistrations: readonly WebhookRegistration[] = [
  ...advancedcronjob,
  ...broadcastjob,
  ...cloneset,
  ...containerrecreaterequest,
  ...daemonset,
  ...deletionprotection,
  ...ephemeraljob,
  ...imagelistpulljob,
  ...imagepulljob,
  ...nodeimage,
  ...persistentpodstate,
  ...pod,
  ...podprobemarker,
  ...podunavailablebudget,
  ...resourcedistribution,
  ...sidecarset,
  ...statefulset,
  ...uniteddeployment,
  ...workloadspread,
];
