// What the emulated provider checks in a send's payload, kind by kind, as the Cloud API reference
// describes it (docs/provider-protocol-2026.md, "Outgoing message kinds"): the fields each type takes, the
// counts and lengths of interactive messages, coordinates, contact names, known media ids and
// known message ids for replies and reactions. A malformed payload is refused with the
// provider's 131009 ("Parameter value is not valid") naming the field, so tests prove the payloads
// we build. The numbers are written here on their own, not taken from the service's code.

/** What the payload may refer to: uploaded media (their MIME type) and message ids the number knows. */
export type PayloadWorld = { mediaType(id: string): string | undefined; knowsMessage(wamid: string): boolean };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const chars = (s: string) => [...s].length;

class Invalid extends Error {}
const fail = (path: string, what: string): never => {
  throw new Invalid(`${path}: ${what}`);
};

function str(o: Obj, key: string, path: string, max: number, required = true): string | undefined {
  const v = o[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || v.length === 0) return fail(`${path}.${key}`, 'must be a non-empty string');
  if (chars(v) > max) fail(`${path}.${key}`, `must be at most ${max} characters`);
  return v;
}

function onlyKeys(o: Obj, allowed: string[], path: string) {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) fail(`${path}.${k}`, 'unexpected parameter');
}

function obj(v: unknown, path: string): Obj {
  return isObj(v) ? v : fail(path, 'must be an object');
}

function arr(v: unknown, path: string, min: number, max: number): unknown[] {
  if (!Array.isArray(v)) return fail(path, 'must be an array');
  if (v.length < min || v.length > max) fail(path, `must have ${min} to ${max} items`);
  return v;
}

const DOCUMENT_TYPES = [
  'text/plain',
  'application/pdf',
  'application/msword',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.ms-excel',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.ms-powerpoint',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
];
const MEDIA_TYPES: Record<string, string[]> = {
  image: ['image/jpeg', 'image/png'],
  document: DOCUMENT_TYPES,
  audio: ['audio/aac', 'audio/amr', 'audio/mpeg', 'audio/mp4', 'audio/ogg'],
  video: ['video/mp4', 'video/3gpp'],
  sticker: ['image/webp'],
};
const MEDIA_KEYS: Record<string, string[]> = {
  image: ['id', 'link', 'caption'],
  document: ['id', 'link', 'caption', 'filename'],
  audio: ['id', 'link'],
  video: ['id', 'link', 'caption'],
  sticker: ['id', 'link'],
};

