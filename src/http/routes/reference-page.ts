// A self-contained HTML reference rendered from the OpenAPI document (no scripts, no CDN).
type Schema = Record<string, unknown>;
type Operation = {
  summary?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string }>;
};
type OpenApi = {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, Operation>>;
};

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderReference(doc: OpenApi): string {
  const sections = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => {
      const params = (op.parameters ?? [])
        .map(
          (p) =>
            `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${esc(JSON.stringify(p.schema ?? {}))}</code></td></tr>`,
        )
        .join('');
      const body = op.requestBody?.content?.['application/json']?.schema;
      const responses = Object.entries(op.responses ?? {})
        .map(([code, r]) => `<li><code>${esc(code)}</code> ${esc(r.description ?? '')}</li>`)
        .join('');
      return `<section id="${esc(`${method}-${path}`)}"><h2><span class="m">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h2>
<p>${esc(op.summary ?? '')}</p>
${params ? `<table><tr><th>parameter</th><th>in</th><th>required</th><th>schema</th></tr>${params}</table>` : ''}
${body ? `<details><summary>request body schema</summary><pre>${esc(JSON.stringify(body, null, 2))}</pre></details>` : ''}
${responses ? `<ul>${responses}</ul>` : ''}</section>`;
    }),
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info.title)} reference</title>
<style>body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}section{border-top:1px solid #ddd;padding:.5em 0}
.m{display:inline-block;min-width:4.5em;font-size:.8em;background:#234;color:#fff;padding:.2em .4em;border-radius:3px;text-align:center}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left;font-size:.9em}pre{background:#f6f6f6;padding:.5em;overflow:auto}</style></head>
<body><h1>${esc(doc.info.title)} <small>${esc(doc.info.version)}</small></h1><p>${esc(doc.info.description ?? '')}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>${sections.join('\n')}</body></html>`;
}
