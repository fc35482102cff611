import { describe, expect, it } from 'vitest';

import { checkOutboundUrl, embeddedIpv4, isBlockedAddress } from './address-guard.js';

describe('checkOutboundUrl', () => {
  it.each([
    'https://127.0.0.1/x',
    'https://2130706433/x',
    'https://0x7f.0.0.1/x',
    'https://0177.0.0.1/x',
    'https://127.1/x',
    'https://0/x',
    'https://10.0.0.1/',
    'https://172.16.5.4/',
    'https://192.168.1.1/',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[fd12:3456::1]/',
    'https://[fe80::1]/',
    'https://[::]/',
    'https://localhost/',
    'https://LOCALHOST./',
    'https://api.localhost/',
    'https://printer.local/',
    'https://db.internal/',
    'https://intranet/',
  ])('refuses %s', (url) => {
    expect(checkOutboundUrl(url, { allowPrivate: false })).toMatch(/private|loopback/);
  });

  it('refuses other schemes and credentials', () => {
    expect(checkOutboundUrl('http://example.com/', { allowPrivate: false })).toBe('must use https');
    expect(checkOutboundUrl('ftp://example.com/', { allowPrivate: false })).toBe('must use https');
    expect(checkOutboundUrl('https://u:p@example.com/', { allowPrivate: false })).toBe('must not contain credentials');
    expect(checkOutboundUrl('not a url', { allowPrivate: false })).toBe('not a valid URL');
  });

  it('refuses a host name DNS cannot hold, whether or not private hosts are allowed', () => {
    for (const allowPrivate of [false, true]) {
      expect(checkOutboundUrl(`https://${'a'.repeat(64)}.example.com/`, { allowPrivate })).toMatch(/at most 63/);
      expect(checkOutboundUrl(`https://${'abcdefghi.'.repeat(26)}com/`, { allowPrivate })).toMatch(/at most 253/);
      expect(checkOutboundUrl(`https://${'a'.repeat(63)}.example.com/`, { allowPrivate })).toBeNull();
    }
  });

  it('accepts public hosts, and private ones only when allowed', () => {
    expect(checkOutboundUrl('https://cdn.example.com/a.png', { allowPrivate: false })).toBeNull();
    expect(checkOutboundUrl('https://8.8.8.8/a.png', { allowPrivate: false })).toBeNull();
    expect(checkOutboundUrl('https://[2606:4700::1111]/', { allowPrivate: false })).toBeNull();
    expect(checkOutboundUrl('http://127.0.0.1:8080/a.png', { allowPrivate: true })).toBeNull();
    expect(checkOutboundUrl('https://u:p@127.0.0.1/', { allowPrivate: true })).toBe('must not contain credentials');
  });

  // IPv6 spellings that stand for an IPv4 address: the URL parser rewrites `[::127.0.0.1]` to
  // `[::7f00:1]`, which the guard must still see as loopback.
  it.each([
    'https://[::127.0.0.1]/',
    'https://[::7f00:1]/',
    'https://[::a9fe:a9fe]/latest/meta-data',
    'https://[::169.254.169.254]/',
    'https://[::10.0.0.1]/',
    'https://[::8.8.8.8]/', // IPv4-compatible: deprecated, refused whatever it embeds
    'https://[0:0:0:0:0:ffff:7f00:1]/',
    'https://[::ffff:a9fe:a9fe]/',
    'https://[::ffff:0:a9fe:a9fe]/', // IPv4-translated (SIIT)
    'https://[64:ff9b::127.0.0.1]/', // NAT64 well-known prefix
    'https://[64:ff9b::a00:1]/',
    'https://[64:ff9b:1::8.8.8.8]/', // local-use NAT64
    'https://[2002:7f00:1::]/', // 6to4
    'https://[2002:808:808::1]/',
    'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', // Teredo
  ])('refuses the IPv4-embedding %s', (url) => {
    expect(checkOutboundUrl(url, { allowPrivate: false })).toMatch(/private|loopback/);
  });

  it('judges mapped and NAT64 forms by the IPv4 address they reach', () => {
    expect(embeddedIpv4('::ffff:8.8.8.8')).toBe('8.8.8.8');
    expect(embeddedIpv4('::FFFF:0808:0808')).toBe('8.8.8.8');
    expect(embeddedIpv4('64:ff9b::808:808')).toBe('8.8.8.8');
    expect(embeddedIpv4('2606:4700::1111')).toBeNull();
    expect(checkOutboundUrl('https://[::ffff:8.8.8.8]/', { allowPrivate: false })).toBeNull();
    expect(checkOutboundUrl('https://[64:ff9b::8.8.8.8]/', { allowPrivate: false })).toBeNull();
    expect(isBlockedAddress('::ffff:127.0.0.1')).toBe(true);
    expect(isBlockedAddress('::7f00:1')).toBe(true);
    expect(isBlockedAddress('64:ff9b::c0a8:101')).toBe(true);
    expect(isBlockedAddress('::ffff:8.8.8.8')).toBe(false);
  });

  it('classifies resolved addresses', () => {
    expect(isBlockedAddress('127.0.0.1')).toBe(true);
    expect(isBlockedAddress('::ffff:10.0.0.1')).toBe(true);
    expect(isBlockedAddress('93.184.216.34')).toBe(false);
    expect(isBlockedAddress('not-an-ip')).toBe(true);
  });
});
