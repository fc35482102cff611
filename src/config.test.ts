import { describe, expect, it } from 'vitest';

import { ConfigError, loadConfig } from './config.js';
import { apiVersionWarning } from './provider/api-versions.js';

describe('loadConfig', () => {
  it('has working defaults for the embedded mode', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: null,
      adminToken: null,
      retryTimeScale: 1,
      purgeIntervalSeconds: 10800,
      unsafeAllowPrivateUrls: false,
      maxSendAttempts: 5,
      bodyReadTimeoutMs: 120_000,
    });
    expect(c.publicBaseUrl).toBe('http://127.0.0.1:3000');
    expect(c.providerBaseUrl).toBe('https://graph.facebook.com');
  });

  it('names every bad variable at once', () => {
    try {
      loadConfig({
        PORT: 'eighty',
        RETRY_TIME_SCALE: '-1',
        UNSAFE_ALLOW_PRIVATE_URLS: 'yes',
        ADMIN_TOKEN: 'short',
        DATABASE_URL: 'mysql://x',
        PUBLIC_BASE_URL: 'ftp://x',
        BODY_READ_TIMEOUT_MS: '10',
      });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const text = (err as ConfigError).message;
      for (const name of [
        'PORT',
        'RETRY_TIME_SCALE',
        'UNSAFE_ALLOW_PRIVATE_URLS',
        'ADMIN_TOKEN',
        'BODY_READ_TIMEOUT_MS',
        'DATABASE_URL',
        'PUBLIC_BASE_URL',
        'ENCRYPTION_KEY',
      ])
        expect(text).toContain(name);
    }
  });

  it('serves a worker status port only when WORKER_STATUS_PORT is set', () => {
    expect(loadConfig({}).workerStatusPort).toBeNull();
    expect(loadConfig({ WORKER_STATUS_PORT: '9464' }).workerStatusPort).toBe(9464);
    expect(loadConfig({ WORKER_STATUS_PORT: '0' }).workerStatusPort).toBe(0);
    expect(() => loadConfig({ WORKER_STATUS_PORT: 'x' })).toThrow(/WORKER_STATUS_PORT must be a whole number/);
  });

  it('takes a Graph API version the table knows, and names PROVIDER_API_VERSION when it does not', () => {
    expect(loadConfig({}).providerApiVersion).toBe('v23.0');
    expect(loadConfig({ PROVIDER_API_VERSION: 'v25.0' }).providerApiVersion).toBe('v25.0');
    // v18.0 expired on 2026-01-26: the service still starts (never refused for a date), and says so loudly.
    expect(loadConfig({ PROVIDER_API_VERSION: 'v18.0' }).providerApiVersion).toBe('v18.0');
    expect(apiVersionWarning('PROVIDER_API_VERSION', 'v18.0')).toMatch(
      /PROVIDER_API_VERSION=v18\.0 expired on 2026-01-26/,
    );
    // Not a version the provider has released (as far as the table in src/provider/api-versions.ts knows).
    expect(() => loadConfig({ PROVIDER_API_VERSION: 'v99.0' })).toThrow(
      /PROVIDER_API_VERSION=v99\.0 is not a Graph API version this release knows/,
    );
    expect(() => loadConfig({ PROVIDER_API_VERSION: '23' })).toThrow(/PROVIDER_API_VERSION must look like v23.0/);
  });

  it('requires the lease to outlast a provider request', () => {
    expect(() => loadConfig({ WORKER_LEASE_SECONDS: '10', PROVIDER_TIMEOUT_MS: '9000' })).toThrow(
      /WORKER_LEASE_SECONDS must exceed PROVIDER_TIMEOUT_MS/,
    );
    expect(loadConfig({ WORKER_LEASE_SECONDS: '3', PROVIDER_TIMEOUT_MS: '500' }).workerLeaseSeconds).toBe(3);
  });

  it('reads MAX_MEDIA_STEPS (4) and PARKED_SWEEP_MS (5 s), and refuses values out of range', () => {
    expect(loadConfig({})).toMatchObject({ maxMediaSteps: 4, parkedSweepMs: 5000 });
    expect(loadConfig({ MAX_MEDIA_STEPS: '16', PARKED_SWEEP_MS: '250' })).toMatchObject({
      maxMediaSteps: 16,
      parkedSweepMs: 250,
    });
    expect(() => loadConfig({ MAX_MEDIA_STEPS: '0' })).toThrow(/MAX_MEDIA_STEPS must be a whole number from 1 to 256/);
    expect(() => loadConfig({ PARKED_SWEEP_MS: '10' })).toThrow(/PARKED_SWEEP_MS must be a whole number from 100/);
  });

  it('derives the dispatch, prober, portal and shutdown values from the settings they follow', () => {
    expect(loadConfig({})).toMatchObject({
      dispatchPacingHorizonMs: 10_000,
      mediaFetchTimeoutMs: 10_000,
      accountProbeLeaseSeconds: 20,
      accountProbeFirstDelayScaledMs: 60_000,
      portalLoginMaxFailuresPerAddress: 20,
      portalSecureCookies: false,
      shutdownRequestGraceMs: 5000,
    });
    // A short lease caps the pacing horizon and the media fetch (room for the send or upload after).
    expect(
      loadConfig({
        WORKER_LEASE_SECONDS: '10',
        PROVIDER_TIMEOUT_MS: '6500',
        RETRY_TIME_SCALE: '0.5',
        PORTAL_LOGIN_MAX_FAILURES: '3',
        PUBLIC_BASE_URL: 'https://chatgate.example',
        SHUTDOWN_TIMEOUT_MS: '8000',
      }),
    ).toMatchObject({
      dispatchPacingHorizonMs: 2500,
      mediaFetchTimeoutMs: 1500,
      accountProbeLeaseSeconds: 12,
      accountProbeFirstDelayScaledMs: 30_000,
      portalLoginMaxFailuresPerAddress: 12,
      portalSecureCookies: true,
      shutdownRequestGraceMs: 2000,
    });
    expect(loadConfig({ WORKER_LEASE_SECONDS: '3', PROVIDER_TIMEOUT_MS: '500' }).mediaFetchTimeoutMs).toBe(1000);
  });

  it('probes a marked account from 1 min up to 30 min, and refuses a cap below the first delay', () => {
    expect(loadConfig({})).toMatchObject({ accountProbeFirstDelaySeconds: 60, accountProbeMaxDelaySeconds: 1800 });
    expect(() =>
      loadConfig({ ACCOUNT_PROBE_FIRST_DELAY_SECONDS: '120', ACCOUNT_PROBE_MAX_DELAY_SECONDS: '60' }),
    ).toThrow(/ACCOUNT_PROBE_MAX_DELAY_SECONDS must be at least/);
  });

  it('requires an https PROVIDER_BASE_URL, except on loopback or with UNSAFE_ALLOW_PRIVATE_URLS', () => {
    for (const url of ['http://graph.example.com', 'http://10.0.0.5:4010', 'http://127.0.0.1.example.com'])
      expect(() => loadConfig({ PROVIDER_BASE_URL: url }), url).toThrow(/PROVIDER_BASE_URL must use https/);
    expect(loadConfig({ PROVIDER_BASE_URL: 'https://graph.example.com' }).providerBaseUrl).toBe(
      'https://graph.example.com',
    );
    for (const url of ['http://127.0.0.1:4010', 'http://localhost:4010', 'http://[::1]:4010'])
      expect(loadConfig({ PROVIDER_BASE_URL: url }).providerBaseUrl, url).toBe(url);
    expect(
      loadConfig({ PROVIDER_BASE_URL: 'http://10.0.0.5:4010', UNSAFE_ALLOW_PRIVATE_URLS: 'true' }).providerBaseUrl,
    ).toBe('http://10.0.0.5:4010');
  });

  it('requires a 32-byte ENCRYPTION_KEY with PostgreSQL', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://x@y/z' })).toThrow(/ENCRYPTION_KEY is required/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://x@y/z', ENCRYPTION_KEY: 'c2hvcnQ=' })).toThrow(/32 bytes/);
    const ok = loadConfig({
      DATABASE_URL: 'postgres://x@y/z',
      ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
      RETRY_TIME_SCALE: '0.01',
      PUBLIC_BASE_URL: 'https://api.example.com/',
    });
    expect(ok.encryptionKey).toHaveLength(32);
    expect(ok.retryTimeScale).toBe(0.01);
    expect(ok.publicBaseUrl).toBe('https://api.example.com');
  });

  it('takes ENCRYPTION_KEY_PREVIOUS (a rotation) only beside a different ENCRYPTION_KEY', () => {
    const key = (n: number) => Buffer.alloc(32, n).toString('base64');
    expect(loadConfig({}).encryptionKeyPrevious).toBeNull();
    const c = loadConfig({ ENCRYPTION_KEY: key(1), ENCRYPTION_KEY_PREVIOUS: key(2) });
    expect(c.encryptionKeyPrevious?.equals(Buffer.alloc(32, 2))).toBe(true);
    expect(() => loadConfig({ ENCRYPTION_KEY_PREVIOUS: key(2) })).toThrow(
      /ENCRYPTION_KEY_PREVIOUS needs ENCRYPTION_KEY/,
    );
    expect(() => loadConfig({ ENCRYPTION_KEY: key(1), ENCRYPTION_KEY_PREVIOUS: key(1) })).toThrow(/must differ/);
    expect(() => loadConfig({ ENCRYPTION_KEY: key(1), ENCRYPTION_KEY_PREVIOUS: 'c2hvcnQ=' })).toThrow(
      /ENCRYPTION_KEY_PREVIOUS must be 32 bytes/,
    );
  });

  it('reads SMTP_URL with SMTP_FROM for portal mail, never repeating the URL (it may carry a password)', () => {
    expect(loadConfig({})).toMatchObject({ smtpUrl: null, smtpFrom: null });
    expect(
      loadConfig({ SMTP_URL: 'smtps://u:p@mail.example.com:465', SMTP_FROM: 'ChatGate <no-reply@example.com>' }),
    ).toMatchObject({ smtpUrl: 'smtps://u:p@mail.example.com:465', smtpFrom: 'ChatGate <no-reply@example.com>' });
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return '';
      } catch (err) {
        return (err as ConfigError).message;
      }
    };
    expect(problems({ SMTP_URL: 'smtp://mail.example.com' })).toContain('SMTP_FROM is required with SMTP_URL');
    const bad = problems({ SMTP_URL: 'https://user:secret-pw@mail.example.com', SMTP_FROM: 'a@b.example' });
    expect(bad).toContain('SMTP_URL must look like smtp://');
    expect(bad).not.toContain('secret-pw');
    expect(problems({ SMTP_FROM: 'not an address' })).toContain('SMTP_FROM must be an email address');
  });

  it('reads TRUST_PROXY as false, true, a hop count or addresses/CIDRs, and refuses anything else', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,::1' }).trustProxy).toEqual([
      'loopback',
      '10.0.0.0/8',
      '::1',
    ]);
    for (const bad of ['0', '11', 'yes', '10.0.0.0/33', 'proxy.example.com', '10.0.0.1/8/1'])
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/);
  });
});

describe('inbound file settings', () => {
  it('default to 16 MiB, the provider types and 12 attempts, and refuse what they cannot read', () => {
    expect(loadConfig({})).toMatchObject({
      inboundMediaMaxBytes: 16 * 1024 * 1024,
      inboundMediaMaxAttempts: 12,
      inboundMediaLeaseSeconds: 40,
    });
    expect(loadConfig({}).inboundMediaTypes).toContain('audio/ogg');
    expect(loadConfig({ INBOUND_MEDIA_TYPES: 'image/*', INBOUND_MEDIA_MAX_BYTES: '1000' })).toMatchObject({
      inboundMediaTypes: ['image/*'],
      inboundMediaMaxBytes: 1000,
    });
    expect(() => loadConfig({ INBOUND_MEDIA_MAX_BYTES: '0' })).toThrow(
      /INBOUND_MEDIA_MAX_BYTES must be a whole number/,
    );
    expect(() => loadConfig({ INBOUND_MEDIA_TYPES: 'images' })).toThrow(/INBOUND_MEDIA_TYPES must be MIME types/);
  });
});
