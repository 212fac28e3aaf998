/**
 * A PNG that is only its signature and IHDR chunk (with a correct CRC), declaring any size: what
 * a decompression bomb looks like to a header reader, in 33 bytes.
 */

/** CRC-32 (PNG's), bit by bit: zlib.crc32 is newer than the Node versions this runs on. */
function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

export function pngHeader(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(6, 9); // RGBA
  const type = Buffer.from("IHDR", "latin1");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(ihdr.length, 0);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([type, ihdr])), 0);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    length,
    type,
    ihdr,
    crc,
  ]);
}
