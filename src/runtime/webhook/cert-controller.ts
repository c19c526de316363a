// The webhook controller (pkg/webhook/util/controller/webhook_controller.go): keeps certificates,
// the server's cert dir, the webhook configurations and the CRD conversion config in line.

import path from 'node:path';
import type { LabelSelector } from '../../apis/core.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import type { KubeClient } from '../client.ts';
import type { KubeObject } from '../../apis/core-objects.ts';
import {
  CustomResourceDefinitions,
  MutatingWebhookConfigurations,
  Secrets,
  ValidatingWebhookConfigurations,
  type ResourceType,
} from '../resources.ts';
import { SharedIndexInformer, type InformerOptions } from '../informer.ts';
import { DeletedFinalStateUnknown } from '../store.ts';
import { logger as rootLogger, type Logger } from '../log.ts';
import {
  DEFAULT_NAMESPACE,
  DEFAULT_SECRET_NAME,
  ensureSecretCerts,
  readExternalDirCerts,
  readExternalSecretCerts,
  writeCertsToDir,
  type CertArtifacts,
  type RotationPolicy,
  type SecretRef,
} from './certs.ts';
import {
  MUTATING_WEBHOOK_CONFIGURATION_NAME,
  VALIDATING_WEBHOOK_CONFIGURATION_NAME,
  buildWebhookConfigurations,
  ensureWebhookConfigurations,
  servingNameFor,
  type ClientMode,
} from './configuration.ts';
import { ensureCRDConversion, KRUISE_CRD_GROUPS } from './crd-conversion.ts';
import type { WebhookRegistration } from './types.ts';

export interface WebhookCertControllerOptions {
  client: KubeClient;
  registrations: readonly WebhookRegistration[];
  features: FeatureGates;
  clientMode: ClientMode;
  /** Directory the HTTPS server reads tls.crt/tls.key from. */
  certDir: string;
  /** Secret holding the certificates; default kruise-system/kruise-webhook-certs. */
  secret?: SecretRef;
  /** External mode: read certificates from this Secret or directory instead of managing them. */
  external?: { secret: SecretRef } | { dir: string };
  mutatingName?: string;
  validatingName?: string;
  /** Create missing webhook configurations (default true); false when an installation owns them (service mode). */
  createConfigurations?: boolean;
  timeoutSeconds?: number;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  /** The manager's namespace (kept out of the pod webhooks); default the certificate Secret's. */
  managerNamespace?: string;
  /** Whether to point the kruise CRDs' conversion webhooks at /convert; default true. */
  manageCRDs?: boolean;
  crdGroups?: readonly string[];
  /** Called after the cert dir changed (e.g. WebhookServer.reloadCertificate). */
  onCertsChanged?: (certs: CertArtifacts) => void;
  /** Resync period; default 1 min (upstream defaultResyncPeriod). */
  resyncMs?: number;
  /**
   * Runs right before every write (Secret, webhook configurations, CRDs) and refuses it by
   * throwing: the manager's lease fence, so a leader that was frozen and has lost the lease
   * without knowing it yet never overwrites the new leader's configuration.
   */
  beforeWrite?: () => Promise<void>;
  /**
   * Watch the webhook configurations, the Kruise CRDs and the certificate Secret while running,
   * and sync as soon as one changes (drift is corrected at once, not at the next resync).
   */
  watch?: boolean;
  policy?: RotationPolicy;
  clock?: Clock;
  logger?: Logger;
}

/**
 * Keeps certificates, cert dir, webhook configurations and CRD conversion config in line, once a
 * resync period and whenever trigger() is called. `ready` resolves after the first full sync
 * (upstream's Inited channel), which the manager waits for before serving.
 */
export class WebhookCertController {
  readonly ready: Promise<void>;
  private markReady!: () => void;
  private readonly opts: WebhookCertControllerOptions;
  private readonly clock: Clock;
  private readonly log: Logger;
  private wake: (() => void) | undefined;
  private pending = false;
  private lastCerts: CertArtifacts | undefined;

