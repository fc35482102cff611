// The provider client tells a request that never left (no connection in time, connection refused)
// from one that may have reached the provider (no answer after it was written): the first is
// retried as PROVIDER_UNREACHABLE, the second is unconfirmed and never sent again (decision 0061).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createProviderClient, type SendOutcome } from '../src/provider/cloud-api.js';
import { classifySendFailure } from '../src/provider/error-map.js';
import { type Emulator, resetEmulator, startEmulator } from './support/emulator.js';

describe('the provider client knows whether a failed send left', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    await resetEmulator(emu, { enabled: false });
  });
  afterAll(() => emu.stop());

  const account = { phoneNumberId: 'pnphase', accessToken: 'EAAG-phase' };
  const content = { type: 'text', text: 'hello' } as const;
  const failure = (o: SendOutcome) => {
    if (o.ok) throw new Error('expected a failed send');
    return o;
  };

  it('a send still waiting for a pool connection at its startBy was never sent: retried', async () => {
    // One connection, held by a send the provider answers late.
    const client = createProviderClient({ baseUrl: emu.url, apiVersion: 'v23.0', timeoutMs: 10_000, connections: 1 });
    await emu.rule({ to: '15551110001', answerAfterMs: 1500, times: 1 });
    try {
      const slow = client.send(account, '+15551110001', content, crypto.randomUUID());
      await expect.poll(() => emu.sent().some((s) => s.to === '15551110001'), { timeout: 10_000 }).toBe(true);
      const waiting = failure(
        await client.send(account, '+15551110002', content, crypto.randomUUID(), null, null, 'messages', {
          startBy: Date.now() + 200,
        }),
      );
      expect(waiting).toMatchObject({ transport: 'timeout', sent: false });
      expect(classifySendFailure(waiting)).toEqual({ action: 'retry', errorCode: 'PROVIDER_UNREACHABLE' });
      expect(emu.sent().some((s) => s.to === '15551110002')).toBe(false);
      expect((await slow).ok).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('a send written to the provider and not answered within the response deadline is unconfirmed', async () => {
    const client = createProviderClient({ baseUrl: emu.url, apiVersion: 'v23.0', timeoutMs: 300 });
    await emu.rule({ to: '15551110003', answerAfterMs: 2000, times: 1 });
    try {
      const late = failure(await client.send(account, '+15551110003', content, crypto.randomUUID()));
      expect(late).toMatchObject({ transport: 'timeout', sent: true });
      expect(classifySendFailure(late)).toEqual({ action: 'unconfirmed', errorCode: 'PROVIDER_TIMEOUT' });
    } finally {
      await client.close();
    }
  });

  it('a provider that refuses the connection was never sent to: retried', async () => {
    // Port 9 (discard): nothing listens there on the test machine.
    const client = createProviderClient({ baseUrl: 'http://127.0.0.1:9', apiVersion: 'v23.0', timeoutMs: 300 });
    try {
      const refused = failure(await client.send(account, '+15551110004', content, crypto.randomUUID()));
      expect(refused).toMatchObject({ transport: 'network', sent: false });
      expect(classifySendFailure(refused)).toEqual({ action: 'retry', errorCode: 'PROVIDER_UNREACHABLE' });
    } finally {
      await client.close();
    }
  });
});
