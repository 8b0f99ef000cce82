/**
 * The pages the links in Plaza's mail open (unless PLAZA_PASSWORD_RESET_URL / PLAZA_VERIFY_EMAIL_URL
 * point them at an app): `GET /auth/password/reset?token=` (a form for the new password) and
 * `GET /auth/email/verify?token=` (a button). A GET never uses the token: mail scanners and link
 * previews open links, and a reset link one of them opened must still work. The page's script posts
 * to the same path, the API's POST route, and shows its answer. No request leaves this server (the
 * Content-Security-Policy allows only this script and same-origin calls); the token stays out of
 * Referer headers and caches.
 */
import { createHash } from 'node:crypto'
import { isLiveAccountToken, type AccountTokenPurpose } from '../auth/tokens.js'
import { enforceRateLimit } from '../trpc.js'
import type { ErrorCases } from '../errors.js'
import type { HandlerRoute } from './adapter.js'

/** A link whose token no longer works opens a page saying so (text/html), not the envelope. */
export const LINK_PAGE_ERRORS: ErrorCases = { 400: 'The token is missing, unknown, used or expired: a page (text/html) says so' }

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** Posts the form as JSON to this page's own path, with the token from its query, and shows the envelope's message. */
const SCRIPT = `
const form = document.querySelector('form'), out = document.querySelector('#result');
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const fields = Object.fromEntries(new FormData(form));
  if ('again' in fields) {
    if (fields.password !== fields.again) { out.textContent = 'The two passwords differ.'; return; }
    delete fields.again;
  }
  fields.token = new URLSearchParams(location.search).get('token');
  form.querySelector('button').disabled = true;
  try {
    const res = await fetch(location.pathname, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fields) });
    const body = await res.json();
    out.textContent = body.message;
    if (res.ok) form.hidden = true; else form.querySelector('button').disabled = false;
  } catch { out.textContent = 'The server could not be reached; try again.'; form.querySelector('button').disabled = false; }
});
`
const SCRIPT_HASH = createHash('sha256').update(SCRIPT).digest('base64')

const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': `default-src 'none'; script-src 'sha256-${SCRIPT_HASH}'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`,
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
}

function page(title: string, body: string, withScript: boolean): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title>
<style>body{font-family:-apple-system,Segoe UI,Roboto,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#1a1a1a}
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
button{margin-top:1rem;padding:.6rem 1rem;font-size:1rem}#result{margin-top:1rem;font-weight:600}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${body}
<p id="result" role="status"></p>
${withScript ? `<script>${SCRIPT}</script>` : ''}
</body></html>
`
}

const FORMS: Record<AccountTokenPurpose, { title: string; form: string; invalid: string }> = {
  password_reset: {
    title: 'Choose a new password',
    form: `<form><label for="password">New password (at least 8 characters)</label>
<input id="password" name="password" type="password" minlength="8" maxlength="1024" autocomplete="new-password" required>
<label for="again">The same again</label>
<input id="again" name="again" type="password" minlength="8" maxlength="1024" autocomplete="new-password" required>
<button type="submit">Set the password</button></form>
<p>Every session of the account is logged out when it changes.</p>`,
    invalid: 'This reset link is invalid, used or expired: ask the app for a new one.',
  },
  verify_email: {
    title: 'Confirm your email address',
    form: '<form><button type="submit">Confirm my address</button></form>',
    invalid: 'This verification link is invalid, used or expired: ask the app for a new one.',
  },
}

/** The handler of `GET` on a mailed link's path: the page, or (400) a page saying the link no longer works. */
export function accountPage(purpose: AccountTokenPurpose): HandlerRoute['handle'] {
  return async ({ res, ctx, query }) => {
    // The page checks the token with a read, so it counts like any call from the address.
    await enforceRateLimit(ctx, 'default', `ip:${ctx.clientAddress}`)
    const token = (query.token ?? '').trim()
    const { title, form, invalid } = FORMS[purpose]
    const live = token.length > 0 && token.length <= 200 && (await isLiveAccountToken(ctx.services.reads, token, purpose, ctx.services.clock()))
    const html = live ? page(title, form, true) : page(title, `<p>${escapeHtml(invalid)}</p>`, false)
    res.writeHead(live ? 200 : 400, { ...HEADERS, 'content-length': Buffer.byteLength(html) })
    res.end(html)
  }
}
