/**
 * Attaches to a running reply: the server sends the text so far, then each delta, then `done` (also after a
 * refresh, or from a second tab: the run does not depend on this page). On `done` the stored chat is read.
 */
import { useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { playground } from '../../playground-api';

export function useReply(chatId: string, messageId: string | null): string {
  const [text, setText] = useState('');
  const client = useQueryClient();
  useEffect(() => {
    if (!messageId) return;
    setText('');
    const source = new EventSource(playground.streamUrl(messageId));
    source.addEventListener('delta', (e) => setText((t) => t + JSON.parse((e as MessageEvent).data).text));
    source.addEventListener('done', () => {
      source.close();
      void client.invalidateQueries({ queryKey: ['playground'] });
    });
    // The process holding the reply went away: read the chat again until its run is settled.
    source.onerror = () => {
      source.close();
      setTimeout(() => void client.invalidateQueries({ queryKey: ['playground', 'chat', chatId] }), 1000);
    };
    return () => source.close();
  }, [chatId, messageId, client]);
  return text;
}
