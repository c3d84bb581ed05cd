/** Parses a multipart/form-data body the fake host recorded, so tests can assert the fields we sent. */
import busboy from 'busboy';
import type { RecordedRequest } from '../../support/fake-upstream';

export interface UploadedFile {
  field: string;
  filename: string;
  mediaType: string;
  data: Buffer;
}

export interface ParsedForm {
  fields: Record<string, string>;
  files: UploadedFile[];
}

export function parseMultipart(request: RecordedRequest): Promise<ParsedForm> {
  return new Promise((resolve, reject) => {
    const form: ParsedForm = { fields: {}, files: [] };
    const parser = busboy({ headers: request.headers });
    parser.on('field', (name, value) => { form.fields[name] = value; });
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => form.files.push({ field, filename: info.filename ?? '', mediaType: info.mimeType, data: Buffer.concat(chunks) }));
    });
    parser.on('close', () => resolve(form));
    parser.on('error', reject);
    parser.end(request.raw);
  });
}
