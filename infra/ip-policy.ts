/**
 * Which addresses the gateway may connect to on a client's behalf (fetching an `image_url`): public
 * unicast only. Refused: loopback, private (RFC 1918, unique-local), shared (CGNAT), link-local (the cloud
 * metadata address 169.254.169.254 among them), multicast, broadcast, unspecified, documentation,
 * benchmarking and reserved ranges, and IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4), which
 * are judged by that address.
 */
import net from 'node:net';

type Cidr4 = [number, number];

const BLOCKED_V4: Cidr4[] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
].map(([a, bits]) => [v4ToInt(a as string), bits as number]);

function v4ToInt(address: string): number {
  return address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

function inV4(value: number, [base, bits]: Cidr4): boolean {
  const size = 2 ** (32 - bits);
  return Math.floor(value / size) === Math.floor(base / size);
}

/** The 8 hextets of an IPv6 address (with an embedded dotted IPv4 tail expanded). */
function v6Hextets(address: string): number[] | null {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = v4ToInt(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const [head, tail, extra] = text.split('::');
  if (extra !== undefined) return null;
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return null;
  const groups = [...left, ...Array(tail === undefined ? 0 : missing).fill('0'), ...right].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

export function isPublicIPv4(address: string): boolean {
  if (net.isIPv4(address) === false) return false;
  const value = v4ToInt(address);
  return !BLOCKED_V4.some((cidr) => inV4(value, cidr));
}

export function isPublicIPv6(address: string): boolean {
  const h = v6Hextets(address);
  if (!h) return false;
  const embedded = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated): judged as the IPv4 address.
  if (h.slice(0, 5).every((g) => g === 0) && (h[5] === 0xffff || h[5] === 0)) {
    if (h[5] === 0 && h[6] === 0 && h[7] <= 1) return false; // :: and ::1
    return isPublicIPv4(embedded(h[6], h[7]));
  }
  // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address too.
  if (h[0] === 0x64 && h[1] === 0xff9b && h.slice(2, 6).every((g) => g === 0)) return isPublicIPv4(embedded(h[6], h[7]));
  if (h[0] === 0x2002) return isPublicIPv4(embedded(h[1], h[2]));
  // Global unicast is 2000::/3; within it, documentation (2001:db8::/32) and the IETF protocol block
  // (2001::/23: Teredo, benchmarking, ORCHID) are not ordinary hosts.
  if ((h[0] & 0xe000) !== 0x2000) return false;
  if (h[0] === 0x2001 && (h[1] === 0x0db8 || h[1] < 0x0200)) return false;
  return true;
}

/** True when the gateway may connect to this (literal) address. */
export function isPublicAddress(address: string): boolean {
  const version = net.isIP(address.replace(/%.*$/, ''));
  if (version === 4) return isPublicIPv4(address);
  if (version === 6) return isPublicIPv6(address);
  return false;
}
