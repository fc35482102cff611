import { describe, expect, it } from 'vitest';

import {
  API_VERSIONS,
  apiVersionStatus,
  apiVersionSummary,
  apiVersionWarning,
  DEFAULT_API_VERSION,
} from './api-versions.js';

const on = (day: string) => new Date(`${day}T12:00:00Z`);

describe('Graph API versions', () => {
  it('defaults to a version the provider serves until at least 2027', () => {
    expect(API_VERSIONS[DEFAULT_API_VERSION]!.expires! >= '2027-01-01').toBe(true);
  });

  it('is current until 90 days before its expiry, expiring within them, expired from the expiry date on', () => {
    // v23.0 is available until 2027-10-08.
    expect(apiVersionStatus('v23.0', on('2027-07-09'))).toMatchObject({ state: 'current', daysLeft: 91 });
    expect(apiVersionStatus('v23.0', on('2027-07-10'))).toMatchObject({ state: 'expiring', daysLeft: 90 });
    expect(apiVersionStatus('v23.0', on('2027-10-07'))).toMatchObject({ state: 'expiring', daysLeft: 1 });
    expect(apiVersionStatus('v23.0', on('2027-10-08'))).toMatchObject({ state: 'expired', daysLeft: 0 });
  });

  it('knows a version without a published expiry as current, and anything else as unknown', () => {
    expect(apiVersionStatus('v26.0', on('2030-01-01'))).toMatchObject({
      state: 'current',
      expires: null,
      daysLeft: null,
    });
    expect(apiVersionStatus('v99.0')).toEqual({ state: 'unknown', version: 'v99.0' });
    expect(apiVersionStatus('toString')).toEqual({ state: 'unknown', version: 'toString' });
  });

  it('summarises the version for an operator', () => {
    expect(apiVersionSummary('v24.0', on('2027-12-01'))).toEqual({
      apiVersion: 'v24.0',
      state: 'expiring',
      released: '2025-10-08',
      expires: '2028-02-18',
      daysLeft: 79,
    });
  });

  it('warns at start-up only within the 90 days before the expiry', () => {
    expect(apiVersionWarning('PROVIDER_API_VERSION', 'v23.0', on('2027-07-09'))).toBeNull();
    expect(apiVersionWarning('PROVIDER_API_VERSION', 'v23.0', on('2027-10-07'))).toMatch(
      /^PROVIDER_API_VERSION=v23\.0 expires on 2027-10-08 \(in 1 day\)/,
    );
    expect(apiVersionWarning('PROVIDER_API_VERSION', 'v23.0', on('2027-07-10'))).toMatch(/\(in 90 days\)/);
    expect(apiVersionWarning('PROVIDER_API_VERSION', 'v26.0', on('2030-01-01'))).toBeNull();
  });
});
