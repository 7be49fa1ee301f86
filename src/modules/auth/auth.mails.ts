import type { MailMessage } from '../mail/mail.service';

/**
 * Links carry the secret in the fragment (#token=), which browsers never send to a server,
 * so it cannot end up in an access log or a Referer header (CONTRACT 11).
 */
export function resetPasswordMail(to: string, appUrl: string, secret: string, ttlMinutes: number): MailMessage {
  return {
    to,
    subject: 'Reset your password',
    text: [
      'Someone asked to reset the password of this account.',
      '',
      `Open ${appUrl}/reset-password#token=${secret}`,
      '',
      `or use this code: ${secret}`,
      '',
      `It works once and expires in ${ttlMinutes} minutes. If you did not ask, ignore this email.`,
    ].join('\n'),
  };
}

export function verifyEmailMail(to: string, appUrl: string, token: string): MailMessage {
  return {
    to,
    subject: 'Verify your email',
    text: [
      'Please confirm your email address.',
      '',
      `Open ${appUrl}/verify-email#token=${token}`,
      '',
      `or use this token: ${token}`,
      '',
      'It expires in 24 hours.',
    ].join('\n'),
  };
}
