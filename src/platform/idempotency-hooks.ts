import type { onSendAsyncHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import { targetPath } from './auth.js';
import { bodyHash, type IdempotencyStore, REPLAYED_HEADERS, validateIdempotencyKey } from './idempotency.js';

/**
 * The Idempotency-Key hooks of a route that declares `config.idempotent`: claim before the handler,
 * store the answer before it leaves (docs/api.md, Idempotency). Attached per route (platform/http.ts),
 * so other requests pay nothing.
 */
export function idempotencyHooks(idempotency: Pick<IdempotencyStore, 'claim' | 'complete' | 'release'>): {
  claim: preHandlerAsyncHookHandler;
  store: onSendAsyncHookHandler;
} {
  const claim: preHandlerAsyncHookHandler = async (request, reply) => {
    const key = validateIdempotencyKey(request.headers['idempotency-key']);
    if (key === null) return;
    const c = request.caller;
    const path = targetPath(request.url);
    const scope = c.principalId ?? `anon:${request.routeOptions.url ?? ''}:${path}`;
    const claimed = await idempotency.claim(scope, key, request.method, path, bodyHash(request.body));
    if (claimed.kind === 'replay') {
      reply.code(claimed.status);
      for (const [h, v] of Object.entries(claimed.headers)) reply.header(h, v);
      reply.header('idempotent-replayed', 'true');
      return reply.send(claimed.body);
    }
    request.idem = { scope, key };
  };

  const store: onSendAsyncHookHandler = async (request, reply, payload) => {
    const idem = request.idem;
    if (!idem) return payload;
    request.idem = null;
    if (reply.statusCode >= 500 || typeof payload !== 'string') {
      // A 503 for an unreachable store cannot release either: the claim's lease then frees the key.
      await idempotency.release(idem.scope, idem.key).catch(() => {});
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const h of REPLAYED_HEADERS) {
      const v = reply.getHeader(h);
      if (v !== undefined) headers[h] = String(v);
    }
    await idempotency.complete(idem.scope, idem.key, reply.statusCode, headers, payload);
    return payload;
  };

  return { claim, store };
}
