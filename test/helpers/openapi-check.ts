/**
 * FOR TESTS: every answer the test app gives is checked against the OpenAPI document it serves
 * (docs/design.md#openapi). A Fastify onSend hook, installed by a module that `startTestApp`
 * composes after the real ones, looks up the operation by method and route template
 * (`request.routeOptions.url`) and checks that the status is listed, that the content type is one the
 * status lists, and that the body validates against that media type's schema (JSON Schema 2020-12,
 * the dialect of OpenAPI 3.1, with ajv-formats). Answers of routes hidden from the document
 * (`hide: true`) and of requests that match no route (404, 405, 414) are checked only as problems:
 * an `application/problem+json` body must be a valid problem, and an unmatched error must be one.
 * A problem's `code` must be one the operation documents for that status (the `enum` its response
 * narrows `code` to; none listed: no `code`); off the document, one the document lists somewhere.
 *
 * A mismatch is recorded, never thrown (a throw would change the answer the test is looking at);
 * test/setup/openapi.ts fails the test during which it was recorded, in an afterEach.
 */
import type { Ajv2020 as AjvType, ValidateFunction } from 'ajv/dist/2020.js';
import Ajv2020Module from 'ajv/dist/2020.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AnyModule } from '../../src/modules/index.js';
import { defineModule } from '../../src/modules/module.js';
import { inlineComponents } from '../../src/platform/openapi.js';
import { addKairosFormats } from '../../src/platform/validation.js';

// ajv is CommonJS; under NodeNext its default export arrives as the module namespace.
type AjvCtor = new (opts: object) => AjvType;
const Ajv2020: AjvCtor =
  (Ajv2020Module as unknown as { default?: AjvCtor }).default ?? (Ajv2020Module as unknown as AjvCtor);

interface MediaType {
  schema?: Record<string, unknown>;
}
interface ResponseObject {
  content?: Record<string, MediaType>;
}
interface Operation {
  responses?: Record<string, ResponseObject>;
}
type Doc = {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown> };
};

const STORE = Symbol.for('kairos.openapi-mismatches');
type Store = { mismatches: string[] };

function store(): Store {
  const g = globalThis as unknown as Record<symbol, Store | undefined>;
  g[STORE] ??= { mismatches: [] };
  return g[STORE];
}

/** The mismatches recorded since the last call (and forgets them). */
export function takeMismatches(): string[] {
  const s = store();
  const out = s.mismatches;
  s.mismatches = [];
  return out;
}

