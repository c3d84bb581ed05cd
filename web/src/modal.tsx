/**
 * The app's one modal: a native <dialog> opened with showModal (the rest of the page is inert). Focus moves into
 * it (its first field or the element marked `data-initial-focus`, whichever comes first, else the dialog), Tab stays within it, Escape
 * closes it as its own Cancel does, and focus returns to the control that opened it.
 */
import { useEffect, useRef, type KeyboardEvent, type ReactNode } from 'react';

const FOCUSABLE = 'button:not(:disabled), input:not(:disabled), select:not(:disabled), textarea:not(:disabled), a[href]';

export function Modal({ role = 'dialog', label, labelledBy, describedBy, className, onClose, opener, children }: {
  role?: 'dialog' | 'alertdialog';
  /** Its accessible name: a text of its own, or the id of its title. */
  label?: string;
  labelledBy?: string;
  describedBy?: string;
  className?: string;
  onClose: () => void;
  /** Where the focus returns on close (default: what had it when the dialog opened). */
  opener?: HTMLElement | null;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const returnTo = opener ?? (document.activeElement instanceof HTMLElement ? document.activeElement : null);
    if (!dialog.open) dialog.showModal();
    (dialog.querySelector<HTMLElement>('input, select, textarea, [data-initial-focus]') ?? dialog).focus();
    return () => {
      if (dialog.open) dialog.close();
      returnTo?.focus();
    };
    // Opened once per mount: the opener is read when the dialog opens.
  }, []);

  // Tab and Shift+Tab cycle through the dialog's own controls.
  const trapFocus = (e: KeyboardEvent<HTMLDialogElement>) => {
    if (e.key !== 'Tab') return;
    const focusable = [...e.currentTarget.querySelectorAll<HTMLElement>(FOCUSABLE)];
    if (focusable.length === 0) return;
    const [first, last] = [focusable[0], focusable[focusable.length - 1]];
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  };

  return (
    <dialog
      ref={ref}
      role={role}
      aria-modal="true"
      aria-label={label}
      aria-labelledby={label ? undefined : labelledBy}
      aria-describedby={describedBy}
      className={className}
      onKeyDown={trapFocus}
      // Escape: the browser's cancel, closed the way Cancel closes it.
      onCancel={(e) => { e.preventDefault(); onClose(); }}
    >
      {children}
    </dialog>
  );
}