function checkMedia(kind: string, v: unknown, path: string, world: PayloadWorld) {
  const m = obj(v, path);
  onlyKeys(m, MEDIA_KEYS[kind]!, path);
  if ((m.id === undefined) === (m.link === undefined)) fail(path, 'must have exactly one of id or link');
  if (m.id !== undefined) {
    const type = world.mediaType(String(m.id));
    if (type === undefined) fail(`${path}.id`, 'unknown media id');
    if (!MEDIA_TYPES[kind]!.includes(type!)) fail(`${path}.id`, `media of type ${type} cannot be sent as ${kind}`);
  }
  if (m.link !== undefined && !/^https?:\/\//.test(String(m.link))) fail(`${path}.link`, 'must be an http(s) URL');
  str(m, 'caption', path, 1024, false);
  str(m, 'filename', path, 240, false);
}

function checkLocation(v: unknown) {
  const l = obj(v, 'location');
  onlyKeys(l, ['latitude', 'longitude', 'name', 'address'], 'location');
  // The provider's current reference types both as strings (a decimal number); a JSON number is
  // still taken, as the provider takes it.
  const degrees = (x: unknown) =>
    typeof x === 'number' ? x : typeof x === 'string' && /^-?\d+(\.\d+)?$/.test(x.trim()) ? Number(x) : NaN;
  const lat = degrees(l.latitude);
  const lon = degrees(l.longitude);
  if (!(lat >= -90 && lat <= 90)) fail('location.latitude', 'must be a decimal number from -90 to 90');
  if (!(lon >= -180 && lon <= 180)) fail('location.longitude', 'must be a decimal number from -180 to 180');
  str(l, 'name', 'location', 1000, false);
  str(l, 'address', 'location', 1000, false);
}

function checkContacts(v: unknown) {
  arr(v, 'contacts', 1, 257).forEach((c, i) => {
    const p = `contacts.${i}`;
    const card = obj(c, p);
    onlyKeys(card, ['name', 'phones', 'emails', 'org', 'urls', 'addresses', 'birthday'], p);
    const name = obj(card.name, `${p}.name`);
    str(name, 'formatted_name', `${p}.name`, 512);
    const list = (key: string, value: string, extra: string[]) => {
      if (card[key] === undefined) return;
      arr(card[key], `${p}.${key}`, 0, 100).forEach((x, j) => {
        const o = obj(x, `${p}.${key}.${j}`);
        onlyKeys(o, [value, 'type', ...extra], `${p}.${key}.${j}`);
        str(o, value, `${p}.${key}.${j}`, 2048);
      });
    };
    list('phones', 'phone', ['wa_id']);
    list('emails', 'email', []);
    list('urls', 'url', []);
    if (card.org !== undefined) onlyKeys(obj(card.org, `${p}.org`), ['company', 'department', 'title'], `${p}.org`);
    if (card.addresses !== undefined)
      arr(card.addresses, `${p}.addresses`, 0, 100).forEach((x, j) =>
        onlyKeys(
          obj(x, `${p}.addresses.${j}`),
          ['street', 'city', 'state', 'zip', 'country', 'country_code', 'type'],
          `${p}.addresses.${j}`,
        ),
      );
    if (card.birthday !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(String(card.birthday)))
      fail(`${p}.birthday`, 'must be YYYY-MM-DD');
  });
}

function checkHeader(v: unknown, type: string, world: PayloadWorld) {
  const h = obj(v, 'interactive.header');
  const kind = String(h.type);
  if (type === 'list' && kind !== 'text') fail('interactive.header.type', 'a list header must be text');
  if (kind === 'text') {
    onlyKeys(h, ['type', 'text'], 'interactive.header');
    str(h, 'text', 'interactive.header', 60);
  } else if (['image', 'video', 'document'].includes(kind)) {
    onlyKeys(h, ['type', kind], 'interactive.header');
    checkMedia(kind, h[kind], `interactive.header.${kind}`, world);
  } else fail('interactive.header.type', 'must be text, image, video or document');
}

function checkButtons(action: Obj) {
  const ids = new Set<string>();
  arr(action.buttons, 'interactive.action.buttons', 1, 3).forEach((b, i) => {
    const p = `interactive.action.buttons.${i}`;
    const button = obj(b, p);
    if (button.type !== 'reply') fail(`${p}.type`, 'must be reply');
    const reply = obj(button.reply, `${p}.reply`);
    const id = str(reply, 'id', `${p}.reply`, 256)!;
    str(reply, 'title', `${p}.reply`, 20);
    if (ids.has(id)) fail(`${p}.reply.id`, 'button ids must be unique');
    ids.add(id);
  });
}

function checkList(action: Obj) {
  str(action, 'button', 'interactive.action', 20);
  const sections = arr(action.sections, 'interactive.action.sections', 1, 10);
  const ids = new Set<string>();
  sections.forEach((s, i) => {
    const p = `interactive.action.sections.${i}`;
    const section = obj(s, p);
    str(section, 'title', p, 24, sections.length > 1);
    arr(section.rows, `${p}.rows`, 1, 10).forEach((r, j) => {
      const row = obj(r, `${p}.rows.${j}`);
      onlyKeys(row, ['id', 'title', 'description'], `${p}.rows.${j}`);
      const id = str(row, 'id', `${p}.rows.${j}`, 200)!;
      str(row, 'title', `${p}.rows.${j}`, 24);
      str(row, 'description', `${p}.rows.${j}`, 72, false);
      if (ids.has(id)) fail(`${p}.rows.${j}.id`, 'row ids must be unique');
      ids.add(id);
    });
  });
  if (ids.size > 10) fail('interactive.action.sections', 'at most 10 rows in all sections');
}

/** A flow message's action, as the provider's Flows reference has it ("Sending a Flow"). */
function checkFlow(action: Obj) {
  const p = 'interactive.action.parameters';
  if (action.name !== 'flow') fail('interactive.action.name', 'must be flow');
  const params = obj(action.parameters, p);
  onlyKeys(
    params,
    [
      'flow_message_version',
      'flow_token',
      'flow_id',
      'flow_name',
      'flow_cta',
      'flow_action',
      'flow_action_payload',
      'mode',
    ],
    p,
  );
  if (params.flow_message_version !== '3') fail(`${p}.flow_message_version`, 'must be "3"');
  if ((params.flow_id === undefined) === (params.flow_name === undefined))
    fail(p, 'exactly one of flow_id or flow_name is required');
  str(params, 'flow_cta', p, 20);
  if (/\p{Extended_Pictographic}/u.test(String(params.flow_cta))) fail(`${p}.flow_cta`, 'emoji are not supported');
  const kind = params.flow_action ?? 'navigate';
  if (kind !== 'navigate' && kind !== 'data_exchange') fail(`${p}.flow_action`, 'must be navigate or data_exchange');
  if (kind === 'navigate') {
    const payload = obj(params.flow_action_payload, `${p}.flow_action_payload`);
    str(payload, 'screen', `${p}.flow_action_payload`, 1000);
    if (payload.data !== undefined && Object.keys(obj(payload.data, `${p}.flow_action_payload.data`)).length === 0)
      fail(`${p}.flow_action_payload.data`, 'must be a non-empty object');
  } else if (params.flow_action_payload !== undefined)
    fail(`${p}.flow_action_payload`, 'must be omitted for data_exchange');
  if (params.mode !== undefined && params.mode !== 'draft' && params.mode !== 'published')
    fail(`${p}.mode`, 'must be draft or published');
}

function checkInteractive(v: unknown, world: PayloadWorld) {
  const i = obj(v, 'interactive');
  onlyKeys(i, ['type', 'header', 'body', 'footer', 'action'], 'interactive');
  const type = String(i.type);
  if (!['button', 'list', 'cta_url', 'flow'].includes(type))
    fail('interactive.type', 'must be button, list, cta_url or flow');
  if (i.header !== undefined) checkHeader(i.header, type, world);
  str(obj(i.body, 'interactive.body'), 'text', 'interactive.body', 1024);
  if (i.footer !== undefined) str(obj(i.footer, 'interactive.footer'), 'text', 'interactive.footer', 60);
  const action = obj(i.action, 'interactive.action');
  if (type === 'button') checkButtons(action);
  if (type === 'list') checkList(action);
  if (type === 'flow') checkFlow(action);
  if (type === 'cta_url') {
    if (action.name !== 'cta_url') fail('interactive.action.name', 'must be cta_url');
    const params = obj(action.parameters, 'interactive.action.parameters');
    str(params, 'display_text', 'interactive.action.parameters', 20);
    if (!/^https?:\/\/\S+$/.test(String(params.url))) fail('interactive.action.parameters.url', 'must be a URL');
  }
}

function checkReaction(v: unknown, world: PayloadWorld) {
  const r = obj(v, 'reaction');
  onlyKeys(r, ['message_id', 'emoji'], 'reaction');
  if (typeof r.message_id !== 'string' || !world.knowsMessage(r.message_id))
    fail('reaction.message_id', 'unknown message');
  if (typeof r.emoji !== 'string') fail('reaction.emoji', 'must be a string (empty removes the reaction)');
}

const KINDS = ['text', 'template', 'image', 'document', 'audio', 'video', 'sticker'];
const TYPES = [...KINDS, 'location', 'contacts', 'interactive', 'reaction'];
const ENVELOPE = [
  'messaging_product',
  'recipient_type',
  'to',
  'recipient',
  'type',
  'context',
  'biz_opaque_callback_data',
];

/** Null when the payload is one the provider takes, else what is wrong (path: problem). */
export function payloadProblem(body: Obj, world: PayloadWorld): string | null {
  try {
    const type = String(body.type ?? 'text');
    if (!TYPES.includes(type)) fail('type', `unknown message type ${type}`);
    onlyKeys(body, [...ENVELOPE, type], '');
    if (body[type] === undefined) fail(type, 'is required');
    if (body.context !== undefined) {
      const id = obj(body.context, 'context').message_id;
      if (typeof id !== 'string' || !world.knowsMessage(id)) fail('context.message_id', 'unknown message');
      if (type === 'reaction') fail('context', 'a reaction takes no context');
    }
    if (type === 'text') str(obj(body.text, 'text'), 'body', 'text', 4096);
    if (MEDIA_TYPES[type]) checkMedia(type, body[type], type, world);
    if (type === 'location') checkLocation(body.location);
    if (type === 'contacts') checkContacts(body.contacts);
    if (type === 'interactive') checkInteractive(body.interactive, world);
    if (type === 'reaction') checkReaction(body.reaction, world);
    return null;
  } catch (err) {
    if (err instanceof Invalid) return err.message.replace(/^\./, '');
    throw err;
  }
}
