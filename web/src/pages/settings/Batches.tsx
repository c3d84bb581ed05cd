/**
 * Batches (OpenAI's Batch API, `/v1/batches`): upload a JSONL file or pick an API file with purpose `batch`,
 * choose the endpoint its lines call and create the batch; follow each batch's progress and what its lines
 * were charged so far (refreshed while any batch runs), cancel one, download its output and error files.
 */
import { useState, type FormEvent } from 'react';
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { ConfirmButton } from '../../confirm';
import { useCan } from '../../session';
import { BATCH_DONE, BATCH_ENDPOINTS, type Batch } from '../../types';
import { bytes, credits, Empty, ErrorNote, Field, Loading, Section, Select, when } from '../../ui';

/** How often the list is read again while a batch is still running. */
const POLL_MS = 2000;
const UPLOAD = '';

export function Batches() {
  const can = useCan();
  return (
    <>
      {can('batches.write') && can('files.write') && <CreateBatch />}
      <BatchList />
    </>
  );
}

function CreateBatch() {
  const client = useQueryClient();
  const files = useQuery({ queryKey: ['files', 'batch'], queryFn: () => api.files('batch') });
  const [source, setSource] = useState(UPLOAD);
  const create = useMutation({
    mutationFn: async ({ file, endpoint, description }: { file: File | null; endpoint: string; description: string }) => {
      const inputFileId = source !== UPLOAD ? source : (await api.uploadFile(file!, 'batch')).id;
      return api.createBatch({ input_file_id: inputFileId, endpoint, ...(description ? { metadata: { description } } : {}) });
    },
    onSuccess: () => Promise.all([client.invalidateQueries({ queryKey: ['batches'] }), client.invalidateQueries({ queryKey: ['files', 'batch'] })]),
  });
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    const file = f.get('file');
    create.mutate(
      { file: file instanceof File && file.size > 0 ? file : null, endpoint: String(f.get('endpoint')), description: String(f.get('description') ?? '').trim() },
      { onSuccess: () => { form.reset(); setSource(UPLOAD); } },
    );
  };
  return (
    <Section title="Create a batch">
      <p className="muted">Each line of the JSONL file is one request: <code>{'{"custom_id": "…", "method": "POST", "url": "/v1/chat/completions", "body": {…}}'}</code>. Lines run within 24 hours, each charged as it completes.</p>
      <ErrorNote error={files.error ?? create.error} />
      <form className="grid" onSubmit={submit} aria-label="Create a batch">
        <Select label="Input file" name="source" value={source} onChange={(e) => setSource(e.target.value)}
          options={[{ value: UPLOAD, label: 'Upload a JSONL file' }, ...(files.data?.data ?? []).map((f) => ({ value: f.id, label: `${f.filename} (${bytes(f.bytes)})` }))]} />
        {source === UPLOAD && <Field label="JSONL file" name="file" type="file" accept=".jsonl,application/jsonl,application/x-ndjson,text/plain" required />}
        <Select label="Endpoint" name="endpoint" defaultValue={BATCH_ENDPOINTS[0]} options={BATCH_ENDPOINTS.map((e) => ({ value: e, label: e }))} />
        <Field label="Description (optional)" name="description" maxLength={512} placeholder="e.g. nightly summaries" />
        <button type="submit" disabled={create.isPending}>{create.isPending ? 'Creating…' : 'Create batch'}</button>
      </form>
    </Section>
  );
}

