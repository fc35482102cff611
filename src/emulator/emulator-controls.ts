// The emulator's control API over its state alone: numbers, failure rules, what was sent,
// uploaded, throttled and looked up, and the webhook counters (docs/emulator.md).
import type { FastifyInstance } from 'fastify';

import type { EmulatorState, FailureRule } from './emulator-state.js';

export function registerStateControls(
  app: FastifyInstance,
  state: EmulatorState,
  /** Webhook POSTs in flight and waiting, as the server's sender counts them. */
  queue: () => { inFlight: number; waiting: number },
): void {
  app.put<{ Params: { phoneNumberId: string }; Body: Record<string, unknown> }>(
    '/__emulator/numbers/:phoneNumberId',
    async (request) => {
      state.numbers.set(request.params.phoneNumberId, {
        ...(state.numbers.get(request.params.phoneNumberId) ?? {}),
        ...(request.body ?? {}),
      });
      return state.numbers.get(request.params.phoneNumberId);
    },
  );
  app.post<{ Body: Omit<FailureRule, 'id'> }>('/__emulator/rules', async (request) =>
    state.addRule(request.body ?? {}),
  );
  app.delete('/__emulator/rules', async () => {
    state.rules.length = 0;
    return { ok: true };
  });
  app.get('/__emulator/sent', async () => ({ sent: state.sent.map(({ payload: _p, ...rest }) => rest) }));
  /** Messages (our id in biz_opaque_callback_data) the emulator accepted more than once, with their count. */
  app.get('/__emulator/duplicates', async () => ({ duplicates: duplicateSends(state) }));
  app.get('/__emulator/media', async () => ({ media: [...state.media].map(([id, m]) => ({ id, ...m })) }));
  app.get('/__emulator/throttled', async () => ({ throttled: state.throttled }));
  app.get('/__emulator/pair-limited', async () => ({ pairLimited: state.pairLimited }));
  app.get('/__emulator/maintenance-refused', async () => ({ maintenanceRefused: state.maintenanceRefused }));
  app.get('/__emulator/held', async () => ({ held: state.held }));
  app.delete('/__emulator/sent', async () => {
    state.sent.length = 0;
    state.throttled.length = 0;
    state.pairLimited.length = 0;
    state.maintenanceRefused.length = 0;
    state.portfolioRefused.length = 0;
    state.held.length = 0;
    return { ok: true };
  });
  app.get('/__emulator/lookups', async () => ({ lookups: state.lookups }));
  /** Counters: sends received, webhook POSTs (attempts), retries, webhooks given up, POSTs in flight and waiting. */
  app.get('/__emulator/stats', async () => ({
    sent: state.sent.length,
    webhooks: { ...state.webhookStats, ...queue() },
  }));
  app.delete('/__emulator/stats', async () => {
    Object.assign(state.webhookStats, { posts: 0, retries: 0, failures: 0, firstPostAt: 0, lastAnsweredAt: 0 });
    return { ok: true };
  });
}

/** Our message ids accepted more than once, each with how many times. */
export function duplicateSends(state: EmulatorState): { messageId: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const s of state.sent) if (s.messageId !== null) counts.set(s.messageId, (counts.get(s.messageId) ?? 0) + 1);
  return [...counts].filter(([, count]) => count > 1).map(([messageId, count]) => ({ messageId, count }));
}
