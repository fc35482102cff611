// WhatsApp Flows (issue #35 item 4, decision 0075): a flow message sent through POST /messages
// with the provider's payload (the emulator checks it as the provider does), refused with the path
// when it breaks a rule, and the user's answer (`nfm_reply`), posted by the emulator through the
// signed provider webhook, stored with its `response_json` parsed, linked to our flow message, in
// the API and in message.inbound.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { createPortalUser, PortalClient } from './support/portal.js';

const TO = '+16505551234';

describe('flow messages and their answers', () => {
  let svc: Service;
  let emu: Emulator;
  let stop: () => Promise<void>;
  let n = 0;
  const t0 = Math.floor(Date.now() / 1000) - 3600;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService());
  });
  afterAll(() => stop());
  beforeEach(() => resetEmulator(emu, { statuses: ['sent'] }));

  const post = (t: OfficialCustomer, interactive: Record<string, unknown>) =>
    call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: `flow-${n++}`,
        chatAccountId: t.accountIds[0],
        to: { type: 'phone', phoneE164: TO },
        content: { type: 'interactive', interactive },
      },
    });
  const sent = async (t: OfficialCustomer, interactive: Record<string, unknown>) => {
    const res = await post(t, interactive);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const messageId = res.body.messageId as string;
    const m = await eventually(async () => {
      const got = (await call(svc.url, 'GET', `/messages/${messageId}`, { key: t.key })).body;
      return ['sent', 'failed'].includes(got.status) && got;
    });
    expect(m.status, JSON.stringify(m)).toBe('sent');
    return {
      messageId,
      providerMessageId: m.providerMessageId as string,
      payload: emu.state.sent.find((s) => s.messageId === messageId)!.payload as Record<string, any>,
    };
  };
  const answer = async (t: OfficialCustomer, contextId: string, nfm: Record<string, unknown>) => {
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        phoneNumberId: t.phoneNumberIds[0],
        from: TO.slice(1),
        name: 'Sheena Nelson',
        timestamp: t0 + n++,
        contextId,
        message: { type: 'interactive', interactive: { type: 'nfm_reply', nfm_reply: nfm } },
      }),
    });
    const got = (await res.json()) as { id: string; delivered: boolean };
    expect(got.delivered).toBe(true);
    return got.id;
  };
  const inbox = async (t: OfficialCustomer) =>
    (await call(svc.url, 'GET', '/inbound-messages?limit=100', { key: t.key })).body.inboundMessages as Record<
      string,
      any
    >[];
  const events = async (customerId: string) =>
    (
      await svc.db.query<{ data: Record<string, any> }>(
        `SELECT data FROM events WHERE customer_id = $1 AND type = 'message.inbound' ORDER BY created_at, id`,
        [customerId],
      )
    ).map((e) => e.data);

  const navigate = {
    type: 'flow',
    header: { type: 'text', text: 'Book a pickup' },
    body: { text: 'Choose a day for the courier' },
    footer: { text: 'Takes a minute' },
    flow: {
      flowId: '1197715005513101',
      flowToken: 'pickup-77',
      cta: 'Book now',
      action: 'navigate',
      actionPayload: { screen: 'BOOKING', data: { parcel: '77', days: ['mon', 'tue'] } },
    },
  };

  it('sends navigate and data_exchange flows with the provider payload', async () => {
    const t = await officialCustomer(svc.url, emu);
    const a = await sent(t, navigate);
    expect(a.payload).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: TO.slice(1),
      biz_opaque_callback_data: a.messageId,
      type: 'interactive',
      interactive: {
        type: 'flow',
        header: { type: 'text', text: 'Book a pickup' },
        body: { text: 'Choose a day for the courier' },
        footer: { text: 'Takes a minute' },
        action: {
          name: 'flow',
          parameters: {
            flow_message_version: '3',
            flow_token: 'pickup-77',
            flow_id: '1197715005513101',
            flow_cta: 'Book now',
            flow_action: 'navigate',
            flow_action_payload: { screen: 'BOOKING', data: { parcel: '77', days: ['mon', 'tue'] } },
          },
        },
      },
    });
    const b = await sent(t, {
      type: 'flow',
      body: { text: 'Your survey' },
      flow: { flowName: 'survey_v2', cta: 'Start', action: 'data_exchange', mode: 'draft' },
    });
    expect(b.payload.interactive.action).toEqual({
      name: 'flow',
      parameters: {
        flow_message_version: '3',
        flow_name: 'survey_v2',
        flow_cta: 'Start',
        flow_action: 'data_exchange',
        mode: 'draft',
      },
    });
  });

  it('refuses a flow that breaks a rule with 400 naming the path, before it reaches the provider', async () => {
    const t = await officialCustomer(svc.url, emu);
    const flow = (f: Record<string, unknown>, drop: string[] = []) => {
      const base: Record<string, unknown> = { ...navigate.flow, ...f };
      for (const k of drop) delete base[k];
      return { ...navigate, flow: base };
    };
    const cases: [string, Record<string, unknown>, string][] = [
      ['id and name', flow({ flowName: 'x' }), 'content.interactive.flow'],
      ['neither id nor name', flow({}, ['flowId']), 'content.interactive.flow'],
      ['no screen to navigate to', flow({}, ['actionPayload']), 'content.interactive.flow.actionPayload'],
      ['payload with data_exchange', flow({ action: 'data_exchange' }), 'content.interactive.flow.actionPayload'],
      ['cta too long', flow({ cta: 'x'.repeat(21) }), 'content.interactive.flow.cta'],
      ['cta with emoji', flow({ cta: 'Go \u{1F680}' }), 'content.interactive.flow.cta'],
      ['empty data', flow({ actionPayload: { screen: 'A', data: {} } }), 'content.interactive.flow.actionPayload.data'],
      [
        'data too large',
        flow({ actionPayload: { screen: 'A', data: { x: 'y'.repeat(10_001) } } }),
        'content.interactive.flow.actionPayload.data',
      ],
      ['unknown action', flow({ action: 'open' }), 'content.interactive.flow.action'],
      ['flow part missing', { type: 'flow', body: { text: 'x' } }, 'content.interactive.flow'],
      [
        'flow part on a button message',
        { type: 'button', body: { text: 'x' }, buttons: [{ id: 'a', title: 'A' }], flow: navigate.flow },
        'content.interactive.flow',
      ],
    ];
    const before = emu.state.sent.length;
    for (const [name, interactive, path] of cases) {
      const res = await post(t, interactive);
      expect(res.status, name).toBe(400);
      expect(res.body.error, name).toBe('validation_error');
      expect(
        (res.body.details as { path: string }[]).map((d) => d.path),
        name,
      ).toContain(path);
    }
    // Accepted next, a valid one is the first to reach the provider since.
    await sent(t, navigate);
    expect(emu.state.sent.length).toBe(before + 1);
  });

  it('the answer is stored with its response_json parsed, linked to our flow message, in the API and the event', async () => {
    const t = await officialCustomer(svc.url, emu);
    const ours = await sent(t, navigate);
    await answer(t, ours.providerMessageId, {
      name: 'flow',
      body: 'Sent',
      response_json: JSON.stringify({ flow_token: 'pickup-77', day: 'tue', slot: { from: 9, to: 12 } }),
    });
    await answer(t, ours.providerMessageId, {
      name: 'flow',
      body: 'Sent',
      response_json: '{"flow_token": "pickup-77", ',
    });
    const items = await eventually(async () => {
      const got = await inbox(t);
      return got.length === 2 && got.reverse();
    });
    const replyTo = { providerMessageId: ours.providerMessageId, messageId: ours.messageId };
    expect(items[0]).toMatchObject({
      messageType: 'interactive',
      text: 'Sent',
      replyTo,
      interactive: {
        type: 'nfm_reply',
        id: null,
        title: null,
        flowReply: {
          name: 'flow',
          body: 'Sent',
          response: { flow_token: 'pickup-77', day: 'tue', slot: { from: 9, to: 12 } },
          responseRaw: null,
          invalidJson: false,
          truncated: false,
          flowToken: 'pickup-77',
        },
      },
    });
    expect(items[1]).toMatchObject({
      replyTo,
      interactive: {
        type: 'nfm_reply',
        flowReply: {
          response: null,
          responseRaw: '{"flow_token": "pickup-77", ',
          invalidJson: true,
          truncated: false,
          flowToken: null,
        },
      },
    });
    const one = await call(svc.url, 'GET', `/inbound-messages/${items[0]!.inboundMessageId}`, { key: t.key });
    expect(one.body).toEqual(items[0]);
    const data = await eventually(async () => {
      const got = await events(t.customerId);
      return got.length === 2 && got;
    });
    expect(data.map((d) => [d.interactive, d.replyTo.messageId])).toEqual(
      items.map((i) => [i.interactive, ours.messageId]),
    );

    // The portal's inbox shows the answer's fields (not the token), and the raw text of the broken one.
    await createPortalUser(svc.url, t.customerId, 'owner@flows.example');
    const portal = new PortalClient(svc.url);
    await portal.login('owner@flows.example');
    const page = await portal.get('/portal/inbox');
    expect(page.status).toBe(200);
    expect(page.text).toContain('answered a Flow');
    expect(page.text).toMatch(/answered a Flow<\/strong> day: tue, slot: \{[^<]*&quot;from&quot;:9/);
    expect(page.text).not.toMatch(/answered a Flow<\/strong>[^<]*flow_token&quot;:&quot;pickup/);
    expect(page.text).toContain('{&quot;flow_token&quot;: &quot;pickup-77&quot;, ');
  });
});
