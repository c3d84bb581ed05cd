/** /playground, /playground/<chat id>, /playground/compare, /playground/projects/<project id>. */
import { useLocation } from '../../router';
import { ChatList } from './ChatList';
import { ChatView } from './ChatView';
import { Compare } from './Compare';
import { ProjectView } from './ProjectView';

export function Playground() {
  const { path } = useLocation();
  const id = path.split('/')[2] ?? null;
  return (
    <div className="playground">
      <ChatList activeId={id} />
      <div className="playground-main">
        {id === 'compare' ? <Compare /> : id === 'projects' ? <ProjectView key={path} projectId={path.split('/')[3] ?? ''} /> : id ? <ChatView key={id} chatId={id} /> : <><h1>Playground</h1><p className="empty">Choose a chat or start a new one.</p></>}
      </div>
    </div>
  );
}
