/** Deleting a chat (its owner): its messages, files and videos go, and their storage is given back. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ConfirmButton } from '../../confirm';
import { playground } from '../../playground-api';
import { navigate } from '../../router';

export function DeleteChat({ chatId, title }: { chatId: string; title: string }) {
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => playground.deleteChat(chatId),
    onSuccess: () => { void client.invalidateQueries({ queryKey: ['playground'] }); void client.invalidateQueries({ queryKey: ['storage'] }); navigate('/playground'); },
  });
  return (
    <ConfirmButton className="danger" onConfirm={() => remove.mutateAsync()}
      confirm={{ title: 'Delete chat', confirmLabel: 'Delete', children: <p>Delete “{title}” with its messages and files?</p> }}>
      Delete chat
    </ConfirmButton>
  );
}
