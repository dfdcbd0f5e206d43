import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, isPrivateAddress, resolveDeliveryAddress } from './webhooks.addresses.js';
import type { ResolveHost } from './webhooks.addresses.js';

/**
 * The address rules of docs/webhooks.md "Addresses", one table: each address, whether it is refused, and why.
 * Every IPv6 prefix that carries an IPv4 address is here in more than one spelling (issue 31 item 16), since a URL
 * parser and a resolver each write it their own way.
 */
const ADDRESSES: Array<[address: string, refused: boolean, why: string]> = [
  ['10.0.0.1', true, 'private'],
  ['172.16.5.4', true, 'private'],
  ['192.168.1.1', true, 'private'],
  ['127.0.0.1', true, 'loopback'],
  ['169.254.169.254', true, 'link-local (cloud metadata)'],
  ['100.64.0.1', true, 'carrier-grade NAT'],
  ['0.0.0.0', true, 'this network'],
  ['224.0.0.1', true, 'multicast'],
  ['255.255.255.255', true, 'broadcast'],
  ['192.0.2.1', true, 'documentation'],
  ['240.0.0.1', true, 'reserved'],
  ['::1', true, 'loopback'],
  ['::', true, 'unspecified'],
  ['fe80::1', true, 'link-local'],
  ['fe80::1%eth0', true, 'link-local with a zone'],
  ['fd00::1', true, 'unique local'],
  ['fec0::1', true, 'site-local'],
  ['ff02::1', true, 'multicast'],
  ['2001:db8::1', true, 'documentation'],
  // IPv4-mapped ::ffff:0:0/96, refused whole in every spelling (a receiver on IPv4 is named by its IPv4 address).
  ['::ffff:127.0.0.1', true, 'IPv4-mapped, dotted'],
  ['::ffff:7f00:1', true, 'IPv4-mapped, hexadecimal (how URL writes [::ffff:127.0.0.1])'],
  ['0:0:0:0:0:ffff:7f00:0001', true, 'IPv4-mapped, written out'],
  ['::FFFF:A9FE:A9FE', true, 'IPv4-mapped, upper case (169.254.169.254)'],
  ['::ffff:8.8.8.8', true, 'IPv4-mapped, even of a public address'],
  // IPv4-translated ::ffff:0:0:0/96 (RFC 6145).
  ['::ffff:0:7f00:1', true, 'IPv4-translated of 127.0.0.1'],
  ['::ffff:0:127.0.0.1', true, 'IPv4-translated, dotted'],
  ['::ffff:0:808:808', true, 'IPv4-translated, even of a public address'],
  // IPv4-compatible ::/96 (deprecated).
  ['::127.0.0.1', true, 'IPv4-compatible, dotted'],
  ['::7f00:1', true, 'IPv4-compatible, hexadecimal'],
  ['::8.8.8.8', true, 'IPv4-compatible, even of a public address'],
  // NAT64: the local-use prefix whole, the well-known prefix by the IPv4 address inside.
  ['64:ff9b:1::a00:1', true, 'NAT64 local-use 64:ff9b:1::/48'],
  ['64:ff9b:1:ffff::808:808', true, 'NAT64 local-use, whatever it carries'],
  ['64:ff9b::a00:1', true, 'NAT64 well-known prefix of 10.0.0.1'],
  ['64:ff9b::127.0.0.1', true, 'NAT64 well-known prefix of 127.0.0.1, dotted'],
  ['64:ff9b::a9fe:a9fe', true, 'NAT64 well-known prefix of 169.254.169.254'],
  // 6to4 2002::/16 wrapping a non-public IPv4 address (2002:AABB:CCDD::/48 reaches AA.BB.CC.DD).
  ['2002:7f00:1::1', true, '6to4 of 127.0.0.1'],
  ['2002:c0a8:101::1', true, '6to4 of 192.168.1.1'],
  ['2002:a9fe:a9fe::', true, '6to4 of 169.254.169.254'],
  ['2002:0a00:0001:0:0:0:0:1', true, '6to4 of 10.0.0.1, written out'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', true, 'Teredo'],
  ['not-an-address', true, 'not an IP address'],
  ['93.184.215.14', false, 'public IPv4'],
  ['8.8.8.8', false, 'public IPv4'],
  ['172.32.0.1', false, 'public IPv4 just past 172.16.0.0/12'],
  ['2606:4700::1111', false, 'public IPv6'],
  ['64:ff9b::808:808', false, 'NAT64 well-known prefix of 8.8.8.8 (what DNS64 answers for an IPv4-only receiver)'],
  ['64:ff9b::8.8.8.8', false, 'NAT64 well-known prefix of 8.8.8.8, dotted'],
  ['2002:808:808::1', false, '6to4 of 8.8.8.8'],
];

/** DNS as a test double: `<anything>.v6.test` answers the address its first label spells, with `-` for `:`. */
const resolveHost: ResolveHost = async (hostname) => {
  const match = /^(.+)\.v6\.test$/.exec(hostname);
  if (match === null) throw new Error(`ENOTFOUND ${hostname}`);
  return [{ address: match[1]!.replaceAll('-', ':'), family: 6 }];
};
const nameFor = (address: string) => `${address.replaceAll(':', '-')}.v6.test`;
const v6 = ADDRESSES.filter(([address]) => address.includes(':') && !address.includes('%'));

describe('webhook addresses (docs/webhooks.md "Addresses")', () => {
  it.each(ADDRESSES)('%s is refused: %s (%s)', (address, refused) => {
    expect(isPrivateAddress(address)).toBe(refused);
  });

  it.each(v6)('registration of http://[%s]/ follows the table (refused: %s, %s), with a 400 naming url', async (address, refused) => {
    const check = checkWebhookUrl(`http://[${address}]/hooks`, false, resolveHost);
    if (refused) await expect(check).rejects.toMatchObject({ code: 'invalid_body', field: 'url', message: expect.stringMatching(/^url names .*: private, loopback and link-local addresses are refused/) });
    else await expect(check).resolves.toMatch(/^http:\/\/\[/);
  });

  it.each(v6)('registration of a name that resolves to %s follows the table (refused: %s, %s)', async (address, refused) => {
    const check = checkWebhookUrl(`https://${nameFor(address)}/hooks`, false, resolveHost);
    if (refused) await expect(check).rejects.toMatchObject({ field: 'url', message: expect.stringContaining(`resolves to ${address.toLowerCase()}`) });
    else await expect(check).resolves.toBe(`https://${nameFor(address)}/hooks`);
  });

  it.each(v6)('delivery to a name that resolves to %s follows the table (refused: %s, %s): the DNS answer is checked', async (address, refused) => {
    const delivery = resolveDeliveryAddress(new URL(`https://${nameFor(address)}/hooks`), false, resolveHost);
    if (refused) await expect(delivery).rejects.toThrow(`resolves to ${address.toLowerCase()}, a private, loopback or link-local address`);
    else await expect(delivery).resolves.toEqual({ address, family: 6 });
  });

  it('refuses a name when any of its answers is refused, though the first is public', async () => {
    const twoAnswers: ResolveHost = async () => [{ address: '2606:4700::1111', family: 6 }, { address: '::ffff:0:7f00:1', family: 6 }];
    await expect(checkWebhookUrl('https://two.test/hooks', false, twoAnswers)).rejects.toMatchObject({ field: 'url' });
    await expect(resolveDeliveryAddress(new URL('https://two.test/hooks'), false, twoAnswers)).rejects.toThrow('resolves to ::ffff:0:7f00:1');
  });

  it('lets every address through when private addresses are allowed (SVC_WEBHOOKS_ALLOW_PRIVATE, allowPrivateWebhookUrls)', async () => {
    await expect(checkWebhookUrl('http://[::ffff:0:7f00:1]:8080/x', true, resolveHost)).resolves.toBe('http://[::ffff:0:7f00:1]:8080/x');
    await expect(resolveDeliveryAddress(new URL('http://[64:ff9b:1::a00:1]/x'), true, resolveHost)).resolves.toEqual({ address: '64:ff9b:1::a00:1', family: 6 });
  });
});
