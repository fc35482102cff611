// The provider's user_preferences webhook (a user stops or resumes marketing messages from the
// business), posted on demand: POST /__emulator/user-preferences (docs/emulator.md).
import type { FastifyInstance } from 'fastify';

/** Unix seconds as the provider writes them: from seconds, an ISO timestamp, or now. */
export function unixSeconds(at: number | string | undefined): string {
  if (typeof at === 'number') return String(Math.floor(at));
  if (typeof at === 'string' && at !== '') {
    const ms = /^\d+$/.test(at) ? Number(at) * 1000 : Date.parse(at);
    if (Number.isFinite(ms)) return String(Math.floor(ms / 1000));
  }
  return String(Math.floor(Date.now() / 1000));
}

export function registerUserPreferenceControl(
  app: FastifyInstance,
  post: (phoneNumberId: string, value: Record<string, unknown>) => Promise<number | null>,
): void {
  app.post<{
    Body: {
      phoneNumberId: string;
      from: string;
      value: 'stop' | 'resume';
      category?: string;
      detail?: string;
      name?: string;
      timestamp?: number | string;
    };
  }>('/__emulator/user-preferences', async (request) => {
    const b = request.body;
    const waId = b.from.replace(/^\+/, '');
    const status = await post(b.phoneNumberId, {
      contacts: [{ profile: { name: b.name ?? 'Emulated User' }, wa_id: waId }],
      user_preferences: [
        {
          wa_id: waId,
          detail:
            b.detail ??
            (b.value === 'stop'
              ? 'User requested to stop marketing messages'
              : 'User requested to resume marketing messages'),
          category: b.category ?? 'marketing_messages',
          value: b.value,
          timestamp: Number(unixSeconds(b.timestamp)),
        },
      ],
    });
    return { delivered: status === 200 };
  });
}
