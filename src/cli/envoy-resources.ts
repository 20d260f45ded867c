/**
 * Delivers the gateway's dynamic resources (src/envoy/bootstrap/dynamic-resources.ts) to a running Envoy: each file
 * that changed is written beside its final name and moved onto it (Envoy watches the directory for moves, so it
 * never reads half a file), then the admin's counters say whether Envoy took it or rejected it. One file at a time,
 * in the order given (clusters, routes, listeners), so a route never names a cluster Envoy does not have yet.
 *
 * Envoy says why it rejected a file in its log ("Filesystem config update rejected: …", at warning level) and, for
 * listeners, in /config_dump's `error_state`; `EnvoyRejections` keeps the log's reasons for the reload to report.
 */

import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  type ResourceFile,
  type ResourceKind,
  resourceFileText,
} from '../envoy/bootstrap/dynamic-resources.js';
import type { Endpoint } from '../envoy/bootstrap/plan.js';

/** Envoy refused a resource file; the files it runs are the previous ones. */
export class EnvoyRejected extends Error {}

/** How long Envoy may take to read a file and answer, before the change is given up as failed. */
const takeTimeoutMs = 10_000;
/** How long the log's reason may lag behind the rejected counter. */
const reasonWaitMs = 1000;

/** The reasons Envoy logs for the resource files it rejects, heard from its output as `up` shows it. */
export class EnvoyRejections {
  private readonly reasons: { readonly sequence: number; readonly reason: string }[] = [];
  private sequence = 0;

  /** Each line an Envoy of the family wrote (Envoy's JSON log format, src/config/envoy.ts). */
  hear(line: string): void {
    const marker = 'config update rejected: ';
    if (!line.includes(marker)) return;
    let message = line;
    try {
      message = String((JSON.parse(line) as { message?: unknown }).message ?? line);
    } catch {
      // Not JSON: the line as it is.
    }
    const reason = message.slice(message.indexOf(marker) + marker.length).trim();
    this.reasons.push({ sequence: ++this.sequence, reason });
    if (this.reasons.length > 20) this.reasons.shift();
  }

  mark(): number {
    return this.sequence;
  }

  /** The first reason heard after `mark`, waiting a little for it. */
  async after(mark: number, waitMs = reasonWaitMs): Promise<string | undefined> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const found = this.reasons.find((entry) => entry.sequence > mark);
      if (found || Date.now() >= deadline) return found?.reason;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/**
 * Writes each changed file and waits until Envoy took it; throws `EnvoyRejected` with Envoy's reason at the first
 * one it rejects (the files before it stay taken: the caller puts the running set back). Files unchanged on disk
 * are skipped, so a change that leaves the listeners alone never touches them.
 */
export async function publishResources(
  admin: Endpoint,
  files: readonly ResourceFile[],
  rejections: EnvoyRejections,
): Promise<void> {
  for (const file of files) {
    const text = resourceFileText(file);
    if ((await readFile(file.file, 'utf8').catch(() => undefined)) === text) continue;
    await mkdir(path.dirname(file.file), { recursive: true });
    const counters = countersOf(file);
    // A route configuration no listener uses yet has no subscription: it is read when its listener arrives.
    const before = await readCounters(admin, counters);
    const mark = rejections.mark();
    const staged = path.join(path.dirname(file.file), `.${path.basename(file.file)}.next`);
    await writeFile(staged, text);
    await rename(staged, file.file);
    if (!before) continue;
    const deadline = Date.now() + takeTimeoutMs;
    for (;;) {
      const now = await readCounters(admin, counters);
      if (now && now.rejected > before.rejected) {
        const reason =
          (file.kind === 'listeners' ? await listenerErrors(admin) : undefined) ??
          (await rejections.after(mark)) ??
          `see Envoy's log (${counters.prefix}update_rejected)`;
        throw new EnvoyRejected(`Envoy rejected the ${describe(file)}: ${reason}`);
      }
      if (now && now.success > before.success) break;
      if (Date.now() >= deadline)
        throw new Error(`Envoy did not read the ${describe(file)} within ${takeTimeoutMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

function describe(file: ResourceFile): string {
  const kinds: Record<ResourceKind, string> = {
    clusters: 'clusters',
    listeners: 'listeners',
    routes: `routes ${file.name}`,
  };
  return `${kinds[file.kind]} (${file.file})`;
}

interface Counters {
  /** The statistics' common prefix, as a regex (RDS counters carry the connection manager's prefix before it). */
  readonly prefix: string;
}

function countersOf(file: ResourceFile): Counters {
  if (file.kind === 'clusters') return { prefix: 'cluster_manager.cds.' };
  if (file.kind === 'listeners') return { prefix: 'listener_manager.lds.' };
  return { prefix: `rds.${file.name}.` };
}

/** The subscription's success and rejection counts, or undefined when Envoy has no such subscription. */
async function readCounters(
  admin: Endpoint,
  counters: Counters,
): Promise<{ success: number; rejected: number } | undefined> {
  const filter = `${counters.prefix.replaceAll('.', '\\.')}update_(success|rejected)$`;
  const body = (await adminJson(admin, `/stats?format=json&filter=${encodeURIComponent(filter)}`)) as {
    stats?: { name?: string; value?: number }[];
  };
  let success: number | undefined;
  let rejected: number | undefined;
  for (const stat of body.stats ?? []) {
    if (typeof stat.value !== 'number' || !stat.name) continue;
    if (stat.name.endsWith('update_success')) success = (success ?? 0) + stat.value;
    if (stat.name.endsWith('update_rejected')) rejected = (rejected ?? 0) + stat.value;
  }
  return success === undefined || rejected === undefined ? undefined : { success, rejected };
}

/** What /config_dump says of the listeners Envoy refused at its last update. */
async function listenerErrors(admin: Endpoint): Promise<string | undefined> {
  const body = (await adminJson(admin, '/config_dump?resource=dynamic_listeners')) as {
    configs?: { name?: string; error_state?: { details?: string } }[];
  };
  const errors = (body.configs ?? [])
    .filter((config) => config.name && config.error_state?.details)
    .map((config) => `listener ${config.name}: ${config.error_state!.details}`);
  return errors.length > 0 ? errors.join('; ') : undefined;
}

async function adminJson(admin: Endpoint, pathAndQuery: string): Promise<unknown> {
  const host = admin.host.includes(':') ? `[${admin.host}]` : admin.host;
  const response = await fetch(`http://${host}:${admin.port}${pathAndQuery}`, {
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) throw new Error(`Envoy's admin answered ${response.status} to ${pathAndQuery}`);
  return response.json();
}
