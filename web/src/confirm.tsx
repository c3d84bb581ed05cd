/**
 * The one confirmation dialog of the app, for every action that cannot be undone: a modal `alertdialog`
 * (native <dialog> opened with showModal, so the rest of the page is inert), labelled by its title and
 * described by its text. Focus moves into it (the text field when it asks to type a name, else Cancel),
 * Tab stays within it, Escape or Cancel closes it, and focus returns to the control that opened it.
 * With `typeToConfirm`, the confirm button works only once that exact text was typed.
 */
import { useEffect, useId, useRef, useState, type ButtonHTMLAttributes, type KeyboardEvent, type ReactNode } from 'react';
import { ErrorNote } from './ui';

export interface ConfirmOptions {
  title: string;
  /** What will happen, in a sentence or two. */
  children: ReactNode;
  confirmLabel: string;
  /** Text the person must type to confirm (a workspace's name before its ownership moves). */
  typeToConfirm?: string;
}

export function ConfirmDialog({ title, children, confirmLabel, typeToConfirm, onConfirm, onClose, opener }: ConfirmOptions & {
  /** Runs the action; the dialog closes when it resolves, and shows the error when it rejects. */
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
  /** Where the focus returns on close (default: what had it when the dialog opened). */
  opener?: HTMLElement | null;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const textId = useId();
  const fieldId = useId();
  const [typed, setTyped] = useState('');
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const returnTo = opener ?? (document.activeElement instanceof HTMLElement ? document.activeElement : null);
    if (!dialog.open) dialog.showModal();
    (dialog.querySelector<HTMLElement>('input, [data-initial-focus]') ?? dialog).focus();
    return () => {
      if (dialog.open) dialog.close();
      returnTo?.focus();
    };
    // Opened once per mount: the opener is read when the dialog opens.
  }, []);

  const ready = typeToConfirm === undefined || typed === typeToConfirm;
  const confirm = async () => {
    if (!ready || pending) return;
    setPending(true);
    setError(null);
    try {
      await onConfirm();
      onClose();
    } catch (err) {
      setError(err);
      setPending(false);
    }
  };
  // Tab and Shift+Tab cycle through the dialog's own controls.
  const trapFocus = (e: KeyboardEvent<HTMLDialogElement>) => {
    if (e.key !== 'Tab') return;
    const focusable = [...e.currentTarget.querySelectorAll<HTMLElement>('button:not(:disabled), input:not(:disabled)')];
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
      role="alertdialog"
      aria-modal="true"
      aria-labelledby={titleId}
      aria-describedby={textId}
      className="card dialog confirm"
      onKeyDown={trapFocus}
      // Escape: the browser's cancel, closed the way Cancel closes it.
      onCancel={(e) => { e.preventDefault(); onClose(); }}
    >
      <h2 id={titleId}>{title}</h2>
      <div id={textId}>{children}</div>
      <form onSubmit={(e) => { e.preventDefault(); void confirm(); }}>
        {typeToConfirm !== undefined && (
          <div className="field">
            <label htmlFor={fieldId}>Type <strong>{typeToConfirm}</strong> to confirm</label>
            <input id={fieldId} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" spellCheck={false} />
          </div>
        )}
        <ErrorNote error={error} />
        <div className="row">
          <button type="submit" className="danger" disabled={!ready || pending}>{pending ? 'Working…' : confirmLabel}</button>
          <button type="button" className="secondary" data-initial-focus onClick={onClose}>Cancel</button>
        </div>
      </form>
    </dialog>
  );
}

/** A button that asks first: it opens the confirmation dialog, whose confirm button runs `onConfirm`. */
export function ConfirmButton({ confirm, onConfirm, ...button }: ButtonHTMLAttributes<HTMLButtonElement> & {
  confirm: ConfirmOptions;
  onConfirm: () => Promise<unknown>;
}) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" {...button} onClick={() => setOpen(true)} />
      {open && <ConfirmDialog {...confirm} onConfirm={onConfirm} onClose={() => setOpen(false)} />}
    </>
  );
}
