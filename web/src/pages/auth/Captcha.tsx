/**
 * The self-hosted ALTCHA proof-of-work widget; reports the payload once the browser solved the challenge.
 * The build without bundled styles and workers (`altcha/external`): its stylesheet is part of the app's CSS
 * and its worker a file of the app, so the Content-Security-Policy needs no inline style nor blob: worker.
 */
import { useEffect, useRef } from 'react';
import 'altcha/external';
import 'altcha/altcha.css';
import Pbkdf2Worker from 'altcha/workers/pbkdf2?worker';
import type {} from 'altcha/types/react';

// The server's challenges are PBKDF2/SHA-256 (domain/captcha.ts): the only algorithm the widget is given.
globalThis.$altcha.algorithms.set('PBKDF2/SHA-256', () => new Pbkdf2Worker());

export function Captcha({ onSolved }: { onSolved: (payload: string | null) => void }) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const onChange = (ev: Event) => {
      const detail = (ev as CustomEvent<{ state: string; payload?: string }>).detail;
      onSolved(detail.state === 'verified' ? detail.payload ?? null : null);
    };
    el.addEventListener('statechange', onChange);
    return () => el.removeEventListener('statechange', onChange);
  }, [onSolved]);
  return <altcha-widget ref={ref} challenge="/api/auth/captcha" name="altcha" />;
}
