/** The same prompt to two models side by side: each is its own chat, with its own receipt (cost) and latency. */
import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { playground } from '../../playground-api';
import { ErrorNote } from '../../ui';
import { ChatView } from './ChatView';
import { ModelPicker } from './ModelPicker';

export function Compare() {
  const [models, setModels] = useState(['sim-chat', 'sim-chat-mini']);
  const [prompt, setPrompt] = useState('');
  const [chats, setChats] = useState<string[]>([]);
  const run = useMutation({
    mutationFn: () => Promise.all(models.map(async (model) => {
      const chat = await playground.createChat({ model, title: `Compare · ${model} · ${prompt.slice(0, 40)}` });
      await playground.send(chat.id, { content: prompt });
      return chat.id;
    })),
    onSuccess: setChats,
  });
  return (
    <section aria-label="Compare models">
      <h1>Compare models</h1>
      <form className="inline" onSubmit={(e) => { e.preventDefault(); run.mutate(); }}>
        {models.map((m, i) => <ModelPicker key={i} label={`Model ${i + 1}`} modality="chat" value={m} showMore={i === 0} onChange={(id) => setModels((list) => list.map((x, j) => (j === i ? id : x)))} />)}
        <label className="field grow"><span>Prompt</span><input aria-label="Prompt" value={prompt} onChange={(e) => setPrompt(e.target.value)} /></label>
        <button type="submit" disabled={!prompt.trim() || run.isPending}>Compare</button>
      </form>
      <ErrorNote error={run.error} />
      <div className="compare">
        {chats.map((id) => <div key={id} className="compare-column"><ChatView chatId={id} /></div>)}
      </div>
    </section>
  );
}
