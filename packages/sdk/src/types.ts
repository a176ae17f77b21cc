/**
 * Types of every operation's inputs and results, taken from the generated document types
 * (openapi.ts) by operationId, and the call signature each resource method gets from them.
 */
import type { operations as Ops, webhooks } from './openapi.js';
import type { operations as table } from './operations.js';

/** Every operation the client calls, by operationId. */
export type OperationId = keyof typeof table;

type Json<T> = T extends { content: { 'application/json': infer J } } ? J : never;

/** The JSON body an operation takes. */
export type Body<K extends OperationId> = Json<NonNullable<Ops[K]['requestBody']>>;
/** The query parameters an operation takes. */
export type Query<K extends OperationId> = NonNullable<Ops[K]['parameters']['query']>;

type Responses<K extends OperationId> = Ops[K]['responses'];
/** What an operation resolves to: its success answer's JSON (undefined for 204). */
export type Result<K extends OperationId> = {
  [S in keyof Responses<K>]: S extends 200 | 201 | 202
    ? Json<Responses<K>[S]>
    : S extends 204
      ? undefined
      : never;
}[keyof Responses<K>];

/** The element type of a list answer (`{bookings: […], pagination}` → a booking). */
export type Item<R> = {
  [P in keyof R]: P extends 'pagination' ? never : R[P] extends readonly (infer I)[] ? I : never;
}[keyof R];

/** Per-call options. */
export interface RequestOptions {
  /** For creating POSTs: the key that makes a repeat a replay (default: one the SDK makes per call). */
  idempotencyKey?: string;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
  /** Overrides the client's `timeoutMs` for this call (per attempt). */
  timeoutMs?: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Query parameters of an operation that also takes a body (e.g. `principal_id`). */
  query?: Record<string, unknown>;
}

type Flags<K extends OperationId> = (typeof table)[K][2];
type Path<K extends OperationId> = (typeof table)[K][1];
type PathArgs<P extends string> = P extends `${string}{${string}}${infer Rest}`
  ? [string, ...PathArgs<Rest>]
  : [];
type OptionalIf<Required extends boolean, T> = Required extends true ? [input: T] : [input?: T];
type Input<K extends OperationId> =
  Flags<K> extends `b${string}`
    ? OptionalIf<undefined extends Ops[K]['requestBody'] ? false : true, Body<K>>
    : Flags<K> extends `q${string}`
      ? OptionalIf<undefined extends Ops[K]['parameters']['query'] ? false : true, Query<K>>
      : [];

/** A list call: awaited, the first page; iterated with `for await`, every item of every page. */
export interface PagePromise<R> extends PromiseLike<R>, AsyncIterable<Item<R>> {
  /** One page: the first, or the one `cursor` (a previous page's `next_cursor`) names. */
  page(cursor?: string): Promise<R>;
}

/** Per-call options; for an operation with a body and query parameters, `query` is typed as the latter. */
type Options<K extends OperationId> =
  Flags<K> extends `bq${string}` ? Omit<RequestOptions, 'query'> & { query?: Query<K> } : RequestOptions;

/** The method an operation becomes: path parameters in order, then its body or query, then options. */
export type Method<K extends OperationId> = (
  ...args: [...PathArgs<Path<K>>, ...Input<K>, options?: Options<K>]
) => Flags<K> extends `${string}p${string}` ? PagePromise<Result<K>> : Promise<Result<K>>;

/** A webhook delivery's body, by event type (the document's `webhooks`). */
export type WebhookEvent = {
  [T in keyof webhooks]: Json<NonNullable<NonNullable<webhooks[T]['post']>['requestBody']>>;
}[keyof webhooks];
