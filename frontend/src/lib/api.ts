/**
 * Typed calls over the one HTTP client: the URL, its path and query parameters, the JSON body
 * and the answer's `data` all come from the generated OpenAPI types (`paths` in api-schema.ts),
 * so a call the backend does not offer, a misspelt parameter or a wrong body fails the type
 * check. Features build their query options and mutations on `api()`.
 */
import type { AxiosRequestConfig } from 'axios';
import { apiClient } from './api-client';
import type { paths } from './api-schema';
import type { Envelope } from './types';

export type Method = 'get' | 'post' | 'put' | 'delete';

/** The API paths that accept `M`. */
export type PathsFor<M extends Method> = {
  [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never;
}[keyof paths];

type Operation<P extends keyof paths, M extends Method> = Extract<paths[P][M], { responses: unknown }>;

type PathOption<O> = O extends { parameters: { path: infer PP } } ? { path: PP } : { path?: never };
type QueryOption<O> = O extends { parameters: { query?: infer Q } }
  ? [Exclude<Q, undefined>] extends [never] ? { query?: never } : { query?: Exclude<Q, undefined> }
  : { query?: never };
type BodyOption<O> =
  O extends { requestBody: { content: { 'application/json': infer B } } } ? { body: B }
    : O extends { requestBody: { content: { 'multipart/form-data': unknown } } } ? { body: FormData }
      : O extends { requestBody?: { content: { 'application/json': infer B } } } ? [B] extends [never] ? { body?: never } : { body?: B }
        : { body?: never };

/** What a call takes: path parameters when the path has some, the query, the body, and axios extras. */
export type CallOptions<P extends keyof paths, M extends Method> =
  PathOption<Operation<P, M>> & QueryOption<Operation<P, M>> & BodyOption<Operation<P, M>> & {
    /** Put the query in the URL itself instead of axios' `params` (same request on the wire). */
    inlineQuery?: boolean;
    config?: AxiosRequestConfig;
  };

type SuccessBody<O> =
  O extends { responses: { 200: { content: { 'application/json': infer R } } } } ? R
    : O extends { responses: { 201: { content: { 'application/json': infer R } } } } ? R
      : O extends { responses: { 202: { content: { 'application/json': infer R } } } } ? R
        : never;

/** The answer's `data` (the envelope's field is optional and nullable in the schema; a
 * successful answer carries it, or `null` for the calls that answer no data). */
export type ApiData<P extends keyof paths, M extends Method> =
  SuccessBody<Operation<P, M>> extends { data?: infer D }
    ? [NonNullable<D>] extends [never] ? null : NonNullable<D>
    : unknown;

export type ApiQuery<P extends keyof paths, M extends Method> = NonNullable<CallOptions<P, M>['query']>;
export type ApiBody<P extends keyof paths, M extends Method> = NonNullable<CallOptions<P, M>['body']>;

type Args<P extends keyof paths, M extends Method> =
  Record<string, never> extends Omit<CallOptions<P, M>, 'inlineQuery' | 'config'>
    ? [options?: CallOptions<P, M>] : [options: CallOptions<P, M>];

type Scalar = string | number | boolean;

/** `/api/users/{user_id}/files` + `{ user_id: 'a b' }` -> `/api/users/a%20b/files`. */
export function apiPath(template: string, params?: Record<string, Scalar>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined) throw new Error(`Missing path parameter "${name}" for ${template}`);
    return encodeURIComponent(String(value));
  });
}

function withQuery(url: string, query: Record<string, Scalar | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) search.append(key, String(value));
  }
  const text = search.toString();
  return text ? `${url}?${text}` : url;
}

interface RawOptions {
  path?: Record<string, Scalar>;
  query?: Record<string, Scalar | null | undefined>;
  body?: unknown;
  inlineQuery?: boolean;
  config?: AxiosRequestConfig;
}

/** One API call; answers the whole `{success, message, data}` envelope. */
export async function api<M extends Method, P extends PathsFor<M>>(
  method: M, path: P, ...args: Args<P, M>
): Promise<Envelope<ApiData<P, M>>> {
  // The types above checked the call; from here on the options are plain data.
  const opts = ((args as unknown[])[0] ?? {}) as RawOptions;
  let url = apiPath(path, opts.path);
  if (opts.inlineQuery && opts.query) url = withQuery(url, opts.query);
  const res = await apiClient.request<Envelope<ApiData<P, M>>>({
    ...opts.config,
    method,
    url,
    params: opts.inlineQuery ? undefined : opts.query,
    data: opts.body,
  });
  return res.data;
}
