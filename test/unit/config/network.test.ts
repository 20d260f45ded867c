import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfig } from '../../../src/config/load.js';
import { decide, inboundRulesFor } from '../../../src/config/network-rules.js';

const base = `
gateway: { http: { host: 0.0.0.0, port: 80 } }
apis: [{ id: courses, urlSuffix: courses, serviceUrl: "http://10.0.0.4" }]
tls: { port: 443, certificate: a.pem, key: a.key }
`;

const network = (mode: string, inbound: string, extra = '') => `${base}
network:
  mode: ${mode}
  addressSpace: 10.0.0.0/16
  subnets: { resources: 10.0.0.0/24, gateway: 10.0.1.0/24 }
  ${mode === 'external' ? 'publicAddress: 203.0.113.10' : ''}
  privateAddress: 10.0.1.4
  inbound:
${inbound}
${extra}`;

const openRules = `    - { name: http, priority: 200, port: 80, source: Internet, access: allow }
    - { name: https, priority: 210, port: 443, source: Internet, access: allow }
    - { name: management, priority: 220, port: 3443, source: VirtualNetwork, access: allow }`;

function problems(text: string): string[] {
  try {
    parseConfig(text, 'gateway.yaml');
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems.map((p) => `${p.line}:${p.column}: ${p.path}: ${p.message}`);
  }
}

