import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { AppError } from '../core/core.errors.js';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all of its addresses (node:dns by default; tests pass a stand-in for DNS). */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

export const resolveWithDns: ResolveHost = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));

/** IPv4 ranges that are not the public internet: this network, private, CGNAT, loopback, link-local, IETF, benchmarks, multicast, reserved. */
const PRIVATE_V4: Array<[number, number]> = [
  [0x00000000, 8], [0x0a000000, 8], [0x64400000, 10], [0x7f000000, 8], [0xa9fe0000, 16], [0xac100000, 12], [0xc0000000, 24],
  [0xc0000200, 24], [0xc0a80000, 16], [0xc6120000, 15], [0xc6336400, 24], [0xcb007100, 24], [0xe0000000, 4], [0xf0000000, 4],
];

function v4ToNumber(address: string): number {
  return address.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

function isPrivateV4(address: string): boolean {
  const value = v4ToNumber(address);
  return PRIVATE_V4.some(([base, bits]) => Math.floor(value / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)));
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
function v6Groups(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const value = v4ToNumber(dotted[1]!);
    text = `${text.slice(0, -dotted[1]!.length)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function isPrivateV6(address: string): boolean {
  const g = v6Groups(address);
  const v4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) carry an IPv4 address.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
    if (g[5] === 0 && g[6] === 0 && (g[7] ?? 0) <= 1) return true; // :: and ::1
    return isPrivateV4(v4Of(g[6]!, g[7]!));
  }
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return isPrivateV4(v4Of(g[6]!, g[7]!));
  const first = g[0]!;
  return (first & 0xfe00) === 0xfc00 // unique local fc00::/7
    || (first & 0xffc0) === 0xfe80 // link-local fe80::/10
    || (first & 0xffc0) === 0xfec0 // site-local (deprecated) fec0::/10
    || (first & 0xff00) === 0xff00 // multicast
    || (first === 0x2001 && g[1] === 0x0db8) // documentation
    || (first === 0x0100 && g.slice(1, 4).every((x) => x === 0)); // discard-only 100::/64
}

/**
 * Whether an IP address is outside the public internet: private, loopback, link-local (cloud metadata services
 * answer at 169.254.169.254), carrier-grade NAT, multicast, reserved; IPv4 inside IPv6 is judged as IPv4.
 *
 * @example
 * isPrivateAddress('10.1.2.3'); // true
 * isPrivateAddress('::ffff:127.0.0.1'); // true
 * isPrivateAddress('93.184.215.14'); // false
 */
export function isPrivateAddress(address: string): boolean {
  const version = isIP(address.split('%')[0]!);
  if (version === 4) return isPrivateV4(address);
  if (version === 6) return isPrivateV6(address);
  return true;
}

/** Host names that mean this machine or its local network whatever DNS says. */
function isLocalName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') || name.endsWith('.local') || name.endsWith('.internal') || !name.includes('.');
}

/** A URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

const invalidUrl = (message: string) => new AppError('invalid_body', `url ${message}`, 'url');

/** How long registration waits for DNS before it accepts a name it could not resolve (delivery checks again). */
const REGISTRATION_LOOKUP_MS = 2000;

/**
 * A webhook URL checked for registration, in its normal form: http or https only, no user name or password, no
 * fragment; unless `allowPrivate`, no host that is or resolves to a private, loopback or link-local address. A
 * name that does not resolve now is accepted (delivery resolves it again, and refuses it then if it turns private).
 * A 400 naming `url` otherwise.
 *
 * @example
 * await checkWebhookUrl('https://hooks.example.com/svc', false, resolveWithDns); // 'https://hooks.example.com/svc'
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean, resolve: ResolveHost): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidUrl('is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidUrl(`must be http or https, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username !== '' || url.password !== '') throw invalidUrl('must not carry a user name or password: put a token in the path or query instead');
  if (url.hash !== '' || raw.includes('#')) throw invalidUrl('must not have a fragment (#...)');
  if (url.hostname === '') throw invalidUrl('has no host');
  if (allowPrivate) return url.href;
  const host = hostOf(url);
  const refused = (what: string) => invalidUrl(`${what}: private, loopback and link-local addresses are refused unless the account is allowed them (allowPrivateWebhookUrls)`);
  if (isIP(host) !== 0) {
    if (isPrivateAddress(host)) throw refused(`names ${host}`);
    return url.href;
  }
  if (isLocalName(host)) throw refused(`names the local host name ${host}`);
  let addresses: ResolvedAddress[] = [];
  try {
    addresses = await Promise.race([
      resolve(host),
      new Promise<ResolvedAddress[]>((done) => setTimeout(() => done([]), REGISTRATION_LOOKUP_MS).unref()),
    ]);
  } catch {
    addresses = [];
  }
  const inside = addresses.find((entry) => isPrivateAddress(entry.address));
  if (inside !== undefined) throw refused(`host ${host} resolves to ${inside.address}`);
  return url.href;
}

/**
 * The address a delivery connects to: the URL's IP, or the first address its host resolves to, checked now (so a
 * name that turned private after registration, DNS rebinding, is refused). The connection then goes to exactly
 * this address. Throws an Error whose message is the attempt's error.
 */
export async function resolveDeliveryAddress(url: URL, allowPrivate: boolean, resolve: ResolveHost): Promise<ResolvedAddress> {
  const host = hostOf(url);
  const version = isIP(host);
  const addresses: ResolvedAddress[] = version !== 0 ? [{ address: host, family: version === 6 ? 6 : 4 }] : await resolve(host);
  if (addresses.length === 0) throw new Error(`host ${host} did not resolve`);
  if (!allowPrivate) {
    const inside = addresses.find((entry) => isPrivateAddress(entry.address));
    if (inside !== undefined) throw new Error(`refused: ${host} resolves to ${inside.address}, a private, loopback or link-local address`);
  }
  return addresses[0]!;
}
