import { AUTH_401, DB_503, operation } from './operation';
import { tokenExample, userExample } from './examples';
import { ref, type Paths } from './types';
import { IF_MATCH_NOTE } from './paths.posts';

const RATE = { 429: ['Too many requests'] };
const msg = (text: string) => ({ schema: ref('Message'), example: { message: text } });

/** /auth/*: every one shares the per-IP budget AUTH_RATE_LIMIT_PER_MINUTE (429 with Retry-After). */
export const authPaths: Paths = {
  '/auth/register': {
    post: operation({
      id: 'register',
      tag: 'auth',
      summary: 'Register',
      description: 'Creates a user with role `user` and emails a verification link. `role` and other unknown fields are ignored.',
      body: ref('RegisterInput'),
      success: { status: 201, description: 'The new user and an access token', schema: ref('AuthResult'), example: { user: userExample, token: tokenExample } },
      errors: { 422: ['Validation failed', 'Email already taken'], ...RATE, ...DB_503 },
      invalid: { body: { name: ' ', email: 'ada@example', password: 'short' } },
    }),
  },
  '/auth/login': {
    post: operation({
      id: 'login',
      tag: 'auth',
      summary: 'Log in',
      description:
        'Email matches case-insensitively. A wrong email or password is 401 `Invalid credentials`; a missing, empty or non-string `email` or `password` is 422 (`email is required`, `password must be a string`, ...). After 10 failures for one email from one IP within 15 minutes, that pair gets 429 until the window passes.',
      body: ref('LoginInput'),
      success: { status: 200, description: 'The user and an access token (7 days)', schema: ref('AuthResult'), example: { user: userExample, token: tokenExample } },
      errors: { 401: ['Invalid credentials'], ...RATE, ...DB_503 },
      invalid: { body: { email: '' } },
    }),
  },
  '/auth/forgot-password': {
    post: operation({
      id: 'forgotPassword',
      tag: 'auth',
      summary: 'Ask for a password reset email',
      description: 'Answers the same whether or not the email exists. The email carries a 64-hex secret valid RESET_TOKEN_TTL_MINUTES; at most 5 emails per address per hour.',
      body: ref('ForgotPasswordInput'),
      success: { status: 200, description: 'Always the same message', ...msg('If that email exists, a link was sent.') },
      errors: { ...RATE, ...DB_503 },
      invalid: { body: { email: 'ada at example.com' } },
    }),
  },
  '/auth/reset-password': {
    post: operation({
      id: 'resetPassword',
      tag: 'auth',
      summary: 'Reset a password with the emailed secret',
      description: 'Single use. Revokes every access token issued before it.',
      body: ref('ResetPasswordInput'),
      success: { status: 200, description: 'Password changed', ...msg('Password reset successfully') },
      errors: { 400: ['Invalid or expired token', 'User not found'], ...RATE, ...DB_503 },
      invalid: { body: { token: '', password: 'short' } },
    }),
  },
  '/auth/verify-email/{token}': {
    post: operation({
      id: 'verifyEmail',
      tag: 'auth',
      summary: 'Verify an email address',
      description: 'Already verified → 200, the first timestamp is kept. An access token is not accepted here.',
      params: ['VerifyToken'],
      success: { status: 200, description: 'Verified', ...msg('Email verified') },
      errors: { 400: ['Invalid or expired token'], 404: ['User not found'], ...RATE, ...DB_503 },
    }),
  },
  '/auth/resend-verification': {
    post: operation({
      id: 'resendVerification',
      tag: 'auth',
      summary: 'Send the verification email again',
      description: 'Sends nothing when already verified; at most 5 an hour per user.',
      auth: true,
      success: { status: 200, description: 'Sent (or nothing to send)', ...msg('Verification email sent') },
      errors: { 401: AUTH_401, ...RATE, ...DB_503 },
    }),
  },
  '/auth/me': {
    get: operation({
      id: 'me',
      tag: 'auth',
      summary: 'The authenticated user',
      auth: true,
      success: { status: 200, description: 'The bare user object', schema: ref('User'), example: userExample },
      errors: { 401: AUTH_401, ...RATE, ...DB_503 },
      tagged: true,
    }),
    patch: operation({
      id: 'updateMe',
      tag: 'auth',
      summary: 'Rename yourself',
      description: `Only \`name\` is taken; other fields are ignored. ${IF_MATCH_NOTE}`,
      auth: true,
      body: ref('UpdateMeInput'),
      success: { status: 200, description: 'The user', schema: ref('User'), example: { ...userExample, name: 'Ada Lovelace', updated_at: '2026-11-22T10:52:00.000Z' } },
      errors: { 401: AUTH_401, ...RATE, ...DB_503 },
      invalid: { body: { name: ' ' } },
      tagged: true,
      conditional: true,
    }),
  },
  '/auth/change-password': {
    post: operation({
      id: 'changePassword',
      tag: 'auth',
      summary: 'Change your password',
      description: `Every access token issued before (this one included) is revoked, as after a reset; the answer carries a fresh one. A wrong \`current_password\` is 422 \`Current password is incorrect\` and counts as a failed login for your email from this IP: after 10 in 15 minutes, 429 until the window passes (as \`POST /auth/login\`). ${IF_MATCH_NOTE} (The tag is the user's, as \`GET /auth/me\` sends it.)`,
      auth: true,
      body: ref('ChangePasswordInput'),
      success: { status: 200, description: 'Changed, with a fresh access token', schema: ref('PasswordChanged'), example: { message: 'Password changed', token: tokenExample } },
      errors: { 401: AUTH_401, 422: ['Validation failed', 'Current password is incorrect'], ...RATE, ...DB_503 },
      invalid: { body: { current_password: '', password: 'short' } },
      conditional: true,
    }),
  },
  '/reset-password': {
    get: operation({
      id: 'resetPasswordPage',
      tag: 'auth',
      summary: 'The page the reset link of the mail opens',
      description: 'A small HTML page (no outside assets) that reads the secret from the fragment (`#token=...`, never sent to a server), asks for the new password and calls `POST /auth/reset-password`, showing its message. A frontend with its own page points `APP_URL` there instead.',
      success: { status: 200, description: 'HTML page', schema: { type: 'string' }, contentType: 'text/html' },
    }),
  },
  '/verify-email': {
    get: operation({
      id: 'verifyEmailPage',
      tag: 'auth',
      summary: 'The page the verification link of the mail opens',
      description: 'A small HTML page (no outside assets) that reads the token from the fragment (`#token=...`) and calls `POST /auth/verify-email/{token}`, showing its message.',
      success: { status: 200, description: 'HTML page', schema: { type: 'string' }, contentType: 'text/html' },
    }),
  },
};
