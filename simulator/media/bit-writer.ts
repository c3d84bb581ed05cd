/**
 * MSB-first bit writer shared by the bitstream encoders (H.264 headers, AAC frames, FLAC frames).
 * Grows as needed; `bytes()` returns only the written part.
 */
export class BitWriter {
  private buffer: Uint8Array;
  private byteLength = 0;
  /** Bits already used in the byte at `byteLength` (0..7). */
  private bitOffset = 0;

  constructor(initialBytes = 1024) {
    this.buffer = new Uint8Array(Math.max(16, initialBytes));
  }

  get bitLength(): number {
    return this.byteLength * 8 + this.bitOffset;
  }

  get isAligned(): boolean {
    return this.bitOffset === 0;
  }

  /** Writes the low `count` bits of `value` (count <= 32), most significant first. */
  writeBits(value: number, count: number): void {
    if (count < 0 || count > 32) throw new RangeError(`cannot write ${count} bits at once`);
    for (let i = count - 1; i >= 0; i--) this.writeBit(Math.floor(value / 2 ** i) & 1);
  }

  writeBit(bit: number): void {
    this.ensure(1);
    if (bit) this.buffer[this.byteLength] |= 0x80 >> this.bitOffset;
    this.bitOffset++;
    if (this.bitOffset === 8) {
      this.bitOffset = 0;
      this.byteLength++;
    }
  }

  /** Unsigned exp-Golomb, ue(v). */
  writeUe(value: number): void {
    const codeNum = value + 1;
    const length = Math.floor(Math.log2(codeNum));
    this.writeBits(0, length);
    this.writeBits(codeNum, length + 1);
  }

  /** Signed exp-Golomb, se(v): 0, 1, -1, 2, -2, ... */
  writeSe(value: number): void {
    this.writeUe(value > 0 ? 2 * value - 1 : -2 * value);
  }

  /** Pads with zero bits up to the next byte boundary. */
  alignWithZeros(): void {
    while (this.bitOffset !== 0) this.writeBit(0);
  }

  /** rbsp_trailing_bits: a stop bit then zero bits to the byte boundary. */
  writeTrailingBits(): void {
    this.writeBit(1);
    this.alignWithZeros();
  }

  /** Appends whole bytes; the writer must be byte-aligned. */
  writeBytes(bytes: Uint8Array): void {
    if (this.bitOffset !== 0) throw new Error('writeBytes needs a byte-aligned writer');
    this.ensure(bytes.length * 8);
    this.buffer.set(bytes, this.byteLength);
    this.byteLength += bytes.length;
  }

  bytes(): Buffer {
    const length = this.byteLength + (this.bitOffset > 0 ? 1 : 0);
    return Buffer.from(this.buffer.buffer, this.buffer.byteOffset, length);
  }

  private ensure(bits: number): void {
    const needed = this.byteLength + Math.ceil((this.bitOffset + bits) / 8) + 1;
    if (needed <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < needed) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buffer.subarray(0, this.byteLength + 1));
    this.buffer = next;
  }
}

/** MSB-first reader, used by tests. */
export class BitReader {
  private position = 0;

  constructor(private readonly data: Uint8Array, startByte = 0) {
    this.position = startByte * 8;
  }

  get bitPosition(): number {
    return this.position;
  }

  readBits(count: number): number {
    let value = 0;
    for (let i = 0; i < count; i++) value = value * 2 + this.readBit();
    return value;
  }

  readBit(): number {
    const byte = this.data[this.position >> 3];
    if (byte === undefined) throw new RangeError('read past the end of the data');
    const bit = (byte >> (7 - (this.position & 7))) & 1;
    this.position++;
    return bit;
  }

  readUe(): number {
    let zeros = 0;
    while (this.readBit() === 0) zeros++;
    return 2 ** zeros - 1 + this.readBits(zeros);
  }

  readSe(): number {
    const k = this.readUe();
    return k % 2 === 1 ? (k + 1) / 2 : -k / 2;
  }
}
