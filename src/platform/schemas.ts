import { type TSchema, Type } from '@sinclair/typebox';

/** Shared schema pieces. */
export const Uuid = Type.String({ format: 'uuid', description: 'UUID' });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp' });
export const Pagination = Type.Object({
  next_cursor: Type.Union([Type.String(), Type.Null()]),
  has_more: Type.Boolean(),
});
export const ListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);
export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const Problem = Type.Object(
  {
    type: Type.String({ format: 'uri' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    request_id: Type.String({ pattern: '^req_' }),
    errors: Type.Optional(Type.Record(Type.String(), Type.String())),
    retry_after: Type.Optional(Timestamp),
    code: Type.Optional(Type.String()),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem detail' },
);

export function wrap<K extends string, T extends TSchema>(name: K, schema: T) {
  return Type.Object({ [name]: schema } as { [P in K]: T });
}
