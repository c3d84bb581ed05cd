import { expect } from 'chai';
import { contentDisposition, MAX_FILENAME_BYTES, sanitizeFilename } from '../../core/filenames';

describe('sanitizeFilename', () => {
  it('keeps only the last path segment', () => {
    expect(sanitizeFilename('../../etc/passwd')).to.equal('passwd');
    expect(sanitizeFilename('C:\\Users\\me\\report.docx')).to.equal('report.docx');
    expect(sanitizeFilename('dir/')).to.equal('file');
  });

  it('never yields a directory name or an empty name', () => {
    for (const raw of ['', '.', '..', '...', '   ', '\u0000', undefined, null]) expect(sanitizeFilename(raw)).to.equal('file');
    expect(sanitizeFilename('.gitignore')).to.equal('.gitignore');
  });

  it('drops control, zero-width and bidi-override characters and collapses whitespace', () => {
    expect(sanitizeFilename('a\u0000b\u001fc\u007f\u0085.txt')).to.equal('abc.txt');
    expect(sanitizeFilename('invoice\u202Efdp.exe')).to.equal('invoicefdp.exe');
    expect(sanitizeFilename('zero\u200Bwidth\uFEFF.md')).to.equal('zerowidth.md');
    expect(sanitizeFilename(' a \t b\n c .txt ')).to.equal('a b c .txt');
  });

  it('normalises to NFC', () => {
    expect(sanitizeFilename('re\u0301sume\u0301.pdf')).to.equal('r\u00e9sum\u00e9.pdf');
  });

  it('truncates to 255 UTF-8 bytes on a character boundary, keeping the extension', () => {
    const name = sanitizeFilename(`${'\u{1F600}'.repeat(100)}.jsonl`);
    expect(Buffer.byteLength(name)).to.be.at.most(MAX_FILENAME_BYTES);
    expect(name.endsWith('.jsonl')).to.equal(true);
    expect(name.replace('.jsonl', '')).to.match(/^(\u{1F600})+$/u);
    expect(Buffer.byteLength(sanitizeFilename('x'.repeat(1000)))).to.equal(MAX_FILENAME_BYTES);
  });
});

describe('contentDisposition', () => {
  it('gives an ASCII fallback and the exact UTF-8 name', () => {
    expect(contentDisposition('attachment', 'r\u00e9sum\u00e9 "final".pdf')).to.equal(`attachment; filename="r_sum_ _final_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.pdf`);
  });
});
