/** Deleting a chat (its owner): its messages, files and videos go, and their storage is given back. */
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { playground } from '../../playground-api';
import { navigate } from '../../router';
import { ErrorNote } from '../../ui';

export function DeleteChat({ chatId, title }: { chatId: string; title: string }) {
  const client = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const remove = useMutation({
    mutationFn: () => playground.deleteChat(chatId),
    onSuccess: () => { void client.invalidateQueries({ queryKey: ['playground'] }); void client.invalidateQueries({ queryKey: ['storage'] }); navigate('/playground'); },
  });
  if (!confirming) return <button type="button" className="danger" onClick={() => setConfirming(true)}>Delete chat</button>;
  return (
    <div role="alertdialog" aria-label="Delete chat" className="card dialog">
      <p>Delete “{title}” with its messages and files?</p>
      <div className="row">
        <button type="button" className="danger" onClick={() => remove.mutate()} disabled={remove.isPending}>Delete</button>
        <button type="button" className="secondary" onClick={() => setConfirming(false)}>Cancel</button>
      </div>
      <ErrorNote error={remove.error} />
    </div>
  );
}
