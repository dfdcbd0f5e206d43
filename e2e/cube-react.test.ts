import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { bundle, e2eAccount, setUpEmbedStack } from './embed-harness.js';
import type { Route } from './embed-harness.js';
import { hasChromium } from './browser.js';

// Issue 36: the real @cubejs-client/react in Chromium. A host's React page renders `useCubeQuery`'s rows with an
// embed token, through its own origin's /cubejs-api (its backend passes the calls on to svc), and the numbers on
// the page are the widget data endpoint's for the same query and viewer.

const BY_STATUS = { measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.status'], order: { 'orders.status': 'asc' } };
const position = { x: 0, y: 0, w: 6, h: 3 };
const ITEMS = [
  { ref: 'wb-cube', type: 'WORKBOOK', name: 'Cube', createdBy: 'alice', dashboard: {
    publicId: 'cube-react-e2e', status: 'published', allowEmbed: true, title: 'Cube from React',
    config: { widgets: [{ id: 'by-status', type: 'CHART', position }] },
    reportSnapshots: [{ report: 'r-status', kind: 'table', meta: { query: BY_STATUS } }],
  } },
  { ref: 'r-status', type: 'REPORT', name: 'By status', createdBy: 'alice' },
];

const suite = hasChromium ? describe : describe.skip;

suite('@cubejs-client/react against svc in Chromium', () => {
  let js: Promise<string> | undefined;
  /** The host backend's pass-through of Cube's API to svc (the page's calls stay on the host's origin). */
  const passThrough: Route = async (request: IncomingMessage, body: string) => {
    const res = await fetch(`${stack.svc.origin}${request.url}`, {
      method: request.method, headers: { authorization: request.headers.authorization ?? '', 'content-type': 'application/json' },
      ...(request.method === 'POST' ? { body } : {}),
    });
    return { type: 'application/json', status: res.status, body: await res.text() };
  };
  const stack = setUpEmbedStack({
    account: (host) => e2eAccount([host.origin], { items: ITEMS }),
    routes: {
      '/cube.html': { type: 'text/html', body: '<!doctype html><div id="cube"></div><script type="module" src="/cube.js"></script>' },
      '/cube.js': async () => ({ type: 'text/javascript', body: await (js ??= bundle('e2e/fixtures/cube-react-host.ts')) }),
      '/cubejs-api/v1/load': passThrough,
    },
  });

  /** An embed token of a customer-a viewer: Generate Session (the host backend's call), then the exchange. */
  async function viewerToken(): Promise<string> {
    const sessionId = await stack.svc.mint({ externalId: 'ann-1' });
    const exchanged = await fetch(`${stack.svc.origin}/api/v1/embed/session/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId }) });
    expect(exchanged.status).toBe(200);
    return ((await exchanged.json()) as { token: string }).token;
  }

  it('renders useCubeQuery\'s rows with an embed token, equal to the widget data endpoint\'s for the same query', async () => {
    const token = await viewerToken();
    const page = await stack.browser.context.newPage();
    try {
      await page.goto(`${stack.host.origin}/cube.html`);
      await page.waitForFunction(() => (window as unknown as { cubeReady?: boolean }).cubeReady === true);
      await page.evaluate(([t, q]) => (window as unknown as { renderCube(token: string, query: unknown): void }).renderCube(t, q), [token, BY_STATUS] as const);
      await page.locator('#cube-table tbody tr').first().waitFor();
      const rendered = await page.locator('#cube-table tbody tr').evaluateAll((rows) => rows.map((row) => Object.fromEntries(
        [...row.querySelectorAll('td')].map((cell) => [cell.getAttribute('data-member'), cell.textContent]))));

      const widget = await fetch(`${stack.svc.origin}/api/v1/embed/dashboard/cube-react-e2e/widgets/by-status/data`, {
        method: 'POST', headers: { authorization: `Embed-Token ${token}`, 'content-type': 'application/json' }, body: '{}',
      });
      expect(widget.status).toBe(200);
      const { columns, rows } = (await widget.json()) as { columns: Array<{ name: string }>; rows: unknown[][] };
      const expected = rows.map((row) => Object.fromEntries(columns.map((c, i) => [c.name, String(row[i])])));
      expect(expected.length).toBeGreaterThan(1);
      expect(rendered).toEqual(expected);
      expect(await page.locator('#cube-error').count()).toBe(0);
    } finally {
      await page.close();
    }
  });
});
