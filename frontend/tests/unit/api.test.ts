import type { InternalAxiosRequestConfig } from 'axios';
import { afterEach, describe, expect, it } from 'vitest';
import { api, apiPath } from '../../src/lib/api';
import { apiClient } from '../../src/lib/api-client';

const originalAdapter = apiClient.defaults.adapter;
let seen: InternalAxiosRequestConfig[] = [];

function answer(data: unknown) {
  seen = [];
  apiClient.defaults.adapter = async (config: InternalAxiosRequestConfig) => {
    seen.push(config);
    return { data: { success: true, message: 'ok', data }, status: 200, statusText: 'OK', headers: {}, config };
  };
}

afterEach(() => {
  apiClient.defaults.adapter = originalAdapter;
});

describe('apiPath', () => {
  it('fills and encodes the path parameters', () => {
    expect(apiPath('/api/users/{user_id}/files', { user_id: 'a b/c' })).toBe('/api/users/a%20b%2Fc/files');
    expect(apiPath('/api/upload/info')).toBe('/api/upload/info');
  });
  it('refuses a path with a parameter left out', () => {
    expect(() => apiPath('/api/process/status/{file_id}', {})).toThrow('Missing path parameter "file_id"');
  });
});

describe('api', () => {
  it('sends the method, the filled path, the query as params and the body; answers the envelope', async () => {
    answer({ files: [] });
    const body = await api('get', '/api/users/{user_id}/files', { path: { user_id: 'u1' }, query: { page: 2, status: 'FAILED' } });
    expect(body).toEqual({ success: true, message: 'ok', data: { files: [] } });
    expect(seen[0]).toMatchObject({ method: 'get', url: '/api/users/u1/files', params: { page: 2, status: 'FAILED' } });

    answer(null);
    await api('post', '/api/auth/forgot-password', { body: { email: 'ada@example.org' } });
    expect(seen[0].method).toBe('post');
    expect(seen[0].url).toBe('/api/auth/forgot-password');
    expect(JSON.parse(seen[0].data as string)).toEqual({ email: 'ada@example.org' });
  });
  it('puts the query in the URL when asked', async () => {
    answer([]);
    await api('get', '/api/usage/history', { query: { months: 6 }, inlineQuery: true });
    expect(seen[0].url).toBe('/api/usage/history?months=6');
    expect(seen[0].params).toBeUndefined();
  });
});
