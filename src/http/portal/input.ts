// The typed input of a page's query string, instead of casting `request.query` in every handler.
import type { FastifyRequest } from 'fastify';

/** A page's query parameters as text; a parameter that is absent, or given more than once, is undefined. */
export type PageQuery = Readonly<Record<string, string | undefined>>;

/**
 * Reads the query string of a portal page. The parser turns a repeated parameter into an array;
 * no page takes one, so it is read as absent (as a form body's field is by `str`), never cast.
 */
export function pageQuery(request: FastifyRequest): PageQuery {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  const raw = request.query;
  if (raw && typeof raw === 'object')
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  return out;
}
