/** Records from the microphone in the page (MediaRecorder, Opus in WebM or Ogg) and hands the recording over as a file when stopped. */
import { useEffect, useRef, useState } from 'react';

/** Containers a transcription model takes, in the order a browser is asked for them. */
const TYPES = ['audio/webm;codecs=opus', 'audio/ogg;codecs=opus', 'audio/webm', 'audio/ogg'];

export function RecordButton({ disabled, onRecorded }: { disabled?: boolean; onRecorded: (file: File) => void }) {
  const [recorder, setRecorder] = useState<MediaRecorder | null>(null);
  const [seconds, setSeconds] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const handOver = useRef(onRecorded);
  handOver.current = onRecorded;

  useEffect(() => {
    if (!recorder) return undefined;
    const started = Date.now();
    const tick = setInterval(() => setSeconds(Math.floor((Date.now() - started) / 1000)), 250);
    return () => clearInterval(tick);
  }, [recorder]);
  // Leaving the page mid-recording lets go of the microphone.
  useEffect(() => () => { if (recorder?.state === 'recording') recorder.stop(); }, [recorder]);

  const start = async () => {
    setError(null);
    if (!navigator.mediaDevices?.getUserMedia || typeof MediaRecorder === 'undefined') {
      setError('This browser cannot record audio here.');
      return;
    }
    let stream: MediaStream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (err) {
      setError(err instanceof DOMException && err.name === 'NotAllowedError' ? 'The microphone is not allowed for this page.' : `No microphone: ${(err as Error).message}`);
      return;
    }
    const mimeType = TYPES.find((t) => MediaRecorder.isTypeSupported(t));
    const rec = new MediaRecorder(stream, mimeType ? { mimeType } : undefined);
    const chunks: Blob[] = [];
    rec.ondataavailable = (e) => { if (e.data.size > 0) chunks.push(e.data); };
    rec.onstop = () => {
      stream.getTracks().forEach((t) => t.stop());
      setRecorder(null);
      // The file's type without codec parameters (the upload takes `type/subtype`).
      const type = (rec.mimeType || mimeType || 'audio/webm').split(';')[0];
      if (chunks.length > 0) handOver.current(new File(chunks, `recording.${type === 'audio/ogg' ? 'ogg' : 'webm'}`, { type }));
      else setError('Nothing was recorded.');
    };
    rec.start(250);
    setSeconds(0);
    setRecorder(rec);
  };

  return (
    <>
      {recorder
        ? <button type="button" onClick={() => recorder.stop()}>Stop and transcribe</button>
        : <button type="button" className="secondary" disabled={disabled} onClick={() => void start()}>Record</button>}
      {recorder && <span className="muted" role="status">Recording… {seconds} s</span>}
      {error && <p className="error" role="alert">{error}</p>}
    </>
  );
}
