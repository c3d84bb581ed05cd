/**
 * A throwaway certificate authority for a local Temporal cluster with TLS on its frontend: the CA, a server
 * certificate for 127.0.0.1 / localhost / `serverName`, and a client certificate for mutual TLS, all made with
 * the openssl CLI into one folder (EC P-256, valid for a few days). Never for anything but this machine.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface LocalCertificates {
  /** The CA that signed both certificates: the clients' trust root and the server's client CA. */
  caPath: string;
  /** The name the server certificate is issued to (besides 127.0.0.1 and localhost). */
  serverName: string;
  serverCertPath: string;
  serverKeyPath: string;
  clientCertPath: string;
  clientKeyPath: string;
}

const CURVE = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export function makeLocalCertificates(dir: string, serverName = 'temporal.gateway.local'): LocalCertificates {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  openssl('req', '-x509', ...CURVE, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '7', '-subj', '/CN=gateway local Temporal CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  const issue = (name: string, subject: string, extensions: string) => {
    fs.writeFileSync(file(`${name}.ext`), extensions);
    openssl('req', ...CURVE, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', `/CN=${subject}`);
    openssl('x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial',
      '-out', file(`${name}.pem`), '-days', '7', '-extfile', file(`${name}.ext`));
  };
  issue('server', serverName, [
    'basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=serverAuth',
    `subjectAltName=DNS:${serverName},DNS:localhost,IP:127.0.0.1`, '',
  ].join('\n'));
  issue('client', 'gateway', ['basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=clientAuth', ''].join('\n'));
  return {
    caPath: file('ca.pem'), serverName,
    serverCertPath: file('server.pem'), serverKeyPath: file('server.key'),
    clientCertPath: file('client.pem'), clientKeyPath: file('client.key'),
  };
}
