// Which chromium the browser tests drive: Debian's /usr/bin/chromium (or CHROMIUM_PATH), or, on a machine without
// one (or with CHATGATE_BROWSER=packaged), the chromium that the registry package
// @sparticuz/chromium ships brotli-packed in node_modules. scripts/preflight.mjs asks the same.
import fs from 'node:fs';

const SYSTEM_CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Which chromium the tests drive: the system's, or the packaged one where there is none (or when forced). */
export function usePackagedChromium(): boolean {
  return process.env.CHATGATE_BROWSER === 'packaged' || !fs.existsSync(SYSTEM_CHROMIUM);
}

/**
 * The browser's executable. The packaged chromium is unpacked (brotli, about 2 s) to the temporary
 * folder on first use; test/global-setup.ts does that once, before the workers start, so that two
 * test files never unpack it at the same time.
 */
export async function browserExecutable(): Promise<string> {
  if (!usePackagedChromium()) return SYSTEM_CHROMIUM;
  const { default: packaged } = await import('@sparticuz/chromium');
  return packaged.executablePath();
}
