/** The self-hosted ALTCHA proof-of-work widget; reports the payload once the browser solved the challenge. */
import { useEffect, useRef } from 'react';
import 'altcha';
import type {} from 'altcha/types/react';

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
