/**
 * Speech, video, music and transcription in a chat: a model of the right modality from the catalog, and the
 * choices its allowedParams offer (voices, durations, resolutions...), sent to the chat's generation endpoint.
 */
import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { playground, type MediaKind } from '../../playground-api';
import { ErrorNote } from '../../ui';
import { ModelPicker, useModels } from './ModelPicker';
import { RecordButton } from './RecordButton';

const KINDS: Array<{ kind: MediaKind; label: string; modality: string; model: string; prompt: string; options: string[] }> = [
  { kind: 'speech', label: 'Speech', modality: 'speech', model: 'sim-tts', prompt: 'input', options: ['voice', 'response_format'] },
  { kind: 'videos', label: 'Video', modality: 'video', model: 'sim-video', prompt: 'prompt', options: ['duration', 'resolution', 'aspect_ratio'] },
  { kind: 'music', label: 'Music', modality: 'music', model: 'sim-music', prompt: 'prompt', options: ['duration', 'response_format'] },
  { kind: 'transcriptions', label: 'Transcription', modality: 'transcription', model: 'sim-transcribe', prompt: '', options: ['language'] },
];

interface Props {
  chatId: string;
  draft: string;
  /** Audio files attached in the composer (a transcription takes the first). */
  files: Array<{ id: string; filename: string }>;
  /** Uploads a file to the chat (a recording made here is transcribed once uploaded). */
  upload: (file: File) => Promise<{ id: string; filename: string }>;
  onStarted: () => void;
}

export function MediaPanel({ chatId, draft, files, upload, onStarted }: Props) {
  const [kind, setKind] = useState<MediaKind>('speech');
  const spec = KINDS.find((k) => k.kind === kind)!;
  const [models, setModels] = useState<Record<string, string>>({});
  const model = models[kind] ?? spec.model;
  const [options, setOptions] = useState<Record<string, unknown>>({});
  const record = useModels(spec.modality).find((m) => m.id === model);
  const allowed = (record?.allowedParams ?? {}) as Record<string, unknown>;
  const chosen = Object.fromEntries(spec.options.filter((o) => allowed[o] !== undefined).map((o) => [o, options[o] ?? firstChoice(allowed[o])]).filter(([, v]) => v !== undefined));
  const start = useMutation({
    mutationFn: () => playground.generate(chatId, kind, kind === 'transcriptions'
      ? { model, file_id: files[0]?.id, ...chosen }
      : { model, [spec.prompt]: draft, ...chosen }),
    onSuccess: onStarted,
  });
  const recorded = useMutation({
    mutationFn: async (recording: File) => playground.generate(chatId, 'transcriptions', { model, file_id: (await upload(recording)).id, ...chosen }),
    onSuccess: onStarted,
  });
  const ready = kind === 'transcriptions' ? files.length > 0 : Boolean(draft.trim());
  return (
    <fieldset className="media-panel">
      <legend>Speech, video, music, transcription</legend>
      <div className="row">
        <label className="field"><span>Generate</span>
          <select aria-label="Generation" value={kind} onChange={(e) => { setKind(e.target.value as MediaKind); setOptions({}); }}>
            {KINDS.map((k) => <option key={k.kind} value={k.kind}>{k.label}</option>)}
          </select>
        </label>
        <ModelPicker label={`${spec.label} model`} modality={spec.modality} value={model} onChange={(m) => { setModels({ ...models, [kind]: m }); setOptions({}); }} />
        {Object.keys(chosen).map((name) => (
          <ParamChoice key={name} name={name} rule={allowed[name]} value={chosen[name]} onChange={(v) => setOptions({ ...options, [name]: v })} />
        ))}
        <button type="button" className="secondary" disabled={!ready || start.isPending} onClick={() => start.mutate()}>Generate {spec.label.toLowerCase()}</button>
        {kind === 'transcriptions' && <RecordButton disabled={recorded.isPending} onRecorded={(file) => recorded.mutate(file)} />}
      </div>
      {kind === 'transcriptions' && <p className="muted">{files[0] ? `Transcribes ${files[0].filename}.` : 'Attach an audio file or record one to transcribe it.'}</p>}
      <ErrorNote error={start.error ?? recorded.error} />
    </fieldset>
  );
}

/** What a parameter starts at: its first choice, or the lowest number it takes. */
function firstChoice(rule: unknown): unknown {
  if (Array.isArray(rule)) return rule[0];
  const range = rule as { min?: number; type?: string };
  return range.type === 'integer' || range.type === 'number' ? range.min : undefined;
}

/** One parameter: a list of choices, or a number within the model's range. */
function ParamChoice({ name, rule, value, onChange }: { name: string; rule: unknown; value: unknown; onChange: (v: unknown) => void }) {
  const label = name === 'voice' ? 'Voice' : name.replace(/_/g, ' ');
  if (Array.isArray(rule)) {
    return (
      <label className="field"><span>{label}</span>
        <select aria-label={label} value={String(value)} onChange={(e) => onChange(rule.find((c) => String(c) === e.target.value))}>
          {rule.map((c) => <option key={String(c)} value={String(c)}>{String(c)}</option>)}
        </select>
      </label>
    );
  }
  const range = rule as { min?: number; max?: number; type?: string };
  if (range.type !== 'integer' && range.type !== 'number') return null;
  return (
    <label className="field"><span>{label}</span>
      <input aria-label={label} type="number" min={range.min} max={range.max} value={String(value ?? '')} onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))} />
    </label>
  );
}
