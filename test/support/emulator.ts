// The provider emulator on loopback, with helpers for its control API.
import { spawn } from 'node:child_process';
import readline from 'node:readline';

import { duplicateSends } from '../../src/emulator/emulator-controls.js';
import { createEmulator } from '../../src/emulator/emulator-server.js';
import type { FailureRule, ReceiptSettings, SentRecord, ThrottledRecord } from '../../src/emulator/emulator-state.js';
import { chatgateArgs } from './cli-build.js';
import { startService } from './harness.js';

export const APP_SECRET = 'emulator-app-secret-0123456789';
export const VERIFY_TOKEN = 'verify-token-0123456789';

export type Emulator = Awaited<ReturnType<typeof startEmulator>>;

export async function startEmulator(opts: { latencyMs?: number; now?: () => Date } = {}) {
  const { app, state } = createEmulator({
    callbackUrl: null,
    appSecret: APP_SECRET,
    latencyMs: opts.latencyMs ?? 0,
    now: opts.now,
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const control = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}/__emulator${path}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    return res.json() as Promise<any>;
  };
  return {
    url,
    state,
    settings: (
      s: Partial<ReceiptSettings> & {
        latencyMs?: number;
        defaultThroughputMps?: number;
        pairRateLimit?: boolean;
        pairRateWindowMs?: number;
        callbackUrl?: string;
      },
    ) => control('PUT', '/settings', s),
    rule: (r: Omit<FailureRule, 'id'>) => control('POST', '/rules', r),
    clearRules: () => control('DELETE', '/rules'),
    number: (phoneNumberId: string, s: Record<string, unknown>) => control('PUT', `/numbers/${phoneNumberId}`, s),
    sent: () => state.sent,
    /** Messages the emulator accepted more than once (our id in biz_opaque_callback_data), with their count. */
    duplicates: () => duplicateSends(state),
    /** How many times the emulator accepted this message. */
    sendsOf: (messageId: string) => state.sent.filter((s) => s.messageId === messageId).length,
    waba: (wabaId: string, s: { managementToken?: string | null; forceCategory?: string | null }) =>
      control('PUT', `/wabas/${wabaId}`, s),
    seedTemplates: (wabaId: string, templates: Record<string, unknown>[]) =>
      control('POST', `/templates/${wabaId}`, { templates }),
    reviewTemplate: (
      wabaId: string,
      templateId: string,
      s: {
        status?: string;
        rejectedReason?: string;
        qualityScore?: string;
        category?: string;
        timestamp?: number | string;
      },
    ) => control('PATCH', `/templates/${wabaId}/${templateId}`, s),
    /** A business portfolio: its WABAs and messaging limit, and the limit webhooks a change posts. */
    portfolio: (
      id: string,
      s: {
        wabaIds?: string[];
        messagingLimit?: number | null;
        webhook?: 'business_capability_update' | 'phone_number_quality_update' | 'both' | 'none';
      },
    ) => control('PUT', `/portfolios/${id}`, s),
    stop: () => app.close(),
  };
}

export type ProcessEmulator = Awaited<ReturnType<typeof spawnEmulator>>;

/**
 * The emulator in a process of its own (`chatgate emulator`), for checks of pacing: the receive
 * times it records are then taken on an event loop that neither the test nor the service shares.
 */
export async function spawnEmulator() {
  const child = spawn(process.execPath, chatgateArgs('emulator'), {
    env: { ...process.env, EMULATOR_PORT: '0', EMULATOR_HOST: '127.0.0.1', PROVIDER_APP_SECRET: APP_SECRET },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { address?: string };
        if (msg.address) resolve(msg.address);
      } catch {
        /* not the listening line */
      }
    });
    child.once('exit', (code) => reject(new Error(`emulator exited with ${code}`)));
  });
  const control = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}/__emulator${path}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    return res.json() as Promise<any>;
  };
  return {
    url,
    settings: (
      s: Partial<ReceiptSettings> & { latencyMs?: number; defaultThroughputMps?: number; callbackUrl?: string },
    ) => control('PUT', '/settings', s),
    number: (phoneNumberId: string, s: Record<string, unknown>) => control('PUT', `/numbers/${phoneNumberId}`, s),
    sent: async (): Promise<Omit<SentRecord, 'payload'>[]> => (await control('GET', '/sent')).sent,
    throttled: async (): Promise<ThrottledRecord[]> => (await control('GET', '/throttled')).throttled,
    clearSent: () => control('DELETE', '/sent'),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The most arrivals in any window [t, t + windowMs) (one second by default) of these receive times (ms). */
export function maxPerSecond(times: number[], windowMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= windowMs) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}

/**
 * Service settings that point the service at this emulator. The provider timeout is generous (a
 * busy 2-core machine must not turn a slow answer into a timeout and a retry, which would break
 * every "exactly one attempt"); tests that want a timeout use a `hang` rule and wait it out, or
 * set a short PROVIDER_TIMEOUT_MS of their own.
 */
export const providerEnv = (emulator: { url: string }) => ({
  PROVIDER_BASE_URL: emulator.url,
  PROVIDER_APP_SECRET: APP_SECRET,
  PROVIDER_VERIFY_TOKEN: VERIFY_TOKEN,
  PROVIDER_TIMEOUT_MS: '10000',
  RETRY_TIME_SCALE: '0.001',
});

/** The whole service pointed at a new emulator, which posts receipts back to it. */
export async function startLiveService(env: Record<string, string> = {}, opts: { clock?: boolean } = {}) {
  const emu = await startEmulator();
  const svc = await startService({ env: { ...providerEnv(emu), WORKER_POLL_MS: '50', ...env }, clock: opts.clock });
  await emu.settings({ callbackUrl: `${svc.url}/provider/webhooks/app` });
  return {
    emu,
    svc,
    async stop() {
      await svc.stop();
      await emu.stop();
    },
  };
}

/** No failure rules, and the receipt and behaviour settings tests start from. */
export async function resetEmulator(emu: Emulator, settings: Partial<ReceiptSettings> & { latencyMs?: number } = {}) {
  await emu.clearRules();
  await emu.settings({
    statuses: ['sent', 'delivered'],
    order: 'in-order',
    duplicates: 0,
    batch: false,
    enabled: true,
    delayMs: 5,
    beforeResponse: false,
    omitCallbackData: false,
    pricing: 'derived',
    latencyMs: 0,
    ...settings,
  });
}
