/**
 * The self-hosted proof-of-work CAPTCHA (ALTCHA) guarding sign-up and the contact form. Challenges are
 * signed with a server secret and expire after 10 minutes; a solved challenge is accepted once: its
 * signature is recorded until it expires, so a replayed payload is refused.
 */
import type { Knex } from 'knex';
import { createChallenge, randomInt, verifySolution, type Challenge, type Solution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import { InvalidRequestError } from '../core/errors';

export const CAPTCHA_TTL_MS = 10 * 60_000;

export interface CaptchaSettings {
  /** HMAC secret signing challenges (every API process of a deployment needs the same one). */
  secret: string;
  /** PBKDF2 iterations per attempt; the client tries on average half of `maxCounter` attempts. */
  cost: number;
  maxCounter: number;
}

export async function newCaptchaChallenge(settings: CaptchaSettings): Promise<Challenge> {
  return createChallenge({
    algorithm: 'PBKDF2/SHA-256',
    cost: settings.cost,
    counter: randomInt(Math.floor(settings.maxCounter / 2), settings.maxCounter),
    deriveKey,
    hmacSignatureSecret: settings.secret,
    hmacKeySignatureSecret: `${settings.secret}:key`,
    expiresAt: new Date(Date.now() + CAPTCHA_TTL_MS),
  });
}

function captchaError(message: string): InvalidRequestError {
  return new InvalidRequestError(message, { param: 'altcha', code: 'captcha_failed' });
}

/** Accepts the widget's payload (base64 JSON `{challenge, solution}`) once, or throws 400 `captcha_failed`. */
export async function verifyCaptcha(db: Knex, settings: CaptchaSettings, payload: unknown): Promise<void> {
  if (typeof payload !== 'string' || payload.length === 0 || payload.length > 8192) throw captchaError('Solve the CAPTCHA first.');
  let parsed: { challenge?: Challenge; solution?: Solution };
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64').toString('utf8'));
  } catch {
    throw captchaError('The CAPTCHA answer is malformed.');
  }
  if (!parsed?.challenge?.parameters || typeof parsed.challenge.signature !== 'string' || !parsed.solution) throw captchaError('The CAPTCHA answer is malformed.');
  const result = await verifySolution({
    challenge: parsed.challenge, solution: parsed.solution, deriveKey,
    hmacSignatureSecret: settings.secret, hmacKeySignatureSecret: `${settings.secret}:key`,
  }).catch(() => null);
  if (!result?.verified) throw captchaError(result?.expired ? 'The CAPTCHA expired; solve a new one.' : 'The CAPTCHA answer is wrong.');
  await db('captcha_uses').where('expires_at', '<', db.fn.now()).delete();
  const expiresAt = new Date(Number(parsed.challenge.parameters.expiresAt) * 1000 || Date.now() + CAPTCHA_TTL_MS);
  const inserted = await db('captcha_uses').insert({ signature: parsed.challenge.signature, expires_at: expiresAt }).onConflict('signature').ignore().returning('signature');
  if (inserted.length === 0) throw captchaError('This CAPTCHA was already used; solve a new one.');
}