  constructor(opts: WebhookCertControllerOptions) {
    if (opts.external && !opts.features.EnableExternalCerts)
      throw new Error('external webhook certificates need the EnableExternalCerts feature gate');
    this.opts = opts;
    this.clock = opts.clock ?? realClock;
    this.log = (opts.logger ?? rootLogger).child({ controller: 'webhook-controller' });
    this.ready = new Promise((resolve) => (this.markReady = resolve));
  }

  /** The certificates of the last successful sync. */
  certificates(): CertArtifacts | undefined {
    return this.lastCerts;
  }

  /** Asks for a sync soon (e.g. from a watch on the Secret or the configurations). */
  trigger(): void {
    this.pending = true;
    this.wake?.();
  }

  /**
   * One pass; throws on failure. `beforeWrite` stands in for the controller's own for this pass
   * (before the election the manager has its own reasons to write or not); `certs`, the
   * certificates as the caller has just read (or written) them from the same Secret, for the pass
   * at start-up: reading the Secret again would be one more round trip before the controllers list.
   */
  async sync(pass: { beforeWrite?: () => Promise<void>; certs?: CertArtifacts } = {}): Promise<void> {
    const o = this.opts;
    const beforeWrite = 'beforeWrite' in pass ? pass.beforeWrite : o.beforeWrite;
    const certs = pass.certs ?? (await this.obtainCerts(beforeWrite));
    // Mounted external certificates may already be the server's cert dir (and read-only).
    const inPlace = !!o.external && 'dir' in o.external && path.resolve(o.external.dir) === path.resolve(o.certDir);
    if (!inPlace && writeCertsToDir(o.certDir, certs)) {
      this.log.info({ dir: o.certDir }, 'wrote webhook certificates');
      o.onCertsChanged?.(certs);
    }
    // The configurations and the CRDs are independent: read (and written) together.
    await Promise.all([this.syncConfigurations(certs, beforeWrite), this.syncCRDConversion(certs, beforeWrite)]);
    this.lastCerts = certs;
    this.markReady();
  }

  /**
   * A pass that writes nothing: true, and `ready`, when the certificates, configurations and CRD
   * conversion are already in line (a restart), so the controllers need not wait for this
   * replica to lead before they know admission is registered.
   */
  async verify(certs?: CertArtifacts): Promise<boolean> {
    try {
      await this.sync({
        beforeWrite: async () => {
          throw new Error('not in line: left to the leader');
        },
        certs,
      });
      return true;
    } catch {
      return false;
    }
  }

  private async syncConfigurations(certs: CertArtifacts, beforeWrite: (() => Promise<void>) | undefined): Promise<void> {
    const o = this.opts;
    const names = {
      mutating: o.mutatingName ?? MUTATING_WEBHOOK_CONFIGURATION_NAME,
      validating: o.validatingName ?? VALIDATING_WEBHOOK_CONFIGURATION_NAME,
    };
    // External certificates (EnableExternalCerts): upstream's chart carries every webhook and the
    // injector (cert-manager's cainjector, externalCerts.annotations) their caBundle, so upstream
    // only checks it. Here the webhooks come from the registrations, the chart's configurations
    // start empty: they are written as always, with the external CA, the value the injector
    // injects from the same Secret.
    const desired = buildWebhookConfigurations(o.registrations, {
      clientMode: o.clientMode,
      features: o.features,
      caBundle: certs.caCert,
      mutatingName: names.mutating,
      validatingName: names.validating,
      timeoutSeconds: o.timeoutSeconds,
      namespaceSelector: o.namespaceSelector,
      objectSelector: o.objectSelector,
      managerNamespace: o.managerNamespace ?? o.secret?.namespace,
    });
    const written = await ensureWebhookConfigurations(o.client, desired, beforeWrite, { create: o.createConfigurations });
    if (written.length) this.log.info({ configurations: written }, 'updated webhook configurations');
  }

  private async syncCRDConversion(certs: CertArtifacts, beforeWrite: (() => Promise<void>) | undefined): Promise<void> {
    const o = this.opts;
    if (!(o.manageCRDs ?? true)) return;
    const updated = await ensureCRDConversion(o.client, o.clientMode, certs.caCert, o.crdGroups, beforeWrite);
    if (updated.length) this.log.info({ crds: updated }, 'updated CRD conversion webhooks');
  }

