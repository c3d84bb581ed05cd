/** The workspace's storage: API files and Playground files (uploads, project files, generated media) share one limit. */
import { useQuery } from '@tanstack/react-query';
import { playground } from '../../playground-api';
import { bytes, ErrorNote, Loading, Section } from '../../ui';

export function StorageCard() {
  const storage = useQuery({ queryKey: ['storage'], queryFn: playground.storage });
  const s = storage.data;
  return (
    <Section title="Storage">
      {storage.isPending && <Loading what="storage" />}
      <ErrorNote error={storage.error} />
      {s && (
        <>
          <meter min={0} max={s.limit_bytes} value={s.used_bytes} aria-label="Storage used" />
          <dl className="stats">
            <div><dt>Used</dt><dd data-testid="storage-used">{bytes(s.used_bytes)} of {bytes(s.limit_bytes)}</dd></div>
            <div><dt>API files</dt><dd>{bytes(s.used_bytes - s.playground_bytes)}</dd></div>
            <div><dt>Playground files</dt><dd data-testid="storage-playground">{bytes(s.playground_bytes)}</dd></div>
          </dl>
          <p className="muted">Playground files (attachments, project files, generated images, audio and videos) count in the same storage as API files; deleting a chat, a project or a file gives its space back.</p>
        </>
      )}
    </Section>
  );
}
