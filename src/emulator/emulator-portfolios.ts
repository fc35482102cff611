// Business portfolios and their messaging limit (docs/provider-protocol-2026.md, "Messaging
// limits"): unique users a portfolio's numbers may start conversations with (templates to a user
// whose customer-service window is closed) in a moving 24 hours, shared by every number of its
// WABAs. PUT /__emulator/portfolios/{id} groups WABAs and sets the limit, and posts the limit
// webhooks the provider sends (business_capability_update, phone_number_quality_update).
import type { FastifyInstance } from 'fastify';

import type { EmulatorState } from './emulator-state.js';
import { unixSeconds } from './emulator-user-preferences.js';
import type { WebhookSender } from './emulator-webhook-sender.js';

const DAY_MS = 24 * 3600_000;
/** The provider's customer-service window: 24 hours after the user's last message. */
const WINDOW_MS = DAY_MS;

export type EmulatedPortfolio = {
  wabaIds: string[];
  /** Unique users per moving 24 hours; null: unlimited. */
  messagingLimit: number | null;
  /** When each user's conversation was last started by a business-initiated send (epoch ms). */
  starts: Map<string, number>;
};

/** The portfolio a number's WABA belongs to, if any (numbers of no portfolio are never limited). */
function portfolioOf(state: EmulatorState, phoneNumberId: string): EmulatedPortfolio | null {
  const wabaId = state.numbers.get(phoneNumberId)?.wabaId;
  if (!wabaId) return null;
  for (const p of state.portfolios.values()) if (p.wabaIds.includes(wabaId)) return p;
  return null;
}

const used = (p: EmulatedPortfolio, now: number) => [...p.starts.values()].filter((t) => now - t < DAY_MS).length;

/**
 * A send the portfolio's limit stops: a template to a user whose window with this number is closed,
 * not started in the last 24 hours, when the portfolio already started its limit's worth. Others
 * that start a conversation are counted.
 */
export function overMessagingLimit(
  state: EmulatorState,
  phoneNumberId: string,
  to: string,
  type: unknown,
  now = Date.now(),
): boolean {
  if (type !== 'template') return false;
  const p = portfolioOf(state, phoneNumberId);
  if (!p) return false;
  const lastInbound = state.lastInbound.get(`${phoneNumberId}:${to}`);
  if (lastInbound !== undefined && now - lastInbound < WINDOW_MS) return false;
  const started = p.starts.get(to);
  if (started !== undefined && now - started < DAY_MS) return false;
  if (p.messagingLimit !== null && used(p, now) >= p.messagingLimit) return true;
  p.starts.set(to, now);
  return false;
}

/**
 * The failure a send over its portfolio's limit ends with (recorded in portfolioRefused): the
 * provider documents no refusal code, so the emulator accepts it and reports it undelivered
 * (131026) in a failed receipt. Undefined for a send within the limit.
 */
export function messagingLimitFailure(
  state: EmulatorState,
  send: EmulatorState['portfolioRefused'][number],
  type: unknown,
): { code: number; title: string } | undefined {
  if (!overMessagingLimit(state, send.phoneNumberId, send.to, type)) return undefined;
  state.portfolioRefused.push(send);
  return { code: 131026, title: 'Message undeliverable' };
}

/** The tier name the provider writes for a limit. */
function tierName(limit: number | null): string {
  if (limit === null) return 'TIER_UNLIMITED';
  const names: Record<number, string> = {
    50: 'TIER_50',
    250: 'TIER_250',
    1000: 'TIER_1K',
    2000: 'TIER_2K',
    10000: 'TIER_10K',
    100000: 'TIER_100K',
  };
  return names[limit] ?? String(limit);
}

type PortfolioBody = {
  wabaIds?: string[];
  /** null or -1: unlimited. */
  messagingLimit?: number | null;
  /** Which webhooks a limit change posts (default both). */
  webhook?: 'business_capability_update' | 'phone_number_quality_update' | 'both' | 'none';
  /** The entry's `time` (unix seconds or ISO); now when absent. */
  timestamp?: number | string;
};

export function registerPortfolioControls(app: FastifyInstance, state: EmulatorState, sender: WebhookSender): void {
  /** The first number of a WABA with its own callback URL: where that WABA's webhooks go. */
  const numberOf = (wabaId: string) => [...state.numbers].find(([, n]) => n.wabaId === wabaId && n.callbackUrl)?.[0];

  async function postLimit(wabaId: string, before: number | null, after: number | null, body: PortfolioBody) {
    const kind = body.webhook ?? 'both';
    const time = Number(unixSeconds(body.timestamp));
    const entry = (field: string, value: Record<string, unknown>) => ({
      object: 'whatsapp_business_account',
      entry: [{ id: wabaId, time, changes: [{ field, value }] }],
    });
    let delivered = true;
    if (kind === 'both' || kind === 'business_capability_update') {
      const n = after ?? -1;
      const payload = entry('business_capability_update', {
        max_daily_conversation_per_phone: n,
        max_daily_conversations_per_business: n,
      });
      delivered = (await sender.post(payload, numberOf(wabaId))) === 200 && delivered;
    }
    if (kind === 'both' || kind === 'phone_number_quality_update') {
      for (const [, n] of [...state.numbers].filter(([, x]) => x.wabaId === wabaId)) {
        const payload = entry('phone_number_quality_update', {
          display_phone_number: n.displayPhoneNumber ?? '15550000000',
          event: before !== null && (after === null || after > before) ? 'UPGRADE' : 'DOWNGRADE',
          old_limit: tierName(before),
          current_limit: tierName(after),
          max_daily_conversations_per_business: tierName(after),
        });
        delivered = (await sender.post(payload, numberOf(wabaId))) === 200 && delivered;
      }
    }
    return delivered;
  }

  app.put<{ Params: { id: string }; Body: PortfolioBody }>('/__emulator/portfolios/:id', async (request) => {
    const b = request.body ?? {};
    const p = state.portfolios.get(request.params.id) ?? { wabaIds: [], messagingLimit: 250, starts: new Map() };
    state.portfolios.set(request.params.id, p);
    if (b.wabaIds) p.wabaIds = b.wabaIds.map(String);
    let delivered: boolean | null = null;
    if (b.messagingLimit !== undefined) {
      const before = p.messagingLimit;
      p.messagingLimit = b.messagingLimit === null || b.messagingLimit < 0 ? null : b.messagingLimit;
      if ((b.webhook ?? 'both') !== 'none') {
        delivered = true;
        for (const wabaId of p.wabaIds) delivered = (await postLimit(wabaId, before, p.messagingLimit, b)) && delivered;
      }
    }
    return {
      id: request.params.id,
      wabaIds: p.wabaIds,
      messagingLimit: p.messagingLimit,
      used: used(p, Date.now()),
      delivered,
    };
  });
  app.get('/__emulator/portfolios', async () => ({
    portfolios: [...state.portfolios].map(([id, p]) => ({
      id,
      wabaIds: p.wabaIds,
      messagingLimit: p.messagingLimit,
      used: used(p, Date.now()),
    })),
  }));
  app.get('/__emulator/portfolio-refused', async () => ({ portfolioRefused: state.portfolioRefused }));
}
