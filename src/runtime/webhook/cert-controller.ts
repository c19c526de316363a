// The webhook controller (pkg/webhook/util/controller/webhook_controller.go): keeps certificates,
// the server's cert dir, the webhook configurations and the CRD conversion config in line.

import path from 'node:path';
import type { LabelSelector } from '../../apis/core.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import type { KubeClient } from '../client.ts';
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
  verifyWebhookCABundles,
  type ClientMode,
} from './configuration.ts';
import { ensureCRDConversion } from './crd-conversion.ts';
import { enabledRegistrations, webhookPath } from './server.ts';
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
  timeoutSeconds?: number;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  /** Whether to point the kruise CRDs' conversion webhooks at /convert; default true. */
  manageCRDs?: boolean;
  crdGroups?: readonly string[];
  /** Called after the cert dir changed (e.g. WebhookServer.reloadCertificate). */
  onCertsChanged?: (certs: CertArtifacts) => void;
  /** Resync period; default 1 min (upstream defaultResyncPeriod). */
  resyncMs?: number;
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

  /** One pass; throws on failure. */
  async sync(): Promise<void> {
    const o = this.opts;
    const certs = await this.obtainCerts();
    // Mounted external certificates may already be the server's cert dir (and read-only).
    const inPlace = !!o.external && 'dir' in o.external && path.resolve(o.external.dir) === path.resolve(o.certDir);
    if (!inPlace && writeCertsToDir(o.certDir, certs)) {
      this.log.info({ dir: o.certDir }, 'wrote webhook certificates');
      o.onCertsChanged?.(certs);
    }
    const names = {
      mutating: o.mutatingName ?? MUTATING_WEBHOOK_CONFIGURATION_NAME,
      validating: o.validatingName ?? VALIDATING_WEBHOOK_CONFIGURATION_NAME,
    };
    if (o.external) {
      const served = new Set(
        enabledRegistrations(o.registrations, o.features).flatMap((r) => [
          ...(r.mutate ? [webhookPath('mutate', r)] : []),
          ...(r.validate ? [webhookPath('validate', r)] : []),
        ]),
      );
      await verifyWebhookCABundles(o.client, names, served, certs.caCert);
    } else {
      const desired = buildWebhookConfigurations(o.registrations, {
        clientMode: o.clientMode,
        features: o.features,
        caBundle: certs.caCert,
        mutatingName: names.mutating,
        validatingName: names.validating,
        timeoutSeconds: o.timeoutSeconds,
        namespaceSelector: o.namespaceSelector,
        objectSelector: o.objectSelector,
      });
      const written = await ensureWebhookConfigurations(o.client, desired);
      if (written.length) this.log.info({ configurations: written }, 'updated webhook configurations');
    }
    if (o.manageCRDs ?? true) {
      const updated = await ensureCRDConversion(o.client, o.clientMode, certs.caCert, o.crdGroups);
      if (updated.length) this.log.info({ crds: updated }, 'updated CRD conversion webhooks');
    }
    this.lastCerts = certs;
    this.markReady();
  }

  /** Syncs until signal aborts: every resync period, on trigger(), and with backoff after failures. */
  async run(signal: AbortSignal): Promise<void> {
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
      if (this.pending) continue;
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

  private async obtainCerts(): Promise<CertArtifacts> {
    const o = this.opts;
    if (o.external) {
      return 'dir' in o.external ? readExternalDirCerts(o.external.dir) : readExternalSecretCerts(o.client, o.external.secret);
    }
    const secret = o.secret ?? { namespace: DEFAULT_NAMESPACE, name: DEFAULT_SECRET_NAME };
    const { certs } = await ensureSecretCerts(o.client, secret, servingNameFor(o.clientMode), {
      clock: this.clock,
      policy: o.policy,
      logger: this.log,
    });
    return certs;
  }
}
