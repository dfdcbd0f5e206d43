// A second baseline: Fastify with one route answering the bytes svc answered, and nothing else. Between it and
// the bare node:http server lies what the framework costs; between it and svc, what svc's own request path costs.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const body = readFileSync(process.argv[2]);
const app = Fastify({ logger: false });
app.get('/api/v1/deployments/:deploymentId/workspace', (_request, reply) => {
  reply.type('application/json; charset=utf-8').send(body);
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`listening on ${address}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
