// Self-serve linking with the provider's Embedded Signup (decision 0076): the provider app and its
// Facebook Login for Business configuration, the JS SDK's URL, and the plans it is on for.
// Without EMBEDDED_SIGNUP_APP_ID and EMBEDDED_SIGNUP_CONFIG_ID (and PROVIDER_APP_SECRET) it is off.
import type { Readers } from './config-readers.js';
import { type Plan, PLANS } from './plans/plans.js';

export type SignupSettings = {
  embeddedSignupAppId: string | null;
  embeddedSignupConfigId: string | null;
  embeddedSignupSdkUrl: string;
  embeddedSignupPlans: Plan[];
};

export const DEFAULT_SDK_URL = 'https://connect.facebook.net/en_US/sdk.js';

export function readSignupSettings({ str }: Readers, problems: string[]): SignupSettings {
  const appId = str('EMBEDDED_SIGNUP_APP_ID');
  const configId = str('EMBEDDED_SIGNUP_CONFIG_ID');
  if ((appId === null) !== (configId === null))
    problems.push('EMBEDDED_SIGNUP_APP_ID and EMBEDDED_SIGNUP_CONFIG_ID go together (set both, or neither)');
  const sdkUrl = str('EMBEDDED_SIGNUP_SDK_URL') ?? DEFAULT_SDK_URL;
  if (!/^https?:\/\/\S+$/.test(sdkUrl)) problems.push('EMBEDDED_SIGNUP_SDK_URL must be an http(s) URL');
  const rawPlans = (str('EMBEDDED_SIGNUP_PLANS') ?? PLANS.join(',')).trim();
  const plans = rawPlans === 'none' ? [] : rawPlans.split(',').map((p) => p.trim());
  const unknown = plans.filter((p) => !(PLANS as readonly string[]).includes(p));
  if (unknown.length > 0)
    problems.push(`EMBEDDED_SIGNUP_PLANS must list plans (${PLANS.join(', ')}) or be none; not ${unknown.join(', ')}`);
  return {
    embeddedSignupAppId: appId,
    embeddedSignupConfigId: configId,
    embeddedSignupSdkUrl: sdkUrl,
    embeddedSignupPlans: plans.filter((p): p is Plan => (PLANS as readonly string[]).includes(p)),
  };
}
