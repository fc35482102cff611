// Phone numbers to canonical E.164 (libphonenumber-js): "+<cc><number>", however they were written.
// Every phone a caller gives (lookups, inbox `from`, inbox filters, the connector's `from`) goes
// through normalizePhone, so all spellings of one number meet on one sender.
import { type CountryCode, parsePhoneNumberFromString, type PhoneNumber } from 'libphonenumber-js/max';

const parse = (text: string, country?: CountryCode): PhoneNumber | undefined =>
  parsePhoneNumberFromString(text, country);

/**
 * E.164 for `+15551234567`, `0015551234567`, `15551234567` (international digits) or a national
 * number of `defaultCountry`; null when it is not a phone number.
 *
 * With `+` or `00` the number is international and taken when it is possible (the right length
 * for its country code): senders are recorded as the platform gives them, and a lookup must find
 * them even when our metadata does not know their range. Bare digits can be read two ways, and
 * validity (the full metadata: country, ranges, lengths) decides: a valid international number is
 * that number, even when the digits are also a valid national number of the default country (so
 * `4915112345678` is +49 151…, never +49 4915…); else a valid national number of the default
 * country; else, as before, a possible international number.
 */
export function normalizePhone(input: string, defaultCountry: string | null): string | null {
  const cleaned = input.trim().replace(/[\s().-]/g, '');
  const international = cleaned.startsWith('+') ? cleaned : cleaned.startsWith('00') ? `+${cleaned.slice(2)}` : null;
  if (!/^\+?\d{4,20}$/.test(international ?? cleaned)) return null;
  if (international !== null) {
    const parsed = parse(international);
    return parsed?.isPossible() ? parsed.number : null;
  }
  const asInternational = parse(`+${cleaned}`);
  if (asInternational?.isValid()) return asInternational.number;
  const asNational = defaultCountry ? parse(cleaned, defaultCountry as CountryCode) : undefined;
  if (asNational?.isValid()) return asNational.number;
  return asInternational?.isPossible() ? asInternational.number : null;
}
