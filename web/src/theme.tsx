/**
 * Light, dark, or the system's scheme (the default): the choice is kept in this browser; the scheme it
 * resolves to is set as `data-theme` on <html>, which the stylesheet reads, and follows the system's changes.
 */
import { useId, useState } from 'react';

type Theme = 'system' | 'light' | 'dark';
const STORAGE_KEY = 'theme';

function stored(): Theme {
  try {
    const value = localStorage.getItem(STORAGE_KEY);
    return value === 'light' || value === 'dark' ? value : 'system';
  } catch {
    return 'system'; // storage refused (private mode, policy): the system's scheme
  }
}

const systemDark = () => window.matchMedia('(prefers-color-scheme: dark)');
let chosen: Theme = 'system';

/** Applies a choice (the stored one by default); called before the app renders, so the first paint has the right colours. */
export function applyStoredTheme(theme: Theme = stored()): void {
  chosen = theme;
  document.documentElement.dataset.theme = theme === 'system' ? (systemDark().matches ? 'dark' : 'light') : theme;
}

if (typeof window !== 'undefined') systemDark().addEventListener('change', () => { if (chosen === 'system') applyStoredTheme('system'); });

export function ThemeSwitch() {
  const id = useId();
  const [theme, setTheme] = useState<Theme>(stored);
  const choose = (next: Theme) => {
    setTheme(next);
    try {
      if (next === 'system') localStorage.removeItem(STORAGE_KEY); else localStorage.setItem(STORAGE_KEY, next);
    } catch {
      // not remembered; still applied to this page
    }
    applyStoredTheme(next);
  };
  return (
    <div className="theme-switch">
      <label htmlFor={id} className="sr-only">Theme</label>
      <select id={id} value={theme} onChange={(e) => choose(e.target.value as Theme)}>
        <option value="system">System theme</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </div>
  );
}