function BatchList() {
  const batches = useInfiniteQuery({
    queryKey: ['batches'],
    queryFn: ({ pageParam }) => api.batches(pageParam || undefined),
    initialPageParam: '',
    getNextPageParam: (last) => (last.has_more && last.last_id ? last.last_id : undefined),
    refetchInterval: (q) => (q.state.data?.pages.some((p) => p.data.some((b) => !BATCH_DONE.includes(b.status))) ? POLL_MS : false),
  });
  const rows = batches.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <Section title="Batches">
      {batches.isPending && <Loading what="batches" />}
      <ErrorNote error={batches.error} />
      {batches.isSuccess && rows.length === 0 && <Empty>No batch yet.</Empty>}
      {rows.length > 0 && <ul className="plain batches" aria-label="Batches, newest first">{rows.map((b) => <BatchItem key={b.id} batch={b} />)}</ul>}
      {batches.hasNextPage && (
        <div className="row"><button type="button" className="secondary" disabled={batches.isFetchingNextPage} onClick={() => void batches.fetchNextPage()}>{batches.isFetchingNextPage ? 'Loading…' : 'Load more'}</button></div>
      )}
    </Section>
  );
}

function BatchItem({ batch: b }: { batch: Batch }) {
  const client = useQueryClient();
  const can = useCan();
  const cancel = useMutation({ mutationFn: api.cancelBatch, onSuccess: () => client.invalidateQueries({ queryKey: ['batches'] }) });
  const name = b.metadata?.description ? `${b.metadata.description} (${b.id})` : b.id;
  const cancellable = b.status === 'validating' || b.status === 'in_progress';
  return (
    <li className="batch" data-batch-id={b.id} aria-label={`Batch ${name}`}>
      <div className="row spread">
        <strong className="batch-name">{name}</strong>
        <span className={`badge status-${b.status}`} data-testid="batch-status">{b.status.replace('_', ' ')}</span>
      </div>
      <BatchProgress batch={b} />
      <dl className="pairs">
        <div><dt>Endpoint</dt><dd>{b.endpoint}</dd></div>
        <div><dt>Created</dt><dd>{when(b.created_at)}</dd></div>
        {b.completed_at && <div><dt>Completed</dt><dd>{when(b.completed_at)}</dd></div>}
        {b.cancelled_at && <div><dt>Cancelled</dt><dd>{when(b.cancelled_at)}</dd></div>}
        <div><dt>Cost so far</dt><dd data-testid="batch-credits">{b.credits_used == null ? '—' : `${credits(b.credits_used)} credits`}</dd></div>
        {b.usage && <div><dt>Tokens</dt><dd>{b.usage.input_tokens} in · {b.usage.output_tokens} out</dd></div>}
      </dl>
      {b.errors?.data.length ? (
        <ul className="error" aria-label={`Why ${b.id} failed`}>
          {b.errors.data.slice(0, 5).map((e, i) => <li key={i}>{e.line ? `Line ${e.line}: ` : ''}{e.message}</li>)}
          {b.errors.data.length > 5 && <li>and {b.errors.data.length - 5} more</li>}
        </ul>
      ) : null}
      <div className="row wrap">
        {b.output_file_id && <a className="button-link" href={api.fileContentUrl(b.output_file_id)} download={`${b.id}-output.jsonl`}>Download output</a>}
        {b.error_file_id && <a className="button-link" href={api.fileContentUrl(b.error_file_id)} download={`${b.id}-errors.jsonl`}>Download errors</a>}
        {cancellable && can('batches.write') && (
          <ConfirmButton className="danger" aria-label={`Cancel ${b.id}`} onConfirm={() => cancel.mutateAsync(b.id)}
            confirm={{ title: `Cancel the batch ${b.id}?`, confirmLabel: 'Cancel batch', children: (
              <p>No new line starts; lines already running finish and are charged, and their results stay downloadable. This cannot be undone.</p>
            ) }}>Cancel</ConfirmButton>
        )}
      </div>
    </li>
  );
}

function BatchProgress({ batch: b }: { batch: Batch }) {
  const { total, completed, failed } = b.request_counts;
  const label = `Progress of ${b.id}`;
  return (
    <div className="batch-progress">
      <meter min={0} max={Math.max(total, 1)} value={completed + failed} aria-label={label} />
      <span data-testid="batch-counts">{completed} completed · {failed} failed of {total}</span>
    </div>
  );
}
