import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../../core/errors';

/**
 * The two pages the mails link to: `GET /reset-password` and `GET /verify-email`. Each reads the
 * token from the address's fragment (`#token=...`, which the browser never sends to a server),
 * calls the API (`POST /auth/reset-password` with a new password from a form,
 * `POST /auth/verify-email/:token` at once) and shows the API's message. Everything comes from
 * this origin: the script and the style sheet are files (`/pages/assets/...`), so the pages run
 * under the document policy of http/security.ts (scripts from this origin only, no inline
 * script). A deployment whose frontend has pages of its own points APP_URL there instead.
 */
export const PAGE_ASSET_ROUTE = '/pages/assets/:file';

const CSS = `body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f6f6f4; color: #222; }
main { max-width: 28rem; margin: 3rem auto; padding: 1.5rem 2rem; background: #fff; border: 1px solid #ddd; border-radius: 8px; }
h1 { font-size: 1.4rem; margin-top: 0; }
label { display: block; margin-top: 1rem; font-weight: 600; }
input { box-sizing: border-box; width: 100%; padding: .5rem; font: inherit; border: 1px solid #bbb; border-radius: 4px; }
.hint { margin: .25rem 0 0; font-size: .85rem; color: #666; }
button { margin-top: 1.25rem; padding: .5rem 1rem; font: inherit; cursor: pointer; }
#status:empty, #errors:empty { display: none; }
#status { margin: 1.25rem 0 0; padding: .75rem; border-radius: 4px; background: #eef; }
#status.ok { background: #e6f4e6; }
#status.error { background: #fbe9e9; }
#errors { margin: .5rem 0 0; color: #8a1f1f; }
`;

/**
 * One script for both pages (the body's `data-page` says which). It writes with textContent
 * only: nothing from the fragment or an answer is ever parsed as HTML.
 */
const JS = `(function () {
  'use strict';
  var page = document.body.getAttribute('data-page');
  var form = document.getElementById('form');
  var tokenInput = document.getElementById('token');
  var status = document.getElementById('status');
  var errors = document.getElementById('errors');

  // The token leaves the address bar (history, bookmarks, a shared screen) once it is read.
  var token = (new URLSearchParams(location.hash.slice(1)).get('token') || '').trim();
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  tokenInput.value = token;

  function show(kind, message, fieldErrors) {
    status.className = kind;
    status.textContent = message;
    errors.textContent = '';
    (fieldErrors || []).forEach(function (e) {
      var li = document.createElement('li');
      li.textContent = e && e.message ? String(e.message) : String(e);
      errors.appendChild(li);
    });
  }

  // The API's own message, whatever the status; field errors (422) listed below it.
  function call(path, body) {
    var init = { method: 'POST', headers: { accept: 'application/json' }, credentials: 'omit', cache: 'no-store' };
    if (body) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return fetch(path, init).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (data) {
        var message = data && typeof data.message === 'string' ? data.message : 'Unexpected answer (HTTP ' + res.status + ')';
        return { ok: res.ok, message: message, errors: data && Array.isArray(data.errors) ? data.errors : [] };
      });
    }, function () {
      return { ok: false, message: 'The service could not be reached. Try again in a moment.', errors: [] };
    });
  }

  function busy(on) {
    Array.prototype.forEach.call(form.elements, function (el) { el.disabled = on; });
  }

  function verify(value) {
    show('', 'Verifying your email…');
    busy(true);
    return call('/auth/verify-email/' + encodeURIComponent(value)).then(function (r) {
      busy(false);
      show(r.ok ? 'ok' : 'error', r.message, r.errors);
      form.hidden = r.ok;
    });
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var value = tokenInput.value.trim();
    if (page === 'verify') return void verify(value);
    show('', 'Saving your new password…');
    busy(true);
    call('/auth/reset-password', { token: value, password: document.getElementById('password').value }).then(function (r) {
      busy(false);
      show(r.ok ? 'ok' : 'error', r.ok ? r.message + '. You can now log in with your new password.' : r.message, r.errors);
      if (r.ok) {
        form.reset();
        form.hidden = true;
      }
    });
  });

  if (page === 'verify') {
    if (token) verify(token);
    else {
      form.hidden = false;
      show('error', 'This link carries no token. Paste the token from the email below.');
    }
  } else if (!token) {
    show('', 'Paste the code from the email, then choose a new password.');
  } else {
    document.getElementById('password').focus();
  }
})();
`;

function html(title: string, pageName: 'reset' | 'verify', body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <title>${title} · Blog API</title>
  <link rel="stylesheet" href="/pages/assets/account.css">
  <link rel="icon" href="data:,">
</head>
<body data-page="${pageName}">
<main>
  <h1>${title}</h1>
${body}
  <p id="status" role="status" aria-live="polite"></p>
  <ul id="errors"></ul>
  <noscript><p>This page needs JavaScript to send your request to the service.</p></noscript>
</main>
<script src="/pages/assets/account.js"></script>
</body>
</html>
`;
}

const RESET_HTML = html(
  'Choose a new password',
  'reset',
  `  <form id="form">
    <label for="token">Reset code</label>
    <input id="token" name="token" autocomplete="off" spellcheck="false" required>
    <p class="hint">Filled in from the link in the email; or paste the code the email gives.</p>
    <label for="password">New password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required>
    <p class="hint">8 to 72 bytes (8 to 72 characters of plain ASCII).</p>
    <button type="submit">Set the new password</button>
  </form>`,
);

const VERIFY_HTML = html(
  'Verify your email',
  'verify',
  `  <form id="form" hidden>
    <label for="token">Verification token</label>
    <input id="token" name="token" autocomplete="off" spellcheck="false" required>
    <button type="submit">Verify</button>
  </form>`,
);

const ASSETS: Record<string, { type: string; body: string }> = {
  'account.js': { type: 'text/javascript', body: JS },
  'account.css': { type: 'text/css', body: CSS },
};

/** The pages' handlers, for GET (and HEAD) only; app.ts mounts them behind the document headers. */
export function accountPages() {
  const page = (body: string) => (_req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').send(body);
  };
  return {
    resetPassword: page(RESET_HTML),
    verifyEmail: page(VERIFY_HTML),
    asset(req: Request, res: Response, next: NextFunction) {
      const name = String(req.params.file);
      if (!Object.hasOwn(ASSETS, name)) return next(AppError.notFound('Not found'));
      res.setHeader('Cache-Control', 'no-cache');
      res.type(ASSETS[name].type).send(ASSETS[name].body);
    },
  };
}
