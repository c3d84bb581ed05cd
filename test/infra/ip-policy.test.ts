import { expect } from 'chai';
import { isPublicAddress } from '../../infra/ip-policy';

describe('isPublicAddress', () => {
  it('refuses loopback, private, shared, link-local, multicast, broadcast, unspecified and reserved IPv4', () => {
    for (const address of [
      '127.0.0.1', '127.255.255.254', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '100.64.0.1',
      '169.254.169.254', '169.254.0.1', '224.0.0.1', '239.255.255.250', '255.255.255.255', '0.0.0.0', '0.1.2.3', '240.0.0.1',
      '192.0.2.10', '198.51.100.7', '203.0.113.9', '198.18.0.1', '192.0.0.8',
    ]) expect(isPublicAddress(address), address).to.equal(false);
  });

  it('allows public IPv4 just outside those ranges', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '11.0.0.1', '223.255.255.254', '169.253.255.255']) {
      expect(isPublicAddress(address), address).to.equal(true);
    }
  });

  it('refuses non-global IPv6 and IPv6 forms that embed a refused IPv4 address', () => {
    for (const address of [
      '::1', '::', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd12:3456::1', 'ff02::1', '2001:db8::1', '::ffff:127.0.0.1', '::ffff:7f00:1',
      '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::a00:1', '2002:a00:1::1', '::127.0.0.1', '2001::1', 'not-an-ip', '',
    ]) expect(isPublicAddress(address), address).to.equal(false);
  });

  it('allows global IPv6 and mapped public IPv4', () => {
    for (const address of ['2606:4700:4700::1111', '2a00:1450:4001:81c::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) {
      expect(isPublicAddress(address), address).to.equal(true);
    }
  });
});
