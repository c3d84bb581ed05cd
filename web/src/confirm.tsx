/**
 * The one confirmation dialog of the app, for every action that cannot be undone: a modal `alertdialog`
 * (see modal.tsx) labelled by its title and described by its text. Focus starts on the text field when it asks
 * to type a name, else on Cancel.
 * With `typeToConfirm`, the confirm button works only once that exact text was typed.
 */
import { useId, useState, type ButtonHTMLAttributes, type ReactNode } from 'react';
import { Modal } from './modal';
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
  const titleId = useId();
  const textId = useId();
  const fieldId = useId();
  const [typed, setTyped] = useState('');
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);

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
  return (
    <Modal role="alertdialog" labelledBy={titleId} describedBy={textId} className="card dialog confirm" onClose={onClose} opener={opener}>
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
    </Modal>
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
