// Template management as the provider serves it (GET/POST /{version}/{waba-id}/message_templates),
// with management-token auth, cursor paging, the definition checks that matter to callers, and
// the control calls tests use to seed templates, decide their review and inject failures.
import crypto from 'node:crypto';

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { EmulatedTemplate, EmulatorState, FailureRule, TemplateOperation } from './emulator-state.js';
import { checkDefinition, presetAuthentication } from './emulator-template-definitions.js';
import { registerTemplateReviewControl } from './emulator-template-review.js';
import { graphError } from './graph-error.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A numeric id like the provider's (16 digits; randomInt's range is limited to 2^48). */
const newTemplateId = () => `${crypto.randomInt(1e7, 1e8)}${crypto.randomInt(1e7, 1e8)}`;
const DEFAULT_PAGE = 25; // the provider's default page size
const MAX_PAGE = 1000;

type WabaParams = { version: string; wabaId: string };

/** Cursors name the last template of a page by id, so pages stay stable while templates are added. */
const encodeCursor = (id: string) => Buffer.from(`emu:${id}`).toString('base64url');
const decodeCursor = (cursor: string): string | null => {
  const raw = Buffer.from(cursor, 'base64url').toString('utf8');
  return raw.startsWith('emu:') ? raw.slice(4) : null;
};

/** Answers a template call when the WABA's management token is wrong, or a rule applies. */
async function refuse(
  state: EmulatorState,
  operation: TemplateOperation,
  request: FastifyRequest<{ Params: WabaParams }>,
  reply: FastifyReply,
): Promise<boolean> {
  const { wabaId } = request.params;
  const token = (request.headers.authorization ?? '').replace(/^Bearer /, '');
  if (state.latencyMs > 0) await sleep(state.latencyMs);
  const expected = state.managementTokens.get(wabaId);
  if (!token || (expected !== undefined && token !== expected)) {
    await reply
      .code(401)
      .send(graphError(190, 'Error validating access token: Session has expired or the token is invalid.'));
    return true;
  }
  state.templateCalls.push({ operation, wabaId, token, query: { ...(request.query as Record<string, string>) } });
  const rule = state.takeTemplateRule(operation, wabaId);
  if (!rule) return false;
  await answerRule(rule, reply);
  return true;
}

async function answerRule(rule: FailureRule, reply: FastifyReply): Promise<void> {
  if (rule.hang) {
    await sleep(120_000);
    await reply.code(504).send();
    return;
  }
  if (rule.retryAfter !== undefined) void reply.header('retry-after', String(rule.retryAfter));
  const body = rule.error
    ? graphError(rule.error.code, rule.error.message ?? 'Injected failure', rule.error.subcode, {
        title: rule.userTitle,
        message: rule.userMessage,
      })
    : { error: 'injected' };
  await reply.code(rule.httpStatus ?? 400).send(body);
}

export function registerTemplateRoutes(app: FastifyInstance, state: EmulatorState): void {
  app.get<{ Params: WabaParams; Querystring: Record<string, string> }>(
    '/:version/:wabaId/message_templates',
    async (request, reply) => {
      if (await refuse(state, 'list', request, reply)) return reply;
      const { version, wabaId } = request.params;
      const q = request.query;
      const limit = q.limit === undefined ? DEFAULT_PAGE : Number(q.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE)
        return reply.code(400).send(graphError(100, 'Invalid parameter: limit'));
      const statuses = q.status ? q.status.toUpperCase().split(',') : null;
      const name = q.name?.toLowerCase();
      const matching = (state.templates.get(wabaId) ?? []).filter(
        (t) => (!statuses || statuses.includes(t.status)) && (!name || t.name.toLowerCase().includes(name)),
      );
      let start = 0;
      if (q.after !== undefined) {
        const lastId = decodeCursor(q.after);
        const at = matching.findIndex((t) => t.id === lastId);
        if (at < 0) return reply.code(400).send(graphError(100, 'Invalid parameter: after cursor'));
        start = at + 1;
      }
      const page = matching.slice(start, start + limit);
      const fields = q.fields ? ['id', ...q.fields.split(',').map((f) => f.trim())] : null;
      const data = page.map((t) =>
        fields ? Object.fromEntries(Object.entries(t).filter(([k]) => fields.includes(k))) : t,
      );
      if (page.length === 0) return { data };
      const after = encodeCursor(page[page.length - 1]!.id);
      const more = start + limit < matching.length;
      const next = new URL(`http://${request.headers.host ?? '127.0.0.1'}/${version}/${wabaId}/message_templates`);
      for (const [k, v] of Object.entries(q)) if (k !== 'after') next.searchParams.set(k, v);
      next.searchParams.set('after', after);
      return {
        data,
        paging: { cursors: { before: encodeCursor(page[0]!.id), after }, ...(more ? { next: next.toString() } : {}) },
      };
    },
  );

  app.post<{ Params: WabaParams; Body: Record<string, unknown> }>(
    '/:version/:wabaId/message_templates',
    async (request, reply) => {
      if (await refuse(state, 'create', request, reply)) return reply;
      const { wabaId } = request.params;
      const body = request.body ?? {};
      const list = state.templates.get(wabaId) ?? [];
      const problem = checkDefinition(body, list);
      if (problem) return reply.code(400).send(problem);
      const template: EmulatedTemplate = {
        id: newTemplateId(),
        name: body.name as string,
        language: body.language as string,
        // The provider may file a template under another category than the one asked for.
        category: state.forcedCategories.get(wabaId) ?? (body.category as string),
        status: 'PENDING',
        parameter_format: body.parameter_format === 'NAMED' ? 'NAMED' : 'POSITIONAL',
        components:
          body.category === 'AUTHENTICATION'
            ? presetAuthentication(body.components as Record<string, unknown>[])
            : (body.components as Record<string, unknown>[]),
        rejected_reason: 'NONE',
      };
      list.push(template);
      state.templates.set(wabaId, list);
      return { id: template.id, status: template.status, category: template.category };
    },
  );
}

export function registerTemplateControls(
  app: FastifyInstance,
  state: EmulatorState,
  /** Posts a template webhook to the callback of the WABA's numbers (or the app's). */
  post: (wabaId: string, payload: unknown) => Promise<number | null>,
): void {
  app.put<{ Params: { wabaId: string }; Body: { managementToken?: string | null; forceCategory?: string | null } }>(
    '/__emulator/wabas/:wabaId',
    async (request) => {
      const { wabaId } = request.params;
      const { managementToken, forceCategory } = request.body ?? {};
      if (managementToken === null) state.managementTokens.delete(wabaId);
      else if (managementToken !== undefined) state.managementTokens.set(wabaId, managementToken);
      if (forceCategory === null) state.forcedCategories.delete(wabaId);
      else if (forceCategory !== undefined) state.forcedCategories.set(wabaId, forceCategory);
      return {
        wabaId,
        managementToken: state.managementTokens.has(wabaId),
        forceCategory: state.forcedCategories.get(wabaId) ?? null,
      };
    },
  );

  /** Seeds templates (provider field names; id, status APPROVED, language en_US and category UTILITY by default). */
  app.post<{ Params: { wabaId: string }; Body: { templates: Partial<EmulatedTemplate>[] } }>(
    '/__emulator/templates/:wabaId',
    async (request) => {
      const list = state.templates.get(request.params.wabaId) ?? [];
      const added = (request.body?.templates ?? []).map(
        (t) =>
          ({
            id: newTemplateId(),
            language: 'en_US',
            category: 'UTILITY',
            status: 'APPROVED',
            parameter_format: 'POSITIONAL',
            components: [],
            rejected_reason: 'NONE',
            name: 'template',
            ...t,
          }) as EmulatedTemplate,
      );
      list.push(...added);
      state.templates.set(request.params.wabaId, list);
      return { templates: added };
    },
  );
  app.get<{ Params: { wabaId: string } }>('/__emulator/templates/:wabaId', async (request) => ({
    templates: state.templates.get(request.params.wabaId) ?? [],
  }));
  app.delete<{ Params: { wabaId: string } }>('/__emulator/templates/:wabaId', async (request) => {
    state.templates.delete(request.params.wabaId);
    return { ok: true };
  });

  registerTemplateReviewControl(app, state, post);
}
