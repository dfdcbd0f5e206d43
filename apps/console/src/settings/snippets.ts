/**
 * The Generate Session call for one dashboard, written out in curl, Node and Python (issue 34, "Embedding
 * settings"): what a host's backend runs to mint a viewer's session. Each is complete as written: the admin's API
 * key comes from the environment (`SVC_API_KEY`), never from the page, and the Node and Python ones print the embed
 * URL with the new session id, ready for an iframe's `src`.
 */

/** What the snippets send: Generate Session's body (docs/embedding.md, "Your backend mints a session"). */
export interface SessionRequest {
  deploymentId: number;
  externalId: string;
  embedTenantName: string;
  securityContext: Record<string, unknown>;
  publicId: string;
}

export interface Snippets { curl: string; node: string; python: string }

export const SNIPPET_LANGUAGES = ['curl', 'node', 'python'] as const;
export type SnippetLanguage = (typeof SNIPPET_LANGUAGES)[number];

function bodyOf(request: SessionRequest) {
  return {
    deploymentId: request.deploymentId,
    externalId: request.externalId,
    embedTenantName: request.embedTenantName,
    securityContext: request.securityContext,
    dashboards: [request.publicId],
  };
}

/** A POSIX shell word that is exactly `text`: single quotes, with each `'` closed, escaped and reopened. */
export const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * `value` as a Python literal: JSON's strings and numbers are Python's too (JSON.stringify escapes nothing Python
 * reads otherwise); true, false and null are spelt True, False and None.
 */
export function pythonLiteral(value: unknown, indent = ''): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'None';
  if (typeof value === 'string') return JSON.stringify(value);
  const inner = `${indent}    `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => `${inner}${pythonLiteral(item, inner)},`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${pythonLiteral(item, inner)},`).join('\n')}\n${indent}}`;
}

/** The three snippets for `request`, against svc at `origin` (the console's own, e.g. `https://svc.example.com`). */
export function sessionSnippets(origin: string, request: SessionRequest): Snippets {
  const body = bodyOf(request);
  const endpoint = `${origin}/api/v1/embed/generate-session`;
  const embedUrl = `${origin}/embed/dashboard/${encodeURIComponent(request.publicId)}?session=`;
  const curl = [
    '# Your backend, never the browser: SVC_API_KEY is an admin\'s API key.',
    `curl -s -X POST ${shellQuote(endpoint)} \\`,
    '  -H "Authorization: Bearer $SVC_API_KEY" \\',
    "  -H 'Content-Type: application/json' \\",
    `  -d ${shellQuote(JSON.stringify(body))}`,
    '# {"sessionId":"...","expiresAt":"..."}: single use, 5 minutes. The iframe opens',
    `# ${embedUrl}<sessionId>`,
  ].join('\n');
  const node = [
    '// session.mjs: SVC_API_KEY=<an admin\'s API key> node session.mjs (Node 18 or later). Your backend, never the browser.',
    `const res = await fetch(${JSON.stringify(endpoint)}, {`,
    "  method: 'POST',",
    "  headers: { authorization: `Bearer ${process.env.SVC_API_KEY}`, 'content-type': 'application/json' },",
    `  body: JSON.stringify(${JSON.stringify(body, null, 2).replaceAll('\n', '\n  ')}),`,
    '});',
    'if (!res.ok) throw new Error(`generate-session: ${res.status} ${await res.text()}`);',
    'const { sessionId } = await res.json(); // single use, valid 5 minutes: mint one per page view',
    `console.log(${JSON.stringify(embedUrl)} + encodeURIComponent(sessionId));`,
  ].join('\n');
  const python = [
    "# session.py: SVC_API_KEY=<an admin's API key> python3 session.py. Your backend, never the browser.",
    'import json, os, urllib.parse, urllib.request',
    '',
    `body = ${pythonLiteral(body)}`,
    'request = urllib.request.Request(',
    `    ${JSON.stringify(endpoint)},`,
    "    data=json.dumps(body).encode(), method='POST',",
    "    headers={'Authorization': 'Bearer ' + os.environ['SVC_API_KEY'], 'Content-Type': 'application/json'},",
    ')',
    'with urllib.request.urlopen(request) as response:',
    "    session_id = json.load(response)['sessionId']  # single use, valid 5 minutes: mint one per page view",
    `print(${JSON.stringify(embedUrl)} + urllib.parse.quote(session_id, safe=''))`,
  ].join('\n');
  return { curl, node, python };
}
