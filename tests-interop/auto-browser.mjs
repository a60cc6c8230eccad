#!/usr/bin/env node
// A "browser" for the authorization tests, used as $BROWSER: `node auto-browser.mjs URL`.
// It opens URL and follows every redirect with a cookie jar, as a person's browser would
// when the authorization server needs no input (tests-interop/oidc-provider.mjs completes
// its login and consent at once), until a page answers without redirecting: normally the
// client's loopback redirect listener. Exit 0 when the last page answered 200.
// With AUTO_BROWSER_DELAY_MS it waits that long first, as a slow person would.

// AUTO_BROWSER_DELAY_MS: a person who takes that long before the page loads.
const delay = Number(process.env.AUTO_BROWSER_DELAY_MS || 0);
if (delay > 0) await new Promise((done) => setTimeout(done, delay));
const jar = new Map();
let url = process.argv[2];
if (!url) {
  process.stderr.write('usage: auto-browser.mjs URL\n');
  process.exit(2);
}
for (let hop = 0; hop < 20; hop += 1) {
  const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const at = pair.indexOf('=');
    if (at > 0) jar.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
  }
  const location = res.headers.get('location');
  if (res.status >= 300 && res.status < 400 && location) {
    url = new URL(location, url).href;
    continue;
  }
  const body = await res.text();
  if (res.status !== 200) {
    process.stderr.write(`auto-browser: ${url} answered ${res.status}: ${body.slice(0, 500)}\n`);
    process.exit(1);
  }
  process.exit(0);
}
process.stderr.write('auto-browser: too many redirects\n');
process.exit(1);
