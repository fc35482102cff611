import { describe, expect, it } from 'vitest';

import { simulateSandboxStep } from './sandbox-simulator.js';

const now = new Date('2026-11-22T00:00:00.000Z');
const step = (recipient: string, status: 'queued' | 'sent' | 'delivered') =>
  simulateSandboxStep({ id: 'm', status, recipient }, now, 1000);

describe('simulateSandboxStep', () => {
  it('fails recipients ending in 99 on the first attempt', () => {
    expect(step('+15550000099', 'queued')).toMatchObject({
      to: 'failed',
      attempted: true,
      nextDueAt: null,
      error: { code: 'SANDBOX_SIMULATED_FAILURE' },
    });
  });
  it('sends, then delivers, then reads recipients ending in 88', () => {
    expect(step('+15550000088', 'queued')).toMatchObject({
      to: 'sent',
      attempted: true,
      nextDueAt: new Date(now.getTime() + 1000),
    });
    expect(step('+15550000088', 'sent')).toMatchObject({
      to: 'delivered',
      attempted: false,
      nextDueAt: new Date(now.getTime() + 1000),
    });
    expect(step('+15550000088', 'delivered')).toMatchObject({ to: 'read', nextDueAt: null });
  });
  it('stops at delivered for any other ending', () => {
    expect(step('+15550000098', 'sent')).toMatchObject({ to: 'delivered', nextDueAt: null });
    expect(step('+15550000098', 'delivered')).toBeNull();
  });
});
