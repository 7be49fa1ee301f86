import { z } from 'zod';
import { bodyObject, onlyStrings, requiredString as str, text } from '../../core/validation';

/**
 * Account inputs, shared by REST bodies and GraphQL arguments. Unknown fields are
 * dropped (zod's default), so `role` can never arrive through a body.
 */
/** Trimmed and lower-cased: stored that way, so uniqueness and login are case-insensitive. */
const emailField = str('email')
  .trim()
  .toLowerCase()
  .max(255, onlyStrings('email must be at most 255 characters'))
  .check(z.email('email must be a valid email address'));

/** 8–72 bytes of UTF-8: bcrypt reads 72 bytes, so longer passwords are refused, never truncated. */
export const MAX_PASSWORD_BYTES = 72;
const passwordField = str('password').superRefine((value, ctx) => {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes < 8) ctx.addIssue({ code: 'custom', message: 'password must be at least 8 bytes' });
  else if (bytes > MAX_PASSWORD_BYTES) ctx.addIssue({ code: 'custom', message: 'password must be at most 72 bytes (UTF-8)' });
});

export const registerInput = bodyObject({
  name: text('name', 1, 255),
  email: emailField,
  password: passwordField,
});

/** Login checks only presence and type: a wrong password of any length is just wrong (401). */
export const loginInput = bodyObject({
  email: str('email')
    .trim()
    .toLowerCase()
    .min(1, onlyStrings('email is required'))
    .max(255, onlyStrings('email must be at most 255 characters'))
    // No stored email holds U+0000, and PostgreSQL cannot take it in a query: refuse it as input.
    .regex(/^[^\u0000]*$/, 'email must not contain NUL characters'),
  password: str('password').min(1, onlyStrings('password is required')),
});

export const forgotPasswordInput = bodyObject({ email: emailField });

export const resetPasswordInput = bodyObject({
  token: str('token').min(1, onlyStrings('token is required')),
  password: passwordField,
});

export const updateMeInput = bodyObject({ name: text('name', 1, 255) });

/** The current password is only compared (any length may be wrong), the new one follows the password rule. */
export const changePasswordInput = bodyObject({
  current_password: str('current_password').min(1, onlyStrings('current_password is required')),
  password: passwordField,
});
