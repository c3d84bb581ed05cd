/** The CRCs the audio containers need: FLAC's CRC-8 and CRC-16, and Ogg's CRC-32 (all MSB-first). */

function msbFirstTable(poly: number, width: 8 | 16 | 32): Uint32Array {
  const table = new Uint32Array(256);
  const top = 2 ** (width - 1);
  const mask = 2 ** width - 1;
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte * 2 ** (width - 8);
    for (let bit = 0; bit < 8; bit++) {
      crc = crc >= top ? ((crc * 2) ^ poly) >>> 0 : crc * 2;
      crc = width === 32 ? crc >>> 0 : crc & mask;
    }
    table[byte] = crc >>> 0;
  }
  return table;
}

const CRC8_TABLE = msbFirstTable(0x07, 8);
const CRC16_TABLE = msbFirstTable(0x8005, 16);
const OGG_TABLE = msbFirstTable(0x04c11db7, 32);

export function crc8(data: Uint8Array): number {
  let crc = 0;
  for (const byte of data) crc = CRC8_TABLE[crc ^ byte];
  return crc;
}

export function crc16(data: Uint8Array): number {
  let crc = 0;
  for (const byte of data) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[(crc >> 8) ^ byte];
  return crc;
}

export function oggCrc32(data: Uint8Array): number {
  let crc = 0;
  for (const byte of data) crc = ((crc << 8) ^ OGG_TABLE[((crc >>> 24) ^ byte) & 0xff]) >>> 0;
  return crc >>> 0;
}
