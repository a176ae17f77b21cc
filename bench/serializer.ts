import fastJsonStringify, { type AnySchema } from 'fast-json-stringify';
import { openApiDocument } from '../src/openapi.js';
import { inlineComponents } from '../src/platform/openapi.js';
import { buildSerializer } from '../src/platform/serializer.js';
import { alternated, fmt, median, type Row } from './lib.js';

/** Alternated rounds and the answers written per side in a round (a page of 50 writes fewer). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const WRITES = 40_000;

type Json = Record<string, unknown>;
interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, Json> }> }>>;
  components: { schemas: Record<string, unknown> };
}

/** The route's answer schema with every `$ref` written out, and its documented example. */
function answerOf(
  doc: Doc,
  path: string,
  method: string,
  status: string,
): { schema: unknown; example: unknown } {
  const content = doc.paths[path]?.[method]?.responses[status]?.content?.['application/json'];
  if (!content) throw new Error(`no answer ${method} ${path} ${status}`);
  return { schema: inlineComponents(content.schema, doc.components.schemas), example: content.example };
}

/**
 * Kairos's serializer (platform/serializer.ts: unions written by type, not by asking Ajv) beside
 * fast-json-stringify over the route's own schema (what Fastify's default compiler builds), on the
 * documented answers of `GET /v1/me`, `POST /v1/bookings` and a page of 50 bookings: µs per answer,
 * the median of ROUNDS alternated rounds in this process, and the ratio of each round.
 */
export async function benchSerializer(): Promise<Row[]> {
  const doc = (await openApiDocument()) as unknown as Doc;
  const page = answerOf(doc, '/v1/bookings', 'get', '200');
  const first = (page.example as { bookings: unknown[] }).bookings[0];
  const cases = [
    { name: 'GET /v1/me', ...answerOf(doc, '/v1/me', 'get', '200'), per: 1 },
    { name: 'POST /v1/bookings', ...answerOf(doc, '/v1/bookings', 'post', '201'), per: 1 },
    {
      name: 'GET /v1/bookings, a page of 50',
      schema: page.schema,
      example: { ...(page.example as Json), bookings: Array.from({ length: 50 }, () => first) },
      per: 50,
    },
  ];
  const compile = buildSerializer({}, {});
  const rows: Row[] = [];
  for (const c of cases) {
    const plain = fastJsonStringify(structuredClone(c.schema) as AnySchema);
    const kairos = compile({ schema: structuredClone(c.schema) });
    if (plain(c.example) !== kairos(c.example)) throw new Error(`${c.name}: the two serializers differ`);
    const n = Math.max(1, Math.round(WRITES / c.per));
    const time = async (write: (d: unknown) => string) => {
      let bytes = 0;
      const t = process.hrtime.bigint();
      for (let i = 0; i < n; i++) bytes += write(c.example).length;
      if (bytes === 0) throw new Error('nothing written');
      return Number(process.hrtime.bigint() - t) / n / 1000;
    };
    const rounds = await alternated(
      ROUNDS,
      () => time(kairos),
      () => time(plain),
    );
    const ratios = rounds.map((r) => (100 * r.a) / r.b);
    rows.push({
      name: `serializer: ${c.name}, Kairos's / fast-json-stringify over the route's schema`,
      value: `${fmt(median(rounds.map((r) => r.a)), 2)} / ${fmt(median(rounds.map((r) => r.b)), 2)}`,
      unit: `µs an answer, medians; ${fmt(median(ratios))} % (rounds: ${ratios.map((x) => fmt(x)).join(', ')}); target < 100 %`,
    });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await benchSerializer());
}
