import type { MailMessage } from '../mail/mail.service';

/**
 * Links carry the secret in the fragment (#token=), which browsers never send to a server,
 * so it cannot end up in an access log or a Referer header. The service serves the pages they
 * open (auth.pages.ts); a frontend with pages of its own points APP_URL there instead.
 * Each link and each token stands alone on its line, and the body is sent as written
 * (mail/plain-text.ts), so either can be copied whole from the message or its source.
 */
export function resetPasswordMail(to: string, appUrl: string, secret: string, ttlMinutes: number): MailMessage {
  return {
    to,
    subject: 'Reset your password',
    text: [
      'Someone asked to reset the password of this account. Choose a new one here:',
      '',
      `${appUrl}/reset-password#token=${secret}`,
      '',
      'or use this code:',
      '',
      secret,
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
      'Please confirm your email address by opening this link:',
      '',
      `${appUrl}/verify-email#token=${token}`,
      '',
      'or use this token:',
      '',
      token,
      '',
      'It expires in 24 hours.',
    ].join('\n'),
  };
}
