// A bare Fastify server for the baseline: one route answering a JSON body of the same size as GET /v1/me.
import Fastify from 'fastify';

const body = JSON.parse(process.env.BARE_BODY ?? '{}');
const app = Fastify({ logger: false });
app.get('/bare', async () => body);
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ url })}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
