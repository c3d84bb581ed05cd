/** /playground, /playground/<chat id>, /playground/compare. */
import { useLocation } from '../../router';
import { ChatList } from './ChatList';
import { ChatView } from './ChatView';
import { Compare } from './Compare';

export function Playground() {
  const { path } = useLocation();
  const id = path.split('/')[2] ?? null;
  return (
    <div className="playground">
      <ChatList activeId={id} />
      <div className="playground-main">
        {id === 'compare' ? <Compare /> : id ? <ChatView key={id} chatId={id} /> : <p className="empty">Choose a chat or start a new one.</p>}
      </div>
    </div>
  );
}