  /**
   * Syncs until signal aborts: every resync period, on trigger() (with `watch`, on every change of
   * what it owns), and with backoff after failures.
   */
  async run(signal: AbortSignal): Promise<void> {
    const watching = this.opts.watch ? this.watchOwned(signal) : [];
    try {
      await this.loop(signal);
    } finally {
      await Promise.all(watching);
    }
  }

  /** Informers on what sync() writes; any event (other than the initial list) asks for a sync. */
  private watchOwned(signal: AbortSignal): Promise<void>[] {
    const o = this.opts;
    const secret = o.secret ?? { namespace: DEFAULT_NAMESPACE, name: DEFAULT_SECRET_NAME };
    const byName = (name: string) => ({ fieldSelector: `metadata.name=${name}` });
    const groups = o.crdGroups ?? KRUISE_CRD_GROUPS;
    type Watched = [ResourceType, InformerOptions<KubeObject>, (obj: KubeObject) => boolean];
    const kruiseCRD = (crd: KubeObject) => groups.includes((crd as { spec?: { group?: string } }).spec?.group ?? '');
    const watched: Watched[] = [
      [MutatingWebhookConfigurations, byName(o.mutatingName ?? MUTATING_WEBHOOK_CONFIGURATION_NAME), () => true],
      [ValidatingWebhookConfigurations, byName(o.validatingName ?? VALIDATING_WEBHOOK_CONFIGURATION_NAME), () => true],
      [Secrets, { namespace: secret.namespace, ...byName(secret.name) }, () => true],
    ];
    if (o.manageCRDs ?? true) watched.push([CustomResourceDefinitions, {}, kruiseCRD]);
    return watched.map(([type, options, relevant]) => {
      const informer = new SharedIndexInformer<KubeObject>(o.client, type, { ...options, logger: this.log });
      const changed = (obj: KubeObject) => {
        if (relevant(obj)) this.trigger();
      };
      informer.addEventHandler({
        onAdd: (obj, initial) => {
          if (!initial) changed(obj);
        },
        onUpdate: (_, obj) => changed(obj),
        onDelete: (obj) => changed(obj instanceof DeletedFinalStateUnknown ? obj.obj : obj),
      });
      return informer.run(signal).catch((err) => this.log.error({ err, resource: type.resource }, 'watch stopped'));
    });
  }

  private async loop(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      this.pending = false;
      let delay = this.opts.resyncMs ?? 60_000;
      try {
        await this.sync();
        failures = 0;
      } catch (err) {
        failures++;
        // The workqueue's per-item exponential backoff, capped well below the resync period.
        delay = Math.min(delay, 5 * 2 ** Math.min(failures, 20), 30_000);
        this.log.error({ err, failures }, 'failed to sync webhook certs and configurations');
      }
      // Aborted during sync(): no 'abort' event will come to end the wait below.
      if (this.pending || signal.aborted) continue;
      await new Promise<void>((resolve) => {
        const timer = this.clock.setTimer(delay, done);
        const onAbort = () => done();
        signal.addEventListener('abort', onAbort, { once: true });
        this.wake = done;
        function done() {
          timer.cancel();
          signal.removeEventListener('abort', onAbort);
          resolve();
        }
      });
      this.wake = undefined;
    }
  }

  private async obtainCerts(beforeWrite: (() => Promise<void>) | undefined): Promise<CertArtifacts> {
    const o = this.opts;
    if (o.external) {
      return 'dir' in o.external ? readExternalDirCerts(o.external.dir) : readExternalSecretCerts(o.client, o.external.secret);
    }
    const secret = o.secret ?? { namespace: DEFAULT_NAMESPACE, name: DEFAULT_SECRET_NAME };
    const { certs } = await ensureSecretCerts(o.client, secret, servingNameFor(o.clientMode), {
      clock: this.clock,
      policy: o.policy,
      logger: this.log,
      beforeWrite,
    });
    return certs;
  }
}
