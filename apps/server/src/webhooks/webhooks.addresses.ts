import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
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

/**
 * Whether an IP address (as node:net's isIP reads it) is outside the public internet. ipaddr.js names the special
 * ranges of both families (IANA's special-purpose registries); every one of them is refused except where the
 * rules below say otherwise, so a range ipaddr.js learns later is refused too.
 */
function isSpecialAddress(text: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(text);
  } catch {
    return true;
  }
  if (parsed.kind() === 'ipv4') return parsed.range() !== 'unicast';
  const address = parsed as ipaddr.IPv6;
  const [p0, p1, p2, p3, p4, p5, p6, p7] = address.parts as [number, number, number, number, number, number, number, number];
  const embeddedV4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  // IPv4-compatible ::/96 (deprecated by RFC 4291; ::1 and :: included): ipaddr.js calls it unicast, but it is
  // never a receiver's address. Refused whole, as are IPv4-mapped ::ffff:0:0/96 and IPv4-translated
  // ::ffff:0:0:0/96 (ranges of their own below): a receiver on IPv4 is named by its IPv4 address.
  if (p0 === 0 && p1 === 0 && p2 === 0 && p3 === 0 && p4 === 0 && p5 === 0) return true;
  const range = address.range();
  if (range === 'rfc6052') {
    // NAT64. The local-use prefix 64:ff9b:1::/48 (RFC 8215) is the operator's own translator, whose layout and
    // reach svc cannot know: refused whole. The well-known 64:ff9b::/96 (RFC 6052) holds the IPv4 address in its
    // last 32 bits, and the translator connects to exactly that one; a DNS64 resolver answers with it for every
    // IPv4-only receiver, so it is judged by that address rather than refused whole.
    if (p1 === 0xff9b && p2 === 0 && p3 === 0 && p4 === 0 && p5 === 0) return embeddedV4(p6, p7).range() !== 'unicast';
    return true;
  }
  // 6to4 (RFC 3056): 2002:AABB:CCDD::/48 reaches the IPv4 address AA.BB.CC.DD through a relay.
  if (range === '6to4') return embeddedV4(p1, p2).range() !== 'unicast';
  return range !== 'unicast';
}

/**
 * Whether an IP address is outside the public internet: private, loopback, link-local (cloud metadata services
 * answer at 169.254.169.254), carrier-grade NAT, multicast, documentation, reserved, and the IPv6 prefixes that
 * carry an IPv4 address (docs/webhooks.md "Addresses"): IPv4-mapped, IPv4-translated, IPv4-compatible and NAT64's
 * local-use prefix in every spelling; 6to4 and NAT64's well-known prefix when the IPv4 address inside is not public.
 * Anything that is not an IP address counts as private.
 *
 * @example
 * isPrivateAddress('10.1.2.3'); // true
 * isPrivateAddress('::ffff:0:7f00:1'); // true
 * isPrivateAddress('2002:c0a8:101::1'); // true (6to4 of 192.168.1.1)
 * isPrivateAddress('93.184.215.14'); // false
 */
export function isPrivateAddress(address: string): boolean {
  // Only what node:net reads as an address: ipaddr.js alone would also take `0x7f.1` and other legacy IPv4 forms.
  return isIP(address) === 0 || isSpecialAddress(address);
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
