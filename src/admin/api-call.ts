// One request of a `chatgate` command to the service, and what a command prints when it fails:
// always one line on stderr (`error: 400 validation_error: to.phoneE164 must be …`), never the
// raw answer, and a distinct exit code per kind of failure (EXIT).

/** The exit codes of every `chatgate` command that talks to the service (docs/cli.md). */
export const EXIT = {
  ok: 0,
  /** The service answered an error (4xx, 5xx). */
  refused: 1,
  /** A mistake on the command line. */
  usage: 2,
  /** accounts create/update: saved, but the access token could not be checked (AUTHENTICATING). */
  unverified: 3,
  /** The service could not be reached (or answered something that is not the API). */
  unreachable: 4,
} as const;

/** A failure a command reports as one line and an exit code. */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CommandError';
  }
}

export type Answer = { status: number; ok: boolean; text: string; json: unknown };

/** The request, or a CommandError (exit 4) naming the service that could not be reached. */
export async function apiCall(
  baseUrl: string,
  auth: Record<string, string>,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        accept: 'application/json',
        ...auth,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(60_000),
    });
    text = await res.text();
  } catch (err) {
    throw unreachable(baseUrl, err);
  }
  return { status: res.status, ok: res.ok, text, json: parseJson(text) };
}

export function unreachable(baseUrl: string, err: unknown): CommandError {
  return new CommandError(
    `error: cannot reach the service at ${baseUrl} (${causeOf(err)}); is it running? set CHATGATE_URL or --url`,
    EXIT.unreachable,
  );
}

/** The error answer as one line: `error: <status> <code>: <what>`, the details of a validation error joined. */
export function errorLine(status: number, text: string): string {
  const body = parseJson(text);
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return `error: ${status} ${oneLine(text) || 'no answer body'}`;
  const b = body as Record<string, unknown>;
  const code = typeof b.error === 'string' ? b.error : `http_${status}`;
  const parts: string[] = [];
  if (Array.isArray(b.details))
    parts.push(
      b.details
        .map((d: { path?: unknown; message?: unknown }) =>
          [d.path, d.message].filter((x) => x !== undefined && x !== '').join(' '),
        )
        .join('; '),
    );
  for (const k of ['message', 'reason'] as const) if (typeof b[k] === 'string') parts.push(b[k]);
  for (const k of ['plan', 'status', 'limit'] as const)
    if (typeof b[k] === 'string' || typeof b[k] === 'number') parts.push(`${k} ${b[k]}`);
  const what = parts.filter((p) => p !== '').join('; ');
  return oneLine(`error: ${status} ${code}${what ? `: ${what}` : ''}`);
}

const oneLine = (s: string) =>
  s
    .replace(/\s*\n\s*/g, ' ')
    .trim()
    .slice(0, 2000);

function parseJson(text: string): unknown {
  try {
    return text === '' ? null : JSON.parse(text);
  } catch {
    return text;
  }
}

/** "connect ECONNREFUSED 127.0.0.1:9": the error and its causes, which fetch hides. */
export function causeOf(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && parts.length < 3; e = (e as { cause?: unknown }).cause) {
    const text = e instanceof Error ? e.message : String(e);
    if (text && text !== 'fetch failed' && !parts.includes(text)) parts.push(text);
    if (!(e instanceof Error)) break;
  }
  return parts.join(': ') || 'network error';
}
