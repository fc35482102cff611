import { describe, expect, it } from 'vitest';

import { receiptSteps } from './apply-receipt.js';

describe('receiptSteps (forward only)', () => {
  it('steps through every status up to the receipt', () => {
    expect(receiptSteps('queued', 'read')).toEqual(['sent', 'delivered', 'read']);
    expect(receiptSteps('sent', 'delivered')).toEqual(['delivered']);
  });
  it('ignores stale and duplicate receipts', () => {
    expect(receiptSteps('read', 'delivered')).toEqual([]);
    expect(receiptSteps('delivered', 'delivered')).toEqual([]);
    expect(receiptSteps('failed', 'read')).toEqual([]);
  });
  it('fails a message only before delivery', () => {
    expect(receiptSteps('queued', 'failed')).toEqual(['failed']);
    expect(receiptSteps('sent', 'failed')).toEqual(['failed']);
    expect(receiptSteps('delivered', 'failed')).toEqual([]);
  });
});
