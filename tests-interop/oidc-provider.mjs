#!/usr/bin/env node
// A real authorization server for Junction's authorization tests: npm `oidc-provider`
// (OpenID Certified), on 127.0.0.1, configured as an MCP deployment's would be.
//
//   node oidc-provider.mjs [PORT]     (0 or nothing: a free port)
//
// Prints `listening on http://127.0.0.1:PORT` (the issuer) once ready, then serves until
// killed. What it offers:
//   - discovery at /.well-known/openid-configuration (with S256 PKCE and `iss` in responses),
//   - Dynamic Client Registration (native clients with loopback redirect URIs),
//   - resource indicators (RFC 8707): access tokens for the requested MCP server, with the
//     scopes mcp:read and mcp:write, as ES256 JWTs (or opaque tokens with
//     OIDC_TOKEN_FORMAT=opaque), checked by the server against /jwks or /token/introspection,
//   - a confidential client `introspector` / `introspector-secret` for introspection,
//   - no person needed: the login and consent interactions complete at once for the
//     account `alice` (the test's browser follows the redirects, with cookies).
//
// oidc-provider is loaded from $JUNCTION_NODE_MODULES (scripts/install-tools).

import crypto from 'node:crypto';
import http from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const NODE_MODULES = process.env.JUNCTION_NODE_MODULES || resolve(HERE, '..', '.tools', 'npm', 'node_modules');
const { default: Provider } = await import(pathToFileURL(join(NODE_MODULES, 'oidc-provider', 'lib', 'index.js')).href);

const ACCOUNT = 'alice';
const format = process.env.OIDC_TOKEN_FORMAT === 'opaque' ? 'opaque' : 'jwt';

const server = http.createServer();
await new Promise((done) => server.listen(Number(process.argv[2] || 0), '127.0.0.1', done));
const issuer = `http://127.0.0.1:${server.address().port}`;
const key = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });

const provider = new Provider(issuer, {
  jwks: { keys: [{ ...key, kid: 'k1', alg: 'ES256', use: 'sig' }] },
  clients: [{
    client_id: 'introspector',
    client_secret: 'introspector-secret',
    redirect_uris: [],
    response_types: [],
    grant_types: [],
  }],
  // The only signing key is ES256: registered clients default to it for ID tokens too.
  clientDefaults: { id_token_signed_response_alg: 'ES256' },
  cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
  scopes: ['openid', 'offline_access', 'mcp:read', 'mcp:write'],
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resourceIndicator) => ({
        scope: 'mcp:read mcp:write',
        audience: resourceIndicator,
        accessTokenTTL: 300,
        accessTokenFormat: format,
        ...(format === 'jwt' && { jwt: { sign: { alg: 'ES256' } } }),
      }),
    },
  },
});

// Completes the pending interaction: the login as ACCOUNT, then consent to what was asked.
async function interact(req, res) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: ACCOUNT } }, { mergeWithLastSubmission: false });
    return;
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
  const missing = details.prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.url.startsWith('/interaction/')) {
    interact(req, res).catch((e) => {
      res.statusCode = 500;
      res.end(`interaction failed: ${e.message}`);
    });
    return;
  }
  callback(req, res);
});
process.stdout.write(`listening on ${issuer}\n`);
