// The load generator of the inbound bench: signed provider webhooks, one new message each, from
// 5,000 different numbers, through autocannon. Prints one JSON line.
import crypto from 'node:crypto';

import autocannon from 'autocannon';

const secret = process.env.APP_SECRET!;
const phoneNumberId = process.env.PHONE_NUMBER_ID!;
let n = 0;
const result = await autocannon({
  url: process.env.TARGET!,
  connections: Number(process.env.CONNECTIONS ?? 50),
  duration: Number(process.env.DURATION ?? 10),
  requests: [
    {
      method: 'POST',
      setupRequest: (req) => {
        const i = n++;
        const body = JSON.stringify({
          object: 'whatsapp_business_account',
          entry: [
            {
              id: 'w',
              changes: [
                {
                  field: 'messages',
                  value: {
                    messaging_product: 'whatsapp',
                    metadata: { phone_number_id: phoneNumberId },
                    contacts: [{ profile: { name: 'Load' }, wa_id: `1650${5550000 + (i % 5000) * 37}` }],
                    messages: [
                      {
                        from: `1650${5550000 + (i % 5000) * 37}`,
                        id: `wamid.bench${i}.${crypto.randomUUID()}`,
                        timestamp: String(Math.floor(Date.now() / 1000)),
                        type: 'text',
                        text: { body: `message ${i}` },
                      },
                    ],
                  },
                },
              ],
            },
          ],
        });
        return {
          ...req,
          body,
          headers: {
            'content-type': 'application/json',
            'x-hub-signature-256': `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`,
          },
        };
      },
    },
  ],
});
console.log(
  JSON.stringify({
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  }),
);
