// The provider's Graph error envelope, as the emulator answers it.
import crypto from 'node:crypto';

export function graphError(
  code: number,
  message: string,
  subcode?: number,
  user?: { title?: string; message?: string },
) {
  return {
    error: {
      message: `(#${code}) ${message}`,
      type: 'OAuthException',
      code,
      ...(subcode !== undefined ? { error_subcode: subcode } : {}),
      ...(user?.title !== undefined ? { error_user_title: user.title } : {}),
      ...(user?.message !== undefined ? { error_user_msg: user.message } : {}),
      error_data: { messaging_product: 'whatsapp', details: message },
      fbtrace_id: `Emu${crypto.randomBytes(8).toString('base64url')}`,
    },
  };
}
