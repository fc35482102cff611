// Phone numbers to canonical E.164 (libphonenumber-js): "+<cc><number>", however they were written.
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * E.164 for `+15551234567`, `0015551234567`, `15551234567` (international digits) or a national
 * number of `defaultCountry`; null when it is not a possible phone number.
 */
export function normalizePhone(input: string, defaultCountry: string | null): string | null {
  const cleaned = input.trim().replace(/[\s().-]/g, '');
  if (!/^\+?\d{4,20}$/.test(cleaned.replace(/^00/, '+'))) return null;
  const international = cleaned.startsWith('+') ? cleaned : cleaned.startsWith('00') ? `+${cleaned.slice(2)}` : null;
  const attempts: [string, CountryCode | undefined][] = international
    ? [[international, undefined]]
    : [
        [`+${cleaned}`, undefined],
        ...(defaultCountry ? ([[cleaned, defaultCountry as CountryCode]] as [string, CountryCode][]) : []),
      ];
  // Digits alone: a national number of the default country wins when it is a valid one there.
  if (!international && defaultCountry) attempts.reverse();
  for (const [text, country] of attempts) {
    const parsed = parsePhoneNumberFromString(text, country);
    if (parsed && (country ? parsed.isValid() : parsed.isPossible())) return parsed.number;
  }
  return null;
}
