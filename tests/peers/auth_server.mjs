// A real OAuth 2.1 authorization server for the OAuth tests: oidc-provider 9.13.3 (an OpenID
// Certified provider, pinned in package.json), configured the way an MCP deployment would be:
// JWT access tokens for the resource a client names (RFC 8707), PKCE, dynamic client
// registration (RFC 7591), Client ID Metadata Documents, refresh tokens, client credentials for
// machines, introspection (RFC 7662), and its development login and consent pages (any login
// name is an account of that name; the password is not checked).
//
//   node auth_server.mjs --port N [--keys key1|rsa,key1] [--access-ttl SECONDS]
//
// --keys names the fixture keys (tests/fixtures/oauth/NAME.pem) it publishes, the first signing
// (rotation: restart it with `rsa,key1`). Pre-registered clients: `machine` and `machine-2`
// (client credentials, secret `<id>-secret`), `mcp-server` (introspection, secret
// `mcp-server-secret`). Prints {"event":"ready","issuer":URL} once it listens.
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { emit, fail, importDep, log } from './peerlib.mjs';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    keys: { type: 'string', default: 'key1' },
    'access-ttl': { type: 'string', default: '300' },
  },
});
if (!values.port) fail('--port N is required', 2);
const issuer = `http://127.0.0.1:${values.port}`;
const accessTtl = Number(values['access-ttl']);

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'oauth');
const KIDS = { key1: ['key1', 'ES256'], rsa: ['rsa-2', 'RS256'] };
const keys = values.keys.split(',').map((name) => {
  if (!KIDS[name]) fail(`unknown key ${name} (key1, rsa)`, 2);
  const [kid, alg] = KIDS[name];
  const jwk = createPrivateKey(readFileSync(join(fixtures, `${name}.pem`))).export({ format: 'jwk' });
  return { ...jwk, kid, alg, use: 'sig' };
});
const signing = keys[0].alg;
const SCOPES = 'mcp tasks:read tasks:write';

const machine = (id) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  token_endpoint_auth_method: 'client_secret_basic',
  scope: SCOPES,
});

const { default: Provider } = await importDep('oidc-provider');
const provider = new Provider(issuer, {
  clients: [machine('machine'), machine('machine-2'), { ...machine('mcp-server'), grant_types: [] }],
  jwks: { keys },
  scopes: ['openid', 'offline_access', ...SCOPES.split(' ')],
  cookies: { keys: ['taskwire-tests-only'] },
  pkce: { required: () => true },
  clientDefaults: {
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    id_token_signed_response_alg: signing,
  },
  // Any client's browser pages may call the token and registration endpoints (the Inspector).
  clientBasedCORS: () => true,
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: { AccessToken: accessTtl, ClientCredentials: accessTtl, RefreshToken: 3600 },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => ({
        scope: SCOPES,
        audience: resource,
        accessTokenTTL: accessTtl,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: signing } },
      }),
    },
  },
});
provider.on('server_error', (_ctx, err) => log(`server error: ${err.stack}`));
provider.on('grant.error', (_ctx, err) => log(`grant error: ${err.message} ${err.error_description ?? ''}`));
provider.on('authorization.error', (_ctx, err) => log(`authorization error: ${err.message} ${err.error_description ?? ''}`));
provider.on('registration_create.error', (_ctx, err) => log(`registration error: ${err.message} ${err.error_description ?? ''}`));

createServer(provider.callback()).listen(Number(values.port), '127.0.0.1', () => {
  emit('ready', { issuer, keys: keys.map((k) => k.kid) });
});