/** `/v1/hosts/:id` → `/v1/hosts/{id}`, as fastify-swagger writes paths. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export class ResponseChecker {
  private readonly ajv: AjvType;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly components: Record<string, unknown>;
  private readonly problem: ValidateFunction;
  private allCodes: Set<string> | undefined;

  constructor(private readonly doc: Doc) {
    // The document's formats: the standard ones and Kairos's own (iana-time-zone).
    this.ajv = addKairosFormats(new Ajv2020({ strict: false, allErrors: true, validateFormats: true }));
    this.components = doc.components?.schemas ?? {};
    const problem = this.components.Problem;
    if (!problem) throw new Error('the OpenAPI document has no Problem schema');
    this.problem = this.ajv.compile(inlineComponents(problem, this.components) as object);
  }

  private validator(key: string, schema: Record<string, unknown>): ValidateFunction {
    let v = this.compiled.get(key);
    if (!v) {
      v = this.ajv.compile(inlineComponents(schema, this.components) as object);
      this.compiled.set(key, v);
    }
    return v;
  }

  private errorsOf(v: ValidateFunction): string {
    return this.ajv.errorsText(v.errors, { dataVar: 'body' });
  }

  /** What is wrong with one answer, or null. `body` is the text sent (undefined: a stream, not checked). */
  check(a: {
    method: string;
    route: string | undefined;
    hidden: boolean;
    status: number;
    contentType: string | undefined;
    body: string | undefined;
  }): string | null {
    // Fastify sends no body (and no content type) with a 204 or 1xx, and none in answer to HEAD.
    const bodiless = a.status === 204 || a.status < 200 || a.method === 'HEAD';
    const media = bodiless ? undefined : a.contentType?.split(';')[0]?.trim().toLowerCase();
    if (bodiless) a = { ...a, body: '' };
    // HEAD is answered by the GET route (Fastify's exposeHeadRoutes).
    const method = a.method === 'HEAD' ? 'get' : a.method.toLowerCase();
    const op =
      a.route !== undefined && !a.hidden ? this.doc.paths[openApiPath(a.route)]?.[method] : undefined;
    if (!op) {
      // Hidden or unmatched: only problems are checked (pages and documents answer what they like).
      if (media === 'application/problem+json') {
        return this.checkProblem(a.status, a.body) ?? this.checkCode(a.status, a.body, undefined);
      }
      // An unmatched error answer must be a problem, unless it has no body (HEAD): nothing to read.
      if (a.route === undefined && a.status >= 400 && !bodiless)
        return `a ${a.status} without a route is ${media}`;
      return null;
    }
    const responses = op.responses ?? {};
    const listed = responses[String(a.status)] ?? responses[`${String(a.status)[0]}XX`] ?? responses.default;
    if (!listed) {
      return `status ${a.status} is not listed (listed: ${Object.keys(responses).join(', ')})`;
    }
    const content = listed.content;
    if (!content || Object.keys(content).length === 0 || bodiless) {
      if (a.body !== undefined && a.body.length > 0) {
        return `status ${a.status} lists no body, but one was sent (${media})`;
      }
      return null;
    }
    if (media === undefined || !(media in content)) {
      return `status ${a.status} is ${media ?? 'without a content type'}; listed: ${Object.keys(content).join(', ')}`;
    }
    if (media === 'application/problem+json') {
      const wrong = this.checkProblem(a.status, a.body) ?? this.checkCode(a.status, a.body, listed);
      if (wrong) return wrong;
    }
    const schema = content[media]?.schema;
    if (!schema || a.body === undefined) return null;
    let data: unknown = a.body;
    if (media.endsWith('json')) {
      try {
        data = JSON.parse(a.body);
      } catch {
        return `status ${a.status} ${media} body is not JSON`;
      }
    }
    const v = this.validator(`${a.method} ${a.route} ${a.status} ${media}`, schema);
    if (!v(data)) return `status ${a.status} ${media} body: ${this.errorsOf(v)}`;
    return null;
  }

  /**
   * The codes a problem response documents: the `enum` its schema (a component, by reference) narrows
   * `code` to (none: []).
   */
  private codesOf(response: ResponseObject): string[] {
    const schema = inlineComponents(
      response.content?.['application/problem+json']?.schema,
      this.components,
    ) as { allOf?: { properties?: { code?: { enum?: unknown[] } } }[] } | undefined;
    return (schema?.allOf ?? []).flatMap((s) => (s.properties?.code?.enum ?? []).map(String));
  }

  /** Every code the document lists on some operation (for answers off the document). */
  private everyCode(): Set<string> {
    this.allCodes ??= new Set(
      Object.values(this.doc.paths).flatMap((ops) =>
        Object.values(ops).flatMap((op) => Object.values(op.responses ?? {}).flatMap((r) => this.codesOf(r))),
      ),
    );
    return this.allCodes;
  }

  /** A problem's `code` must be documented for the operation and status (`listed`; undefined: off the document). */
  private checkCode(
    status: number,
    body: string | undefined,
    listed: ResponseObject | undefined,
  ): string | null {
    if (body === undefined) return null;
    const code = (JSON.parse(body) as { code?: unknown }).code;
    if (code === undefined) return null;
    const allowed = listed ? this.codesOf(listed) : [...this.everyCode()];
    if (typeof code === 'string' && allowed.includes(code)) return null;
    return `problem code ${JSON.stringify(code)} is not documented for status ${status} (documented: ${allowed.join(', ') || 'none'})`;
  }

  private checkProblem(status: number, body: string | undefined): string | null {
    if (body === undefined) return null;
    let data: unknown;
    try {
      data = JSON.parse(body);
    } catch {
      return `problem body of ${status} is not JSON`;
    }
    if (!this.problem(data)) return `problem body of ${status}: ${this.errorsOf(this.problem)}`;
    const s = (data as { status?: unknown }).status;
    if (s !== status) return `problem status ${String(s)} differs from the HTTP status ${status}`;
    return null;
  }
}

function bodyText(payload: unknown): string | undefined {
  if (payload === null || payload === undefined) return '';
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return undefined; // a stream: not read here
}

/** Installs the onSend check on an app (its document is read once, when the first answer is sent). */
export function installResponseCheck(app: FastifyInstance): void {
  let checker: ResponseChecker | undefined;
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    checker ??= new ResponseChecker(app.swagger() as unknown as Doc);
    // A 405 says the path does not take the method: no operation answered it, whatever route matched.
    const route = request.is404 || reply.statusCode === 405 ? undefined : request.routeOptions.url;
    const schema = request.routeOptions.schema as { hide?: boolean } | undefined;
    const header = reply.getHeader('content-type');
    let wrong: string | null;
    try {
      wrong = checker.check({
        method: request.method,
        route,
        hidden: schema?.hide === true,
        status: reply.statusCode,
        contentType: typeof header === 'string' ? header : undefined,
        body: bodyText(payload),
      });
    } catch (err) {
      wrong = `the check itself failed: ${(err as Error).message}`;
    }
    if (wrong) {
      store().mismatches.push(`${request.method} ${request.url} (${route ?? 'no route'}): ${wrong}`);
    }
    return payload;
  });
}

/** The module `startTestApp` composes last: it only installs the check. */
export function responseCheckModule(): AnyModule {
  return defineModule()({
    name: 'test-openapi-check',
    needs: [],
    create: () => ({ api: {}, routes: (app) => installResponseCheck(app as unknown as FastifyInstance) }),
  });
}
