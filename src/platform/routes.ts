import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';

/**
 * The app as route plugins see it: typed by TypeBox, so a route's request parts are typed by its
 * schemas and its answers are checked against its declared responses.
 */
export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** preValidation of POSTs whose body is optional: no body validates as `{}`. */
export async function emptyBodyIsObject(request: FastifyRequest): Promise<void> {
  request.body ??= {};
}