describe('the network section', () => {
  it('accepts the spec sample layout in external mode, with defaults for the management port and sidecars', () => {
    const config = parseConfig(
      network(
        'external',
        openRules,
        '  backends: [{ backend: courses, listen: { host: 10.0.0.4, port: 80 }, target: { host: 127.0.0.1, port: 8081 } }]',
      ),
      'gateway.yaml',
    );
    expect(config.network.managementPort).toBe(3443);
    expect(config.network.backends[0]!.rules).toEqual([
      { name: 'allow-gateway', priority: 299, access: 'allow', source: 'GatewaySubnet' },
      { name: 'deny-any', priority: 300, access: 'deny', source: '*' },
    ]);
  });

  it('refuses an external gateway whose HTTPS port is not open to the Internet, naming the key', () => {
    const rules = `    - { name: http, priority: 200, port: 80, source: Internet, access: allow }
    - { name: management, priority: 220, port: 3443, source: VirtualNetwork, access: allow }`;
    expect(problems(network('external', rules))).toEqual([
      expect.stringMatching(
        /network\.inbound: external mode needs the HTTPS port 443 open to the Internet, but no rule allows it; add an allow rule with port 443 and source Internet$/,
      ),
    ]);
  });

  it('names the deny rule that closes a required port', () => {
    const rules = `    - { name: block-http, priority: 100, port: 80, source: "*", access: deny }
${openRules}`;
    expect(problems(network('external', rules))).toEqual([
      expect.stringMatching(
        /network\.inbound\[0\]: .*HTTP port 80 .* rule "block-http" \(priority 100\) denies it/,
      ),
    ]);
  });

  it('refuses a management port opened to the Internet by mistake (any source or the Internet tag)', () => {
    for (const source of ['"*"', 'Internet', '0.0.0.0/0']) {
      const rules = openRules.replace('source: VirtualNetwork', `source: ${source}`);
      expect(problems(network('external', rules))).toEqual([
        expect.stringMatching(
          /network\.inbound\[2\]: rule "management" opens the management port 3443 to the Internet/,
        ),
      ]);
    }
    // An administrator's own prefix is fine.
    expect(
      problems(network('external', openRules.replace('source: VirtualNetwork', 'source: 198.51.100.0/24'))),
    ).toEqual([]);
  });

  it('refuses a management port closed to every source', () => {
    const rules = `${openRules.replace('access: allow }\n', 'access: allow }\n').split('\n').slice(0, 2).join('\n')}
    - { name: no-management, priority: 120, port: 3443, source: "*", access: deny }`;
    expect(problems(network('external', rules))).toEqual([
      expect.stringMatching(/network\.inbound: the management port 3443 is closed to every source/),
    ]);
  });

  it('checks internal mode against the virtual network and refuses a public address there', () => {
    const vnet = openRules.replaceAll('source: Internet', 'source: VirtualNetwork');
    expect(problems(network('internal', vnet))).toEqual([]);
    // Without rules the security group's default (allow from the virtual network) keeps the ports open inside.
    expect(problems(network('internal', '    []'.replace('    []', '      []')))).toEqual([]);
    expect(problems(`${network('internal', vnet)}  publicAddress: 203.0.113.10\n`)).toEqual([
      expect.stringMatching(/network\.publicAddress: internal mode binds only private addresses/),
    ]);
  });

  it('checks the layout: subnets inside the address space, apart, and the addresses in their places', () => {
    const text = `${base}
network:
  mode: external
  addressSpace: 10.0.0.0/16
  subnets: { resources: 10.0.0.0/24, gateway: 10.1.1.0/24 }
  publicAddress: 10.0.0.9
  privateAddress: 10.0.0.4
  inbound: []
  backends: [{ backend: nobody, listen: { host: 10.0.1.4, port: 80 }, target: { host: 127.0.0.1, port: 1 } }]
`;
    const found = problems(text);
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /network\.subnets\.gateway: 10\.1\.1\.0\/24 is outside the address space 10\.0\.0\.0\/16/,
        ),
        expect.stringMatching(/network\.publicAddress: 10\.0\.0\.9 is inside the address space/),
        expect.stringMatching(
          /network\.privateAddress: 10\.0\.0\.4 is not in the gateway subnet 10\.1\.1\.0\/24/,
        ),
        expect.stringMatching(
          /network\.backends\[0\]\.backend: no API or backend with id "nobody" \(known: courses\)/,
        ),
      ]),
    );
  });

  it('requires the addresses of the mode, unique priorities and valid sources', () => {
    expect(problems(`${base}\nnetwork: { mode: external }\n`)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/network\.addressSpace: is required in external mode/),
        expect.stringMatching(/network\.publicAddress: is required in external mode/),
      ]),
    );
    const clash = `${openRules}
    - { name: again, priority: 200, port: 80, source: VirtualNetwork, access: allow }
    - { name: odd, priority: 130, port: 80, source: "the internet", access: allow }`;
    expect(problems(network('external', clash))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /network\.inbound\[3\]\.priority: priority 200 is already used by network\.inbound\[0\]/,
        ),
        expect.stringMatching(
          /network\.inbound\[4\]\.source: must be an address, an address prefix or one of/,
        ),
      ]),
    );
  });

  it('checks tls: certificate and key together, backend certificates from the store', () => {
    const text = `gateway: { http: { port: 8080 } }
apis: [{ id: courses, urlSuffix: courses, serviceUrl: "https://10.0.0.4" }]
tls:
  certificate: a.pem
  backends: { courses: { certificateId: missing } }
`;
    expect(problems(text)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/tls\.key: certificate and key go together/),
        expect.stringMatching(
          /tls\.backends\.courses\.certificateId: no certificate "missing" in tls\.certificates/,
        ),
      ]),
    );
  });
});

describe('rule evaluation', () => {
  const config = parseConfig(
    network(
      'external',
      `${openRules}
    - { name: admin, priority: 105, port: 3443, source: 198.51.100.7, access: allow }
    - { name: block-bad, priority: 100, port: "*", source: 10.0.0.66, access: deny }`,
    ),
    'gateway.yaml',
  );

  it('takes the first matching rule by priority, then the security group defaults', () => {
    const http = inboundRulesFor(config.network, 80);
    expect(http.map((rule) => rule.name)).toEqual([
      'block-bad',
      'http',
      'AllowVnetInBound',
      'DenyAllInBound',
    ]);
    expect(decide(http, '203.0.113.99')?.name).toBe('http');
    expect(decide(http, '10.0.0.66')?.access).toBe('deny');
    expect(decide(http, '10.0.0.5')?.name).toBe('AllowVnetInBound');
    const management = inboundRulesFor(config.network, 3443);
    expect(decide(management, '198.51.100.7')?.name).toBe('admin');
    expect(decide(management, '203.0.113.99')?.name).toBe('DenyAllInBound');
    expect(decide(management, '10.0.1.9')?.name).toBe('management');
  });
});
