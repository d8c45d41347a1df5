// Helpers the e2e scenarios share: raw API calls, and a fresh ENTERPRISE account (registered,
// verified through the outbox link, promoted by the admin).

/** One API call; `json` or `form` is the body. Answers { status, body (parsed JSON or null) }. */
export async function api(base, method, url, { token, json, form } = {}) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  let body;
  if (json) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(json);
  } else if (form) {
    body = form;
  }
  const res = await fetch(`${base}${url}`, { method, headers, body });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** A new verified account promoted to ENTERPRISE: { email, password, id, token (its own access
 * token from registration), adminToken }. */
export async function enterpriseUser({ base, admin, readOutboxLink, dataDir, assert }, { prefix, password, firstName }) {
  const email = `${prefix}${Date.now()}@e2e-sanitas.org`;
  const reg = await api(base, 'POST', '/api/auth/register', { json: { email, password, firstName } });
  assert(reg.status === 201 || reg.status === 200, `register answered ${reg.status}: ${JSON.stringify(reg.body)}`);
  let link = null;
  for (let i = 0; i < 20 && !link; i++) {
    link = readOutboxLink(dataDir, email, '/verify-email');
    if (!link) await new Promise((r) => setTimeout(r, 250));
  }
  assert(link, 'no verification link in the outbox');
  const verified = await api(base, 'POST', '/api/auth/verify-email', { json: { token: new URL(link).searchParams.get('token') } });
  assert(verified.status === 200, `verify answered ${verified.status}`);
  const signIn = await api(base, 'POST', '/api/auth/login', { json: admin });
  assert(signIn.status === 200, `admin sign-in answered ${signIn.status}`);
  const adminToken = signIn.body.data.tokens.accessToken;
  const promoted = await api(base, 'PUT', `/api/users/${reg.body.data.user.id}`, { token: adminToken, json: { role: 'ENTERPRISE' } });
  assert(promoted.status === 200, `role change answered ${promoted.status}: ${JSON.stringify(promoted.body)}`);
  return { email, password, id: reg.body.data.user.id, token: reg.body.data.tokens.accessToken, adminToken };
}
